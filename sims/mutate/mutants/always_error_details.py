"""Every failure comes with an error object."""

from acp_lifecycle.sims.mutate.core import Mutant, filter_steps

MUTANT = Mutant(
    "always-error-details",
    "every failure comes with an error object (a choice the spec allows, taken away)",
    ("RFD-ERROR-OPTIONAL",),
    "sometimes_error_idle_without_details",
    "failures",
    patches=(filter_steps(lambda s, step: not ("no-details" in step.action)),),
    kind="choice",
)
