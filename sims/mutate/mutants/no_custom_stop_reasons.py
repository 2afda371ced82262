"""The agent never ends work with a custom stop reason."""

from acp_lifecycle.sims.mutate.core import Mutant, filter_steps

MUTANT = Mutant(
    "no-custom-stop-reasons",
    "the agent never ends work with a custom stop reason (a choice the spec allows, taken away)",
    ("S240-STOP-CUSTOM-UNDERSCORE",),
    "sometimes_custom_stop_reason",
    "failures",
    patches=(filter_steps(lambda s, step: not (step.action == ("AgentEndWork", "_custom"))),),
    kind="choice",
)
