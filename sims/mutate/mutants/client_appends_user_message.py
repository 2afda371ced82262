"""A whole user_message is appended to what the client holds, not put in its place."""

from acp_lifecycle.model.state import replace_at
from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _client_receive(s, c, cl, msg, rules):
        if msg[0] == "user_message" and msg[2]:
            for i, (key, content, opt) in enumerate(cl.view):
                if key == msg[1] and not opt:
                    return cl._replace(view=replace_at(cl.view, i, (key, content + msg[2], False)))
        return original(s, c, cl, msg, rules)

    return _client_receive


MUTANT = Mutant(
    "client-appends-user-message",
    "client appends a user_message's content to the message it holds instead of replacing it",
    ("S240-UPSERT-CONTENT-REPLACES",),
    "client_content_matches_agent",
    "lost-response",
    patches=(wrap("clients", "client_receive", _make),),
)
