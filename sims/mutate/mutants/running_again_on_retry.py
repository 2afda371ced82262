"""A failure the work survives is reported by a change of state: idle with the error, then running again."""

from acp_lifecycle.sims.mutate.core import Mutant, broadcast, post


def _fix(pre, step):
    if step.action[0] == "AgentFailAndRetry":
        step = broadcast(step, ("state", "idle", "error", -32000))
        step = broadcast(step, ("state", "running", "", 0))
    return step


MUTANT = Mutant(
    "running-again-on-retry",
    "agent reports a retried request as an error idle and then running again (the work went on)",
    ("RFD-FAIL-CONTINUES-NO-STATE", "RFD-NOTICE-NO-STATE"),
    "state_changes_only_with_work",
    "failures",
    patches=(post("agent", "agent_faults", _fix),),
)
