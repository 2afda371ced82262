"""A permission answer that arrives after session/cancel resumes the work."""

from acp_lifecycle.model.machines import FOREGROUND
from acp_lifecycle.sims.mutate.core import Mutant, broadcast, post, with_agent


def _fix(pre, step):
    if step.action[0] == "AgentReceive" and step.action[2] == "perm_ans":
        a = step.state.agent
        if a.work is not None and a.work.cancelling and a.fg == "requires_action":
            step = broadcast(step, ("state", "running", "", 0))
            a = a._replace(fg=FOREGROUND[(a.fg, "unblock")])
            step = with_agent(step, a)
    return step


MUTANT = Mutant(
    "late-answer-resumes-work",
    "agent uses a permission answer that arrives after session/cancel to resume the work",
    ("S240-STATE-IGNORE-LATE-RESPONSES", "S240-CANCEL-IGNORE-LATE-ANSWERS", "S240-CANCEL-PERM-STOP-WAITING"),
    "late_answer_ignored",
    "permission",
    patches=(post("agent", "agent_receive", _fix),),
)
