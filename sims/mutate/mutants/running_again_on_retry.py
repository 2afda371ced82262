"""A failure the work survives is reported by a notice and a running state_update."""

from acp_lifecycle.sims.mutate.core import Mutant, broadcast, post


def _fix(pre, step):
    if step.action[0] == "AgentFailAndRetry":
        step = broadcast(step, ("state", "running", "", 0))
    return step


MUTANT = Mutant(
    "running-again-on-retry",
    "agent reports a retried request with a notice and another state_update running",
    ("RFD-FAIL-CONTINUES-NO-STATE", "RFD-NOTICE-NO-STATE"),
    "state_changes_only_with_work",
    "failures",
    patches=(post("agent", "_agent_faults", _fix),),
)
