"""A permission request the agent cancelled is never answered."""

from acp_lifecycle.sims.mutate.core import Mutant, post


def _fix(pre, step):
    if step.action[0] == "ClientAnswerPermission":
        c, pid = step.action[1], step.action[2]
        if (pid, "cancelled") in pre.clients[c].perms:
            return None  # the dialog was closed; no response is sent
    return step


MUTANT = Mutant(
    "client-never-answers-cancelled-permission",
    "client closes the permission dialog on $/cancel_request and sends no response",
    ("S240-CANCELREQ-STILL-RESPOND",),
    "cancelled_request_still_answered",
    "permission",
    patches=(post("clients", "clients", _fix),),
)
