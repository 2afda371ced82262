"""A failure clears the pending echoes of the work's messages."""

from acp_lifecycle.sims.mutate.core import Mutant, post, with_agent


def _fix(pre, step):
    if step.action[:2] == ("AgentFailWork", "stops-work"):
        inputs = pre.agent.work.inputs
        a = step.state.agent
        conv = tuple(m._replace(owed=0) if m.mid in inputs else m for m in a.conv)
        step = with_agent(step, a._replace(conv=conv))
    return step


MUTANT = Mutant(
    "echo-dropped-on-failure",
    "agent drops the not-yet-sent echo of an inserted message when its work fails",
    ("RFD-FAIL-NO-UNDO",),
    "every_inserted_message_echoed",
    "failures",
    patches=(post("agent", "agent_faults", _fix),),
)
