"""A permission request the agent cancelled is still answered with the user's choice."""

from acp_lifecycle.sims.mutate.core import Mutant, post


def _fix(pre, step):
    if step.action[0] == "ClientAnswerPermission":
        c = step.action[1]
        up = step.state.up[c]
        if up and up[-1][0] == "perm_ans" and up[-1][2] == "cancelled":
            up = up[:-1] + ((up[-1][0], up[-1][1], "selected"),)
            step = step._replace(state=step.state._replace(up=step.state.up[:c] + (up,) + step.state.up[c + 1:]))
    return step


MUTANT = Mutant(
    "client-selects-cancelled-permission",
    "client answers a permission request the agent cancelled with the option the user picked",
    ("S240-PERM-CLIENT-ANSWERS-CANCELLED",),
    "cancelled_permission_answered_cancelled",
    "permission",
    patches=(post("clients", "clients", _fix),),
)
