"""Replay by chunks starts with a metadata-only user_message instead of content []."""

from acp_lifecycle.sims.mutate.core import Mutant, post, with_sent


def _fix(pre, step):
    if step.action[0] == "AgentResume" and step.action[2] == "chunks":
        step = with_sent(pre, step, lambda c, m: [m[:2] + (None,) + m[3:]] if m[0] == "user_message" and m[2] == () else [m])
    return step


MUTANT = Mutant(
    "metadata-as-replay-reset",
    "agent opens a chunked replay with a user_message without content, not content: []",
    ("RFD-METADATA-NOT-RESET", "RFD-REPLAY-CHUNK-RESET"),
    "chunked_replay_resets_first",
    "lost-response",
    patches=(post("agent", "agent_receive", _fix),),
)
