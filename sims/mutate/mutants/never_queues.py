"""The agent never leaves a prompt inserted while busy for later work."""

from acp_lifecycle.sims.mutate.core import Mutant, filter_steps

MUTANT = Mutant(
    "never-queues",
    "the agent never leaves a prompt inserted while busy for later work (a choice the spec allows, taken away)",
    ("RFD-QUEUE-UNSPECIFIED",),
    "sometimes_queued_insert",
    "cancel-race",
    patches=(filter_steps(lambda s, step: not ("queued" in step.action)),),
    kind="choice",
)
