"""The success response carries no messageId (the v2 shape before PR #255)."""

from acp_lifecycle.sims.mutate.core import Mutant, wrap


def _make(original):
    def _answer(a, idx, o, answer, rules, wire=None):
        if answer[0] == "ok":
            answer = ("ok", 0)
        return original(a, idx, o, answer, rules, wire)

    return _answer


MUTANT = Mutant(
    "response-without-message-id",
    "agent answers session/prompt with an empty result, no messageId",
    ("RFD-INSERT-RESPONSE-ID", "S240-PROMPT-RETURN-ID"),
    "success_carries_message_id",
    "tiny",
    patches=(wrap("agent", "answer", _make),),
    source="the v2 draft's PromptResponse {} (agent-client-protocol PR #1344)",
)
