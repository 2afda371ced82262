"""A partial-order reduction: expand one client's steps where they commute with everything else.

Ample sets (Peled; Clarke, Grumberg and Peled, *Model Checking*, ch. 10), chosen per state
from what the steps themselves do, not from a list of actions:

* **the candidates**: for each client ``c``, every enabled step labelled with ``c`` (its
  deliveries, submissions, cancels, answers, resumes, a lost connection).
* **local** (what the step writes, read off the states): a candidate may change only client
  ``c``'s own state, append to its ``up`` channel, take the head of its ``down`` channel, and
  its own part of the judges' memory (``System.seen``, per connection); it emits nothing.
  A step that touches the agent, the budgets (``used``), another client or another
  connection's judge memory (a judge of the whole session) is not local, and a client with
  such a step enabled is not reduced.
* **independent** (C1): every enabled step of the others leaves client ``c``, its judge
  memory and the ends of its channels the candidates use alone (the agent may append to
  ``c``'s ``down`` channel and take the head of its ``up`` channel: FIFO ends that commute).
* **invisible** (C2), derived from what the properties read by evaluating them: no step or
  sometimes property fires on a candidate, no judge finds anything in it, and every always
  and eventually property has the same truth before and after it.
* **the cycle proviso** (C3, in its breadth-first form): every successor through the ample
  set is new (not at the current depth or before). Every cycle of the reduced graph then
  passes through a fully expanded state, which keeps the *eventually* verdicts.

What is not derived above is checked (``Reduction.sample``): on every ``SAMPLE``-th reduced
state (every one in the tests) the steps put off are run from the ample step's successor
too; each must exist there, lead to the state the two steps lead to in the other order, and
give every step and sometimes property and judge the same verdict. A failure raises
``PorBroken``; the search starts again without the reduction and says why, as it does when a
step breaks what the symmetry reduction assumes.
"""

from __future__ import annotations

__all__ = ["PorBroken", "Reduction", "SAMPLE"]

#: one reduced state in SAMPLE is checked against the full successors
SAMPLE = 64


class PorBroken(RuntimeError):
    """A step the reduction put off does not commute with the ample step, or a property sees it."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _client_of(step) -> int | None:
    a = step.action
    if len(a) > 1 and type(a[1]) is int and (a[0].startswith("Client") or a[0] == "ConnectionLost"):
        return a[1]
    return None


def _chan(old: tuple, new: tuple) -> str:
    """How a channel changed: "" (not), "append" (one message at the end), "pop" (the head taken), "other"."""
    if new is old or new == old:
        return ""
    if len(new) == len(old) + 1 and new[: len(old)] == old:
        return "append"
    if len(new) + 1 == len(old) and new == old[1:]:
        return "pop"
    return "other"


def writes(s, n) -> dict:
    """What a step from ``s`` to ``n`` changed: {("client", i): True, ("up", i): how, ("seen", i): True,
    ("agent",): True, ("used",): True}."""
    w: dict = {}
    if n.agent is not s.agent and n.agent != s.agent:
        w[("agent",)] = True
    if n.used is not s.used and n.used != s.used:
        w[("used",)] = True
    for i, (a, b) in enumerate(zip(s.clients, n.clients)):
        if a is not b and a != b:
            w[("client", i)] = True
    for name in ("up", "down"):
        for i, (a, b) in enumerate(zip(getattr(s, name), getattr(n, name))):
            how = _chan(a, b)
            if how:
                w[(name, i)] = how
    if n.seen is not s.seen and n.seen != s.seen:
        for per_old, per_new in zip(s.seen, n.seen):
            if per_old is per_new:
                continue
            for i, (a, b) in enumerate(zip(per_old, per_new)):
                if a is not b and a != b:
                    w[("seen", i)] = True
    return w


def _local(w: dict, c: int) -> bool:
    for k, how in w.items():
        if k[0] == "client" or k[0] == "seen":
            if k[1] != c:
                return False
        elif k[0] == "up":
            if k[1] != c or how != "append":
                return False
        elif k[0] == "down":
            if k[1] != c or how != "pop":
                return False
        else:
            return False
    return True


def _leaves_alone(w: dict, c: int, mine: dict) -> bool:
    """Whether a step of another actor, writing ``w``, commutes with client ``c``'s steps writing ``mine``."""
    for k, how in w.items():
        if len(k) < 2 or k[1] != c:
            continue
        if k[0] == "client":
            return False
        if k[0] == "seen" and ("seen", c) in mine:
            return False
        if k[0] == "down" and how != "append":
            return False
        if k[0] == "up" and how != "pop":
            return False
    return True


class Reduction:
    """Ample sets for one shard's search (``Shard.expand`` asks ``ample`` for each state)."""

    def __init__(self, checks, next_steps, sample: int = SAMPLE):
        self.checks = checks
        self.next_steps = next_steps
        self.sample = sample
        self.reduced = 0  # states expanded with an ample set
        self.full = 0  # states expanded fully
        self.skipped = 0  # steps put off

    def ample(self, s, succ: list, is_new) -> list:
        """The steps to explore from ``s``: an ample set, or ``succ`` whole.

        ``is_new(steps)``: whether every step's target is a new state (the cycle proviso)."""
        if len(succ) < 2:
            self.full += 1
            return succ
        ws = [writes(s, st.state) for st in succ]
        owner = [_client_of(st) for st in succ]
        for c in sorted({o for o in owner if o is not None}):
            mine = [k for k, o in enumerate(owner) if o == c]
            if len(mine) == len(succ):
                break
            if not all(_local(ws[k], c) and not succ[k].emitted for k in mine):
                continue
            union: dict = {}
            for k in mine:
                union.update(ws[k])
            if not all(_leaves_alone(ws[k], c, union) for k, o in enumerate(owner) if o != c):
                continue
            steps = [succ[k] for k in mine]
            if not all(self._invisible(s, st) for st in steps):
                continue
            if not is_new(steps):
                continue
            self.reduced += 1
            self.skipped += len(succ) - len(steps)
            if self.sample and self.reduced % self.sample == 1 % self.sample:
                self.check(s, steps[0], [succ[k] for k, o in enumerate(owner) if o != c])
            return steps
        self.full += 1
        return succ

    def _invisible(self, s, step) -> bool:
        if step.found:
            return False
        for p in self.checks.for_step(step):
            if p.check(s, step):
                return False
        n = step.state
        for p in self.checks.always:
            if bool(p.check(s)) != bool(p.check(n)):
                return False
        for p in self.checks.eventually:
            if bool(p.check(s)) != bool(p.check(n)):
                return False
        return True

    def check(self, s, t, others: list) -> None:
        """Raise ``PorBroken`` unless each step put off commutes with ``t`` and is judged alike after it."""
        after = {}
        for b in self.next_steps(t.state):
            after.setdefault(b.action, []).append(b)
        tw = writes(s, t.state)
        for b in others:
            expect = _apply(b.state, t.state, tw)
            match = [x for x in after.get(b.action, ()) if x.state == expect and x.emitted == b.emitted]
            if not match:
                raise PorBroken(f"{b.action} does not commute with {t.action}")
            x = match[0]
            if set(x.found) != set(b.found):
                raise PorBroken(f"the judges find otherwise in {b.action} after {t.action}")
            for p in self.checks.stepwise:
                if bool(p.check(s, b)) != bool(p.check(t.state, x)):
                    raise PorBroken(f"{p.id} judges {b.action} otherwise after {t.action}")


def _apply(b_state, t_state, tw: dict):
    """``b_state`` with the client's parts that ``t`` wrote (``tw``) as ``t`` left them."""
    clients, up, down, seen = list(b_state.clients), list(b_state.up), list(b_state.down), None
    for k, how in tw.items():
        i = k[1]
        if k[0] == "client":
            clients[i] = t_state.clients[i]
        elif k[0] == "up":
            up[i] = up[i] + t_state.up[i][-1:]
        elif k[0] == "down":
            down[i] = down[i][1:]
        elif k[0] == "seen":
            seen = [list(per) for per in (seen or b_state.seen)]
            for j, per in enumerate(t_state.seen):
                seen[j][i] = per[i]
    out = b_state._replace(clients=tuple(clients), up=tuple(up), down=tuple(down))
    if seen is not None:
        out = out._replace(seen=tuple(tuple(per) for per in seen))
    return out
