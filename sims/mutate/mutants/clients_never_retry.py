"""Clients never submit again a prompt whose response was lost."""

from acp_lifecycle.sims.mutate.core import Mutant, filter_steps

MUTANT = Mutant(
    "clients-never-retry",
    "clients never retry a submission whose response was lost",
    ("RFD-RETRY-NOT-ASSUMED-SAFE", "RFD-RETRY-NEW-MESSAGE", "RFD-OPEN-RETRIES-OUTSIDE", "RFD-RETRY-DISTINCT"),
    "retry_does_not_duplicate",
    "lost-response",
    patches=(filter_steps(lambda s, step: step.action[0] != "ClientRetryPrompt"),),
    rules="rfd",
    kind="limitation",
)
