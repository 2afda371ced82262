"""Work blocks on a permission request and the agent never reports requires_action."""

from acp_lifecycle.sims.mutate.core import Mutant

MUTANT = Mutant(
    "requires-action-unreported",
    "agent sends session/request_permission and leaves the session reported running while the work waits",
    ("S240-STATE-SHOULD-REQUIRES-ACTION", "S240-REQACTION-SHOULD-REPORT"),
    "blocked_work_reported_requires_action",
    "permission",
    changes=(("report_requires_action", False),),
)
