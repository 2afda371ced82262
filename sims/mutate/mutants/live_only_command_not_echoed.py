"""A command handled live-only is never reported as a user message."""

from acp_lifecycle.sims.mutate.core import Mutant, with_agent, wrap


def _make(original):
    def _insert(s, idx, retained, rules, queue=False):
        step = original(s, idx, retained, rules, queue)
        a = step.state.agent
        m = a.conv[-1]
        if m.kind == "command" and not retained:
            a = a._replace(conv=a.conv[:-1] + (m._replace(owed=0),))
            step = with_agent(step, a)
        return step

    return _insert


MUTANT = Mutant(
    "live-only-command-not-echoed",
    "agent runs a locally handled command without reporting its user message (nothing to persist)",
    ("RFD-INSERT-LOCAL-COMMAND",),
    "every_inserted_message_echoed",
    "restart",
    patches=(wrap("agent", "insert", _make),),
)
