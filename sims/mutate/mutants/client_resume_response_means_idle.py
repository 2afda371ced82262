"""The resume response is taken as "the session is idle"."""

from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _client_receive(s, c, cl, msg, rules):
        cl = original(s, c, cl, msg, rules)
        if msg[0] == "resumed":
            cl = cl._replace(fg="idle")
        return cl

    return _client_receive


MUTANT = Mutant(
    "client-resume-response-means-idle",
    "client shows the session idle when the session/resume response arrives",
    ("S240-RESUME-RESPONSE-NOT-IDLE",),
    "resumed_client_sees_current_state",
    "lost-response",
    patches=(wrap("clients", "client_receive", _make),),
)
