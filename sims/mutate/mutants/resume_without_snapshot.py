"""Resume answers without the current state_update."""

from acp_lifecycle.sims.mutate.core import Mutant

MUTANT = Mutant(
    "resume-without-snapshot",
    "agent answers session/resume without sending the current state_update first",
    ("S240-RESUME-STATE-BEFORE-RESPONSE", "S240-STATE-RESUME-SNAPSHOT"),
    "resumed_client_sees_current_state",
    "lost-response",
    changes=(("resume_snapshot", "may"),),
)
