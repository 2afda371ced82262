"""A streamed echo is appended to the client's optimistic copy."""

from acp_lifecycle.model.state import replace_at
from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _client_receive(s, c, cl, msg, rules):
        if msg[0] == "chunk":
            for i, (key, content, opt) in enumerate(cl.view):
                if key == msg[1] and opt:
                    return cl._replace(view=replace_at(cl.view, i, (key, content + (msg[2],), False)))
        return original(s, c, cl, msg, rules)

    return _client_receive


MUTANT = Mutant(
    "client-appends-to-optimistic",
    "client appends the streamed echo to its local copy of the submitted prompt",
    ("RFD-CLIENT-NO-APPEND-OPTIMISTIC",),
    "client_content_matches_agent",
    "tiny",
    patches=(wrap("clients", "client_receive", _make),),
)
