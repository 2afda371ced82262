"""The response is sent when the turn ends (the v1 habit), not at insertion."""

from acp_lifecycle.sims.mutate.core import Mutant

MUTANT = Mutant(
    "respond-after-processing",
    "agent answers session/prompt only once the work that took the prompt has ended",
    ("RFD-INSERT-RESPOND", "S240-PROMPT-RETURN-ID"),
    "answered_before_its_work_ends",
    "tiny",
    changes=(("respond_late", True),),
    source="v1 agents ported to v2",
)
