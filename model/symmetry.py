"""Symmetry reduction: one canonical representative for states that differ only in names.

Two kinds of names in a state carry no meaning the rules read:

* **Clients.** Every client runs the same code from the same initial state,
  and nothing in ``system.py`` treats one client index differently from
  another. Renaming the clients by a permutation (their ``Client`` values,
  their channels, ``Req.cid``, the client in a correlation token, and the bit
  of each client in ``Agent.attached`` and the client masks of a ``Msg``) maps every run to a
  run, and every property is a statement "for every client", so a renamed
  state has the same verdicts.
* **Message IDs**, under the RFD's ID scheme (``Rules.id_scheme ==
  "counter"``, echoes and replays under the same ID): the agent only ever
  makes a fresh ID and compares IDs for equality, so renaming the IDs by a
  bijection (and starting the counter past them) gives a state that behaves
  the same. The seeded bugs that do arithmetic on IDs or reuse them
  (``content``, ``jsonrpc-id``, ``client`` and ``restart-resets`` schemes, an
  echo or replay under another ID) keep their IDs as they are.

Request ids, tool call ids, permission request ids and work serials are
counters that each run assigns in the same order (each client's request ids
count its own requests; tool calls, permissions and pieces of work count up
once per run), so two runs never differ by a renaming of them: nothing to
reduce.

``canonical(s)`` numbers the message IDs in order of first appearance in the
agent's conversation (order of insertion) and then its requests (order of
receipt) -- neither depends on client indices -- and then sorts the clients
by everything that can tell one from another. Two states that differ only by
such renamings get the same representative; a state and its representative
have the same successors up to renaming (``tests/test_symmetry.py`` checks
this step by step, and that every member gives the same verdicts with and
without the reduction). The explorer stores only representatives'
fingerprints; every state it checks and every counterexample it prints is a
concrete state of a real run.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Callable, Final

from .composed import composed
from .composition import Composition, composition
from .config import RFD_RULES, Config, Rules
from .records import replace_fields
from .state import Agent, Msg, Req, Step, System

#: bitmask fields of a conversation message with one bit per client
_MASKS: Final = ("owed", "audience")
if not set(_MASKS) <= set(Msg._fields):  # a renamed field would silently escape the renumbering
    raise ImportError(f"symmetry: Msg has no field {sorted(set(_MASKS) - set(Msg._fields))}")

__all__ = [
    "SymmetryBroken",
    "canonical",
    "canonicalizer",
    "check_commutes",
    "check_fresh_ids",
    "ids_opaque",
    "permute_clients",
    "renumber_ids",
    "renumbers",
]


def ids_opaque(rules: Rules) -> bool:
    """Whether the rules treat message IDs as opaque fresh names (safe to renumber)."""
    return rules.id_scheme == "counter" and rules.echo_same_id and rules.replay_same_id


def canonical(s: System, rules: Rules = RFD_RULES) -> System:
    """The representative of ``s``'s class (``s`` itself when it is one)."""
    return canonicalizer(rules)(s)  # type: ignore[misc]


def canonicalizer(rules: Rules, cfg: Config | None = None) -> Callable[[System], System] | None:
    """``canonical`` for one rule set, with the rule-dependent choice made once.

    With ``cfg``: None when no two states of the configuration can differ only
    in names (one client, at most one message ID), so that the search skips
    the work."""
    rename = ids_opaque(rules)
    comp = composition(rules)
    if cfg is not None:
        ids = cfg.submissions + cfg.retries + cfg.imports + comp.ids(cfg)
        if cfg.clients == 1 and (ids <= 1 or not rename):
            return None

    # Most successors of a state leave its agent as it was (a delivery, a client's step), and a
    # representative's agent needs no renumbering: remember the last few agents that needed none
    # (a state's agent-changing successors come between its others).
    plain: list = [None] * 4

    def canon(s: System) -> System:
        a = s.agent
        if rename and not (a is plain[0] or a is plain[1] or a is plain[2] or a is plain[3]):
            t = _renumber_ids(s, None, comp)
            if t is s:
                plain.pop()
                plain.insert(0, a)
            s = t
        if len(s.clients) > 1:
            s = _sort_clients(s, comp)
        return s

    return canon


# --- message IDs ----------------------------------------------------------------


def renumber_ids(s: System, rules: Rules = RFD_RULES) -> tuple[System, dict[int, int]]:
    """``s`` with its message IDs numbered in order of first appearance, and the
    renaming (old -> new; empty when none was needed). Only where
    ``ids_opaque(rules)``: the trace validator renames its ID bindings with it."""
    mp: dict[int, int] = {}
    out = _renumber_ids(s, mp, composition(rules))
    return out, ({} if out is s or all(k == v for k, v in mp.items()) else mp)


def _renumber_ids(s: System, mp: dict[int, int] | None = None, comp: Composition | None = None) -> System:
    a = s.agent
    if mp is None:
        mp = {}
    same = True
    # conversation order first: under the counter scheme IDs are made in that
    # order unless one was reserved early, so most states need no renaming
    for msg in a.conv:
        m = msg.mid
        if m not in mp:
            mp[m] = n = len(mp) + 1
            same = same and m == n
    for r in a.reqs:
        m = r.mid
        if m and m not in mp:
            mp[m] = n = len(mp) + 1
            same = same and m == n
    for m, _ in a.issued:
        if m not in mp:
            mp[m] = n = len(mp) + 1
            same = same and m == n
    if same:
        w = a.work
        if w is not None and len(w.inputs) > 1 and list(w.inputs) != sorted(w.inputs):
            return s._replace(agent=a._replace(work=w._replace(inputs=tuple(sorted(w.inputs)))))
        return s

    def f(m: int) -> int:
        # 0 means "no ID yet"; an ID only a client holds (none under these
        # rules) still gets a fresh name, so the renaming stays a bijection
        if not m:
            return 0
        n = mp.get(m)
        if n is None:
            mp[m] = n = len(mp) + 1
        return n

    reqs = tuple(
        r._replace(mid=f(r.mid), answers=tuple(("ok", f(x[1])) if x[0] == "ok" else x for x in r.answers))
        if r.mid or r.answers
        else r
        for r in a.reqs
    )
    conv = tuple(m._replace(mid=f(m.mid)) for m in a.conv)
    work = a.work
    if work is not None and work.inputs:
        # the rules ask only whether a message is among the work's inputs:
        # sorted, like the agent's pending IDs
        work = work._replace(inputs=tuple(sorted(f(m) for m in work.inputs)))
    issued = tuple(sorted((f(m), o) for m, o in a.issued))
    pending = tuple(sorted(f(m) for m in a.pending))
    clients = tuple(
        cl._replace(
            view=tuple(sorted((f(k) if k > 0 else k, c, o) for k, c, o in cl.view)),
            subs=tuple(sub._replace(mid=f(sub.mid)) if sub.mid else sub for sub in cl.subs),
        )
        if cl.view or cl.subs
        else cl
        for cl in s.clients
    )
    comp = comp or composition(RFD_RULES)
    ids_at = comp.ids_at
    down = tuple(tuple(_renumber_msg(m, f, ids_at) for m in chan) if chan else chan for chan in s.down)
    up = tuple(tuple(_renumber_msg(m, f, ids_at) for m in chan) if chan else chan for chan in s.up) if s.ext else s.up
    seen = tuple(
        tuple(j.rename(x, f) for x in per) if j.rename is not None else per for j, per in zip(comp.judges.stateful, s.seen)
    )
    ext = comp.rename_ids(s.ext, f) if s.ext else s.ext
    # the counter starts past every ID in use: what it makes next is fresh
    agent = a._replace(reqs=reqs, conv=conv, work=work, issued=issued, pending=pending, next_id=len(mp) + 1)
    return s._replace(agent=agent, clients=clients, up=up, down=down, seen=seen, ext=ext)


def _renumber_msg(m: tuple, f, ids_at: dict) -> tuple:
    at = ids_at.get(m[0])
    if not at:
        return m
    out = list(m)
    for i in at:
        if out[i]:
            out[i] = f(out[i])
    return tuple(out)


# --- clients ----------------------------------------------------------------------


def _sort_clients(s: System, comp: Composition) -> System:
    n = len(s.clients)
    clients, up, down = s.clients, s.up, s.down
    if s.ext:
        # what the proposals keep of each client tells clients apart too
        clients = tuple((cl, comp.per_client(s.ext, c)) for c, cl in enumerate(clients))
    # Most states are told apart by the clients' own values and channels
    # (compared in C); the agent's side decides only between equal ones.
    try:
        if n == 2:  # the common case, without sorting, and what the judges remember only on a tie
            p0, p1 = (clients[0], up[0], down[0]), (clients[1], up[1], down[1])
            if p0 == p1:
                p0, p1 = tuple([per[0] for per in s.seen]), tuple([per[1] for per in s.seen])
            if p0 < p1:
                return s
            if p1 < p0:
                return permute_clients(s, [1, 0], comp)
            ties = True
        else:
            seen = _seen_by_client(s)
            prim = [(clients[c], up[c], down[c], seen[c]) for c in range(n)]
            order = sorted(range(n), key=prim.__getitem__)
            ties = any(prim[order[i]] == prim[order[i + 1]] for i in range(n - 1))
    except TypeError:
        ties = True
    if ties:
        a = s.agent
        conv, reqs = a.conv, a.reqs
        seen = _seen_by_client(s)
        sigs = [
            (
                clients[c],
                up[c],
                down[c],
                seen[c],
                a.attached >> c & 1,
                tuple(m[i] >> c & 1 for m in conv for i in _MASK_AT),
                tuple(i for i, r in enumerate(reqs) if r.cid == c),
            )
            for c in range(n)
        ]
        try:
            order = sorted(range(n), key=sigs.__getitem__)
        except TypeError:  # values of different types at one place: compare their text
            order = sorted(range(n), key=lambda c: repr(sigs[c]))
    if all(o == i for i, o in enumerate(order)):
        return s
    return permute_clients(s, order, comp)


def _seen_by_client(s: System) -> tuple:
    """Per client: what the judges remember of its connection."""
    return tuple(zip(*s.seen)) if s.seen else ((),) * len(s.clients)


def permute_clients(s: System, order: list[int], comp: Composition | None = None) -> System:
    """The state with client ``order[i]`` renamed to ``i`` everywhere it is named (what the proposals of
    ``comp`` keep included)."""
    inv, pick, bits = _renaming(tuple(order))
    a = s.agent
    reqs = tuple([r._replace(cid=inv[r.cid]) for r in a.reqs])
    conv = tuple([_permute_masks(m, bits) for m in a.conv])
    agent = a._replace(reqs=reqs, conv=conv, attached=bits(a.attached))

    def token(m: tuple) -> tuple:
        if m[0] == "user_message" and m[4] is not None:
            return m[:4] + ((inv[m[4][0]],) + tuple(m[4][1:]),) + m[5:]
        return m

    return s._replace(
        agent=agent,
        clients=pick(s.clients),
        up=pick(s.up),
        down=tuple([tuple([token(m) for m in chan]) if chan else chan for chan in pick(s.down)]),
        seen=tuple(map(pick, s.seen)),
        ext=(comp or composition(RFD_RULES)).permute(s.ext, inv, pick) if s.ext else s.ext,
    )


#: Msg's client bitmasks by position
_MASK_AT: Final = tuple(Msg._fields.index(f) for f in _MASKS)


def _permute_masks(m: Msg, bits) -> Msg:
    return replace_fields(m, _MASKS, tuple([bits(m[i]) for i in _MASK_AT]))  # type: ignore[return-value]


def _renaming(order: tuple) -> tuple:
    """For a renaming of the clients (client ``order[i]`` becomes ``i``): the new index of each
    client, a function taking a per-client tuple to its new order (in C: ``itemgetter``), and one
    taking a client bitmask to its new bits (a table for the masks of these clients)."""
    got = _RENAMINGS.get(order)
    if got is None:
        n = len(order)
        inv = [0] * n
        for new, old in enumerate(order):
            inv[old] = new

        def renamed(mask: int) -> int:
            out = 0
            for old in range(n):
                if mask >> old & 1:
                    out |= 1 << inv[old]
            return out

        table = [renamed(mask) for mask in range(1 << n)]

        def bits(mask: int) -> int:
            return table[mask] if 0 <= mask < len(table) else renamed(mask)

        pick = itemgetter(*order) if n > 1 else lambda t: (t[order[0]],)
        got = _RENAMINGS[order] = (inv, pick, bits)
    return got


_RENAMINGS: Final[dict[tuple, tuple]] = {}


# --- the reduction's assumptions, checked on the run ---------------------------------


class SymmetryBroken(Exception):
    """A step of the model does not commute with the renaming the reduction applies.

    The search stores one representative per class only because every state of a
    class has the same successors up to renaming. A faulty agent can break that
    (a counter that starts again after a restart, an ID computed from another, a
    client treated apart): then the representative is not a faithful stand-in,
    and the search explores again without the reduction."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _ids(s: System) -> set:
    """Every message ID the agent's state holds."""
    return set(_held(s.agent))


def _held(a: Agent):
    """The message IDs the agent ``a`` holds, one at a time (one may come twice): its conversation's, its
    requests' (0: none yet) and those it ever issued."""
    for msg in a.conv:
        yield msg.mid
    for r in a.reqs:
        if r.mid:
            yield r.mid
    for m, _ in a.issued:
        yield m


def _ids_before(pre: System) -> set:
    """``_ids(pre)``, kept for the last state: its successors are checked one after another."""
    if pre.agent is not _before[0]:
        _before[:] = [pre.agent, _ids(pre)]
    return _before[1]


_before: Final[list] = [None, set()]


def _fresh(a: Agent, b: Agent, before: set) -> bool:
    """Whether every ID of ``b`` (the agent after a step) that ``a`` (before it) did not hold comes from
    the counter: ``_ids(after) - before`` within it, read off the parts of ``b`` the step changed (a
    part it kept holds only IDs of ``before``) without building the set of every ID after the step."""
    lo, hi = a.next_id, b.next_id
    if b.conv is not a.conv:
        for msg in b.conv:
            if msg.mid not in before and not lo <= msg.mid < hi:
                return False
    if b.reqs is not a.reqs:
        for r in b.reqs:
            if r.mid and r.mid not in before and not lo <= r.mid < hi:
                return False
    if b.issued is not a.issued:
        for m, _ in b.issued:
            if m not in before and not lo <= m < hi:
                return False
    return True


def check_fresh_ids(pre: System, step: Step, rules: Rules = RFD_RULES) -> str:
    """Why ``step`` breaks the fresh-ID assumption ID renaming rests on ("" when it does not).

    Checked on the concrete successor, before it is renamed: an ID the agent did
    not hold before the step must come from its counter (at or past the counter
    before the step and below the counter after it), the counter never goes
    back, and every ID a message of the step carries is one the agent holds."""
    a, b = pre.agent, step.state.agent
    if b.next_id < a.next_id:
        return f"{_label(step)} moved the agent's ID counter back from {a.next_id} to {b.next_id}"
    after = None
    if (b.conv is not a.conv or b.reqs is not a.reqs or b.issued is not a.issued) and not _fresh(a, b, _ids_before(pre)):
        after = _ids(step.state)
        for m in after - _ids_before(pre):
            if not a.next_id <= m < b.next_id:
                return f"{_label(step)} made message ID {m}, which its counter ({a.next_id}) did not give out"
    ids_at = composed(rules).ids_at
    for _, msg in step.emitted:
        for i in ids_at.get(msg[0], ()):
            mid = msg[i]
            if mid and not (mid in after if after is not None else any(m == mid for m in _held(b))):
                return f"{_label(step)} sent message ID {mid}, which no message of the agent holds"
    return ""


def renumbers(s: System, rules: Rules = RFD_RULES) -> bool:
    """Whether the representative of ``s`` renames its message IDs."""
    return _renumber_ids(s, None, composed(rules)) is not s


def check_commutes(concrete: System, rep: System, canon, fingerprint, next_steps) -> str:
    """Why ``concrete`` and its representative ``rep`` are no stand-ins for each other ("" when they are).

    One step of the simulation the reduction rests on: the successors of both,
    each brought to its representative, are the same set."""
    a = {fingerprint(canon(t.state)) for t in next_steps(concrete)}
    b = {fingerprint(canon(t.state)) for t in next_steps(rep)}
    if a != b:
        return (f"a state and its representative (clients or message IDs renamed) have different successors "
                f"({len(a - b)} of {len(a)} not matched)")
    return ""


def _label(step) -> str:
    name, *args = step.action
    return f"{name}({', '.join(repr(x) for x in args)})"
