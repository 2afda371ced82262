"""Background activity while idle is reported with a running state_update."""

from acp_lifecycle.sims.mutate.core import Mutant, broadcast, post


def _fix(pre, step):
    if step.action[0] == "AgentFailInBackground":
        step = broadcast(step, ("state", "running", "", 0))
    return step


MUTANT = Mutant(
    "running-for-background-activity",
    "agent reports background activity while idle (a detached task's failure) as running",
    ("S240-STATE-BACKGROUND-NO-CHANGE",),
    "state_changes_only_with_work",
    "failures",
    patches=(post("agent", "agent_faults", _fix),),
)
