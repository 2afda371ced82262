"""The user message is echoed only to the client that submitted it."""

from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _echo(s, i, m, mode, rules):
        if m.origin >= 0:
            m = m._replace(owed=m.owed & (1 << s.agent.reqs[m.origin].cid))
        return original(s, i, m, mode, rules)

    return _echo


MUTANT = Mutant(
    "echo-only-to-submitter",
    "agent echoes an inserted user message only to the submitting client",
    ("RFD-ECHO-EVERY", "S240-RESPONSE-ECHO-LIVE"),
    "every_inserted_message_echoed",
    "multi-client",
    patches=(wrap("agent", "echo", _make),),
)
