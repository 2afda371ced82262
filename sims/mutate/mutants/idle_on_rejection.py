"""Rejecting a prompt is followed by an idle state_update that ends a turn (stopReason end_turn).

(An idle without a stop reason sent while the session is idle anyway would be a repeated
snapshot, which 2.4.0 allows: "Repeated snapshots are idempotent".)"""

from acp_lifecycle.sims.mutate.core import Mutant, broadcast, post


def _fix(pre, step):
    if step.action[0] == "AgentRejectPrompt":
        step = broadcast(step, ("state", "idle", "end_turn", 0))
    return step


MUTANT = Mutant(
    "idle-on-rejection",
    "agent sends idle end_turn after answering a prompt with an error (\"the prompt is over\")",
    ("S240-STATE-REJECT-NOT-END", "S240-PROMPT-REJECT-NOT-IDLE"),
    "state_changes_only_with_work",
    "tiny",
    patches=(post("agent", "agent_prompts", _fix),),
    source="vercel-labs/fx#993 (busy prompts rejected)",
)
