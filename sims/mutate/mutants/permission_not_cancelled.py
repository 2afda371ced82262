"""session/cancel leaves the pending permission request open (no $/cancel_request)."""

from acp_lifecycle.sims.mutate.core import Mutant

MUTANT = Mutant(
    "permission-not-cancelled",
    "agent stops the cancelled work but never cancels its pending permission request",
    ("S240-CANCEL-PERM-CANCEL-REQUEST", "S240-PERM-AGENT-CANCELS"),
    "cancelled_permission_requests_cancelled",
    "permission",
    changes=(("cancel_permissions", False),),
)
