"""An idle without a stop reason is not taken as the end of the work."""

from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _client_receive(s, c, cl, msg, rules):
        if msg[0] == "state" and msg[1] == "idle" and not msg[2]:
            return cl
        return original(s, c, cl, msg, rules)

    return _client_receive


MUTANT = Mutant(
    "client-ignores-idle-without-stop-reason",
    "client waits for an idle with a stop reason and ignores one without",
    ("S240-STOP-OMITTED-NOT-REPORTED",),
    "client_sees_current_state",
    "failures",
    patches=(wrap("clients", "client_receive", _make),),
    rules="rfd",  # under rfd+2.4.0 only a lenient agent omits the stop reason
)
