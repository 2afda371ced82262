"""A replayed command gets a new ID (commands are re-created from history)."""

from acp_lifecycle.sims.mutate.core import Mutant, post, with_sent


def _fix(pre, step):
    if step.action[0] == "AgentResume" and step.action[2] != "none":
        commands = {m.mid for m in pre.agent.conv if m.kind == "command"}
        step = with_sent(pre, step, lambda c, m: [m[:1] + (m[1] + 50,) + m[2:]] if m[0] in ("user_message", "chunk") and m[1] in commands else [m])
    return step


MUTANT = Mutant(
    "command-replayed-under-new-id",
    "agent replays a retained command under a new ID",
    ("RFD-COMMAND-REPLAY-SAME-ID",),
    "replay_preserves_ids",
    "restart",
    patches=(post("agent", "agent_receive", _fix),),
)
