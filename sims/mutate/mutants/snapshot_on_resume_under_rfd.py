"""The RFD's agent always sends the current state on resume (what 2.4.0 made a MUST)."""

from acp_lifecycle.sims.mutate.core import Mutant

MUTANT = Mutant(
    "snapshot-on-resume-under-rfd",
    "the current state_update after replay and before the resume response, under the RFD",
    ("RFD-OPEN-RESUME-STATE",),
    "resumed_client_sees_current_state",
    "lost-response",
    changes=(("resume_snapshot", "must"),),
    rules="rfd",
    kind="limitation",
)
