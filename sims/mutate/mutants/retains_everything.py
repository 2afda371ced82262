"""The agent retains every message it inserts."""

from acp_lifecycle.sims.mutate.core import Mutant, filter_steps

MUTANT = Mutant(
    "retains-everything",
    "the agent retains every message it inserts (a choice the spec allows, taken away)",
    ("RFD-RETAIN-NOT-REQUIRED",),
    "sometimes_acknowledged_live_only_not_replayed",
    "lost-response",
    patches=(filter_steps(lambda s, step: not (step.action[0] == "AgentInsert" and step.action[2] == "live-only")),),
    kind="choice",
)
