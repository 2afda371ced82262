"""A metadata-only user_message clears the client's copy."""

from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _client_receive(s, c, cl, msg, rules):
        if msg[0] == "user_message" and msg[2] is None:
            msg = msg[:2] + ((),) + msg[3:]  # "no content" taken as "empty content"
        return original(s, c, cl, msg, rules)

    return _client_receive


MUTANT = Mutant(
    "client-clears-on-metadata",
    "client treats a user_message without content as content: [] and clears the message",
    ("RFD-METADATA-NO-CLEAR", "S240-UPSERT-OMITTED-UNCHANGED"),
    "client_content_matches_agent",
    "fifo",
    patches=(wrap("clients", "client_receive", _make),),
)
