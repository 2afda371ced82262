"""A background failure while idle is reported as an idle with stopReason error."""

from acp_lifecycle.sims.mutate.core import Mutant, broadcast, post, with_agent


def _fix(pre, step):
    if step.action[0] == "AgentFailInBackground":
        step = broadcast(step, ("state", "idle", "error", -32000))
        a = step.state.agent
        step = with_agent(step, a._replace(stop="error"))
    return step


MUTANT = Mutant(
    "background-failure-ends-idle",
    "agent reports a background failure while idle as an idle with stopReason error",
    ("RFD-BACKGROUND-FAILURE-NO-STOP",),
    "error_idle_only_for_failure",
    "failures",
    patches=(post("agent", "agent_faults", _fix),),
)
