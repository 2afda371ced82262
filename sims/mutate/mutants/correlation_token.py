"""Prompts carry a client-generated token that the user message carries back, live and in replay."""

from acp_lifecycle.sims.mutate.core import Mutant

MUTANT = Mutant(
    "correlation-token",
    "a client-generated correlation token on the prompt and its user message (the FAQ's possible addition)",
    ("RFD-LOST-RESPONSE-AMBIGUOUS",),
    "lost_response_recoverable",
    "lost-response",
    changes=(("correlation_token", True),),
    rules="rfd",
    kind="limitation",
)
