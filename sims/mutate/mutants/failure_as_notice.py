"""A failure that ends the work is reported by an error notice, then an idle."""

from acp_lifecycle.sims.mutate.core import Mutant

MUTANT = Mutant(
    "failure-as-notice",
    "agent reports a failure that ends work with an error-severity notice and a plain idle",
    ("RFD-NOTICE-NOT-FATAL", "S240-NOTICE-NOT-RELIED-ON", "RFD-FAIL-ERROR-IDLE", "RFD-FAIL-ANY-WORK",
     "S240-PROMPT-FAILURE-ERROR-STOP"),
    "failed_work_ends_with_error_idle",
    "failures",
    changes=(("failure_report", "notice"),),
)
