"""The error idle never carries the error object, even when the agent has one."""

from acp_lifecycle.sims.mutate.core import Mutant

MUTANT = Mutant(
    "error-details-dropped",
    "agent reports every failure as stopReason error without the error object it has",
    ("RFD-ERROR-DETAILS", "S240-ERROR-DETAILS-SHOULD"),
    "error_idle_carries_details",
    "failures",
    changes=(("error_details", False),),
)
