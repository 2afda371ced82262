"""A locally handled command is answered when it arrives, before it is inserted."""

from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _agent_receive(s, c, rules, out):
        msg = s.up[c][0]
        if msg[0] == "prompt" and msg[2].startswith("/"):
            rules = rules.with_(respond_at="receipt")  # "the command runs at once"
        original(s, c, rules, out)

    return _agent_receive


MUTANT = Mutant(
    "command-answered-at-receipt",
    "agent answers a locally handled command when it receives it, before inserting its user message",
    ("RFD-INSERT-LOCAL-COMMAND",),
    "success_only_after_insertion",
    "restart",
    patches=(wrap("agent", "agent_receive", _make),),
)
