"""After streaming a message, the agent also sends it whole."""

from acp_lifecycle.sims.mutate.core import Mutant, post, with_sent


def _fix(pre, step):
    if step.action[0] == "AgentEcho" and step.action[2] == "chunk":
        step = with_sent(pre, step, lambda c, m: [m, ("user_message", m[1], (m[2],), False, None)] if m[0] == "chunk" else [m])
    return step


MUTANT = Mutant(
    "whole-echo-after-chunk",
    "agent streams the user message by chunk, then sends it whole as well",
    ("RFD-ECHO-EVERY",),
    "client_content_matches_agent",
    "tiny",
    patches=(post("agent", "agent_prompts", _fix),),
    equivalent=(
        "the RFD: \"Alternatively, a full-content user_message update replaces the retained content "
        "directly.\" A whole update after the chunks replaces them with the same content"
    ),
)
