"""A session/cancel stops only the work its sender saw (as if it named the work)."""

from acp_lifecycle.sims.mutate.core import Mutant, post, with_agent


def _fix(pre, step):
    if step.action[0] == "AgentReceive" and step.action[2] == "cancel":
        w = pre.agent.work
        serial = pre.up[step.action[1]][0][1]
        if w is not None and not w.cancelling and w.serial != serial:
            # the cancel names other work: the current work goes on
            step = with_agent(step, step.state.agent._replace(work=w))
    return step


MUTANT = Mutant(
    "cancel-names-its-work",
    "a session/cancel that names the work it cancels (the ghost serial stands for the name)",
    ("RFD-OPEN-CANCEL-RACES",),
    "session_cancel_stops_only_work_it_saw",
    "cancel-race",
    patches=(post("agent", "agent_receive", _fix),),
    rules="rfd",
    kind="limitation",
)
