"""On the response, the client drops its local copy and waits for the echo."""

from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _client_receive(s, c, cl, msg, rules):
        cl = original(s, c, cl, msg, rules)
        if msg[0] == "ok":
            cl = cl._replace(view=tuple(e for e in cl.view if not e[2]))
        return cl

    return _client_receive


MUTANT = Mutant(
    "client-drops-copy-on-response",
    "client removes its optimistic copy when the response arrives, before the echo has",
    ("RFD-CLIENT-TOLERATE-ORDER", "RFD-CLIENT-RECONCILE"),
    "single_canonical_copy",
    "tiny",
    patches=(wrap("clients", "client_receive", _make),),
)
