"""Cancelled work reports no tool call before its idle."""

from acp_lifecycle.sims.mutate.core import Mutant, filter_steps

MUTANT = Mutant(
    "no-updates-after-cancel",
    "cancelled work reports no tool call before its idle (a choice the spec allows, taken away)",
    ("S240-CANCEL-UPDATES-MAY",),
    "sometimes_update_after_cancel",
    "failures",
    patches=(filter_steps(lambda s, step: not (step.action[0] == "AgentToolCall" and s.agent.work is not None and s.agent.work.cancelling)),),
    kind="choice",
)
