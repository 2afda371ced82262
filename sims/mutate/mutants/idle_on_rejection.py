"""Rejecting a prompt is followed by an idle state_update."""

from acp_lifecycle.sims.mutate.core import Mutant, broadcast, post


def _fix(pre, step):
    if step.action[0] == "AgentRejectPrompt":
        step = broadcast(step, ("state", "idle", "", 0))
    return step


MUTANT = Mutant(
    "idle-on-rejection",
    "agent sends idle after answering a prompt with an error (\"the prompt is over\")",
    ("S240-STATE-REJECT-NOT-END", "S240-PROMPT-REJECT-NOT-IDLE"),
    "state_changes_only_with_work",
    "tiny",
    patches=(post("agent", "_agent_prompts", _fix),),
    source="vercel-labs/fx#993 (busy prompts rejected)",
)
