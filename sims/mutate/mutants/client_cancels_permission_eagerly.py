"""A client that sends session/cancel answers its open permission request cancelled at once."""

from acp_lifecycle.sims.mutate.core import Mutant, post


def _fix(pre, step):
    if step.action[0] == "ClientCancelSession":
        c = step.action[1]
        cl = step.state.clients[c]
        answers = tuple(("perm_ans", pid, "cancelled") for pid, st in cl.perms if st == "ignored")
        if answers:
            cl = cl._replace(perms=tuple((p, st) for p, st in cl.perms if st != "ignored"))
            s = step.state
            step = step._replace(state=s._replace(clients=s.clients[:c] + (cl,) + s.clients[c + 1:],
                                                  up=s.up[:c] + (s.up[c] + answers,) + s.up[c + 1:]))
    return step


MUTANT = Mutant(
    "client-cancels-permission-eagerly",
    "client answers its open permission request cancelled as soon as it sends session/cancel",
    ("S240-PERM-CLIENT-MAY-CANCEL",),
    "cancelled_request_still_answered",
    "permission",
    patches=(post("clients", "clients", _fix),),
    equivalent=(
        "2.4.0: \"After sending `session/cancel`, the client MAY also send it without waiting for "
        "`$/cancel_request`, for a request it knows belongs to the cancelled foreground work.\""
    ),
)
