"""Foreground work never runs before the prompt is inserted."""

from acp_lifecycle.sims.mutate.core import Mutant, filter_steps

MUTANT = Mutant(
    "no-hooks",
    "foreground work never runs before the prompt is inserted (a choice the spec allows, taken away)",
    ("S240-STATE-RUNNING-BEFORE-INSERTION",),
    "sometimes_running_before_insertion",
    "cancel-race",
    patches=(filter_steps(lambda s, step: not (step.action[:2] == ("AgentBeginWork", "before-insertion"))),),
    kind="choice",
)
