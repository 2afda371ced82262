"""Work resumes after the permission answer without reporting running."""

from acp_lifecycle.sims.mutate.core import Mutant, post, with_sent


def _fix(pre, step):
    if step.action[0] == "AgentReceive" and step.action[2] == "perm_ans":
        step = with_sent(pre, step, lambda c, m: [] if m[0] == "state" else [m])
    return step


MUTANT = Mutant(
    "silent-unblock",
    "agent goes on after the permission answer without sending state_update running",
    ("S240-REQACTION-THEN-RUNNING", "S240-STATE-RESUME-RUNNING"),
    "client_sees_current_state",
    "permission",
    patches=(post("agent", "agent_receive", _fix),),
)
