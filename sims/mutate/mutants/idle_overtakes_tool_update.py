"""One client gets the idle before the tool call updates it follows (the others get the right order).

The fault as an implementation ships it: updates go out on a per-connection queue, and the idle
takes a faster path (a "state" channel flushed first) on the connection that is busy."""

from acp_lifecycle.sims.mutate.core import Mutant, post


def _fix(pre, step):
    emitted = step.emitted
    kinds = [m[0] for _, m in emitted]
    if "tool" not in kinds or not any(m[0] == "state" and m[1] == "idle" for _, m in emitted):
        return step
    last = max(c for c, _ in emitted)  # the one receiver that gets the wrong order
    mine = [m for c, m in emitted if c == last]
    reordered = [m for m in mine if m[0] == "state"] + [m for m in mine if m[0] != "state"]
    if reordered == mine:
        return step
    it = iter(reordered)
    new = tuple((c, next(it) if c == last else m) for c, m in emitted)
    down = list(step.state.down)
    down[last] = down[last][: len(down[last]) - len(mine)] + tuple(reordered)
    return step._replace(state=step.state._replace(down=tuple(down)), emitted=new)


MUTANT = Mutant(
    "idle-overtakes-tool-update",
    "agent sends one client the idle before the tool call updates of the work it ends",
    ("RFD-IDLE-AFTER-ALL-UPDATES",),
    "no_update_after_idle_of_its_work",
    "failures",
    patches=(post("agent", "agent_faults", _fix), post("agent", "agent_work", _fix)),
)
