"""Composing the proposals a rule set enables with the core: ``Next == CoreNext \\/ ProposalNext``.

``composition(rules)`` gathers, once per rule set, what the proposals of ``Rules.proposals``
add (``model/proposals``): their steps, the messages they take from a client's channel, what a
client does with the messages they send, what they do in a core step (a session/cancel, a lost
connection), their judges beside the core's, their messages' records and where those carry
message IDs. ``system.successors`` asks it; it never names a proposal, and with no proposal it
adds nothing (``NONE``): the core's states are exactly what they were.

A proposal's functions see a state through a ``World`` and make steps with a ``Change``: the
verbs of the spec (a client sends, the agent sends or broadcasts, makes a fresh message ID,
inserts a user message, spends a budget) rather than the fields of the state, so that a
proposal's author needs to know the RFD, not the model's records.
"""

from __future__ import annotations

from . import parts as _parts
from .config import Config, Rules
from .judges import CORE, JudgeSet, Request, Response
from .proposals import PROPOSALS, Message, Proposal, ProposalError, StateSpec, get_proposal, registry
from .state import ACTION_KINDS, AGENT_KINDS, CLIENT_KINDS, IDS_AT, Msg, Step, System, replace_at

__all__ = ["Change", "Composition", "NONE", "World", "composition", "every_judge", "message_of", "rename_value",
           "without_messages",
           "wire_message"]


class World:
    """One state of the composed model as one proposal's actions see it, and the steps they add to ``out``.

    Reading: ``mine`` (the proposal's own state), ``flag``, ``bound``, ``clients``, ``connected``,
    ``attached``, ``agent_state`` (the foreground state the agent last reported: idle, running,
    requires_action), ``working`` (foreground work exists), ``blocked`` (the work waits for a
    permission answer), ``left`` (what is left of a core budget), ``alphabet``. Making a step:
    ``change(label)`` gives a ``Change``, whose ``done()`` adds the step.
    """

    __slots__ = ("s", "cfg", "rules", "proposal", "index", "out")

    def __init__(self, s: System, cfg: Config, rules: Rules, proposal: Proposal, index: int, out: list):
        self.s, self.cfg, self.rules, self.proposal, self.index, self.out = s, cfg, rules, proposal, index, out

    @property
    def mine(self):
        return self.s.ext[self.index]

    def flag(self, name: str):
        return self.rules.flag(name, self.proposal.flag(name).default)

    def bound(self, name: str) -> int:
        return self.cfg.bound(name)

    @property
    def clients(self) -> range:
        return range(len(self.s.clients))

    def connected(self, c: int) -> bool:
        return self.s.clients[c].connected and not self.s.clients[c].resuming

    def attached(self, c: int) -> bool:
        return bool(self.s.agent.attached >> c & 1)

    @property
    def agent_state(self) -> str:
        return self.s.agent.fg

    @property
    def working(self) -> bool:
        return self.s.agent.work is not None

    @property
    def blocked(self) -> bool:
        w = self.s.agent.work
        return w is not None and bool(w.perm) and not w.cancelling

    @property
    def cancelling(self) -> bool:
        """Whether the foreground work was reached by a session/cancel and is ending."""
        w = self.s.agent.work
        return w is not None and w.cancelling

    def left(self, budget: str) -> int:
        """What is left of a core budget of ``Config`` ("cancels", "losses", ...)."""
        return getattr(self.cfg, budget) - getattr(self.s.used, budget)

    @property
    def alphabet(self) -> tuple:
        return self.cfg.alphabet

    @property
    def work_id(self) -> int:
        """Which piece of foreground work runs (0: none): it changes when other work starts."""
        w = self.s.agent.work
        return w.serial if w is not None else 0

    def as_if(self, c: int, msg: tuple, rules=None) -> list[Step]:
        """The core's steps when the agent takes ``msg`` from client ``c`` in place of the proposal's message it
        takes now: a close cancels "as if `session/cancel` was called". Their labels are the core's; relabel.
        ``rules``: read the core's message under other rules (a fault's reading); the world's by default."""
        s = self.s
        rules = rules or self.rules
        fake = s._replace(up=replace_at(s.up, c, (msg,) + s.up[c]))
        out: list[Step] = []
        _parts.of(rules).agent_receive(fake, c, rules, out)
        return out

    def change(self, label: tuple) -> "Change":
        return Change(self, label)

    # --- in a core step (``Proposal.after``) ---------------------------------------------

    def mine_in(self, step: Step):
        """The proposal's state after a core step."""
        return step.state.ext[self.index]

    def with_mine(self, step: Step, value) -> Step:
        """The core step with the proposal's state ``value`` after it."""
        if value == step.state.ext[self.index]:
            return step
        return step._replace(state=step.state._replace(ext=replace_at(step.state.ext, self.index, value)))


class Change:
    """One step a proposal makes from a ``World``'s state: what changes, then ``done()``."""

    __slots__ = ("world", "label", "s", "emitted")

    def __init__(self, world: World, label: tuple):
        self.world, self.label, self.s = world, label, world.s
        self.emitted: list = []

    def set_mine(self, value) -> "Change":
        self.s = self.s._replace(ext=replace_at(self.s.ext, self.world.index, value))
        return self

    def client_sends(self, c: int, msg: tuple) -> "Change":
        """Client ``c`` puts ``msg`` on its channel to the agent."""
        s = self.s
        self.s = s._replace(up=replace_at(s.up, c, s.up[c] + (msg,)))
        return self

    def new_request_id(self, c: int) -> int:
        """Client ``c``'s next JSON-RPC request id (each client counts its own requests)."""
        cl = self.s.clients[c]
        self.s = self.s._replace(clients=replace_at(self.s.clients, c, cl._replace(next_rid=cl.next_rid + 1)))
        return cl.next_rid

    def send(self, c: int, msg: tuple) -> "Change":
        """The agent sends ``msg`` to client ``c``."""
        s = self.s
        self.s = s._replace(down=replace_at(s.down, c, s.down[c] + (msg,)))
        self.emitted.append((c, msg))
        return self

    def broadcast(self, msg: tuple) -> "Change":
        """The agent sends ``msg`` to every client attached to the session."""
        attached = self.s.agent.attached
        for c in range(len(self.s.clients)):
            if attached >> c & 1:
                self.send(c, msg)
        return self

    def fresh_id(self) -> int:
        """A new message ID from the agent's counter (the agent owns message IDs)."""
        a = self.s.agent
        mid = a.next_id
        self.s = self.s._replace(agent=a._replace(next_id=mid + 1, issued=tuple(sorted(a.issued + ((mid, -1),)))))
        return mid

    def insert(self, mid: int, content: str, into: str, *, echo: bool = True, retained: bool = True) -> "Change":
        """The agent inserts a user message ``mid`` into its conversation: ``into`` "work" (the running work
        takes it) or "pending" (the next work does), and, with ``echo``, reports it at once to every
        attached client with a whole ``user_message`` (else it is owed to them, as a prompt's is)."""
        a = self.s.agent
        owed = 0 if echo else a.attached
        m = Msg(mid, content, retained, -1, "prompt", owed, 0, a.attached)
        a = a._replace(conv=a.conv + (m,))
        if into == "work" and a.work is not None:
            a = a._replace(work=a.work._replace(inputs=a.work.inputs + (mid,)))
        else:
            a = a._replace(pending=tuple(sorted(a.pending + (mid,))))
        self.s = self.s._replace(agent=a)
        if echo:
            self.broadcast(("user_message", mid, (content,), False, None))
        return self

    def detach(self, c: int) -> "Change":
        """Client ``c``'s connection leaves the session: the agent reports the session no longer there."""
        a = self.s.agent
        self.s = self.s._replace(agent=a._replace(attached=a.attached & ~(1 << c)))
        return self

    def spend(self, budget: str) -> "Change":
        """One more of a core budget of ``Config`` is used ("cancels", ...)."""
        used = self.s.used
        self.s = self.s._replace(used=used._replace(**{budget: getattr(used, budget) + 1}))
        return self

    def step(self) -> Step:
        """The step, as it stands."""
        return Step(self.label, self.s, tuple(self.emitted))

    def then(self, step: Step) -> "Change":
        """Start from a step made already (a core one, from ``World.as_if``): its state and what it sent."""
        self.s, self.emitted = step.state, list(step.emitted)
        return self

    def done(self) -> Step:
        """Add the step to the world's steps; it is returned too."""
        step = self.step()
        self.world.out.append(step)
        return step


def message_of(kind: str) -> Message | None:
    """The proposal message of ``kind`` (any registered proposal's), or None for a core kind."""
    if not _MESSAGES and PROPOSALS:
        _index_messages(PROPOSALS)
    return _MESSAGES.get(kind)


def wire_message(sender: str, method: str | None = None, answers: str | None = None,
                 error: bool = False) -> Message | None:
    """The proposal message a wire message is: a call of ``method`` by ``sender``, or ``sender``'s response
    (``error``: an error response) to a request of method ``answers``; None when no proposal has it."""
    if not _MESSAGES and PROPOSALS:
        _index_messages(PROPOSALS)
    return _BY_WIRE.get((sender, method, answers, error if answers else False))


_MESSAGES: dict[str, Message] = {}
_BY_WIRE: dict[tuple, Message] = {}


class Composition:
    """What the proposals of one rule set add to the core, looked up once (see the module docstring)."""

    def __init__(self, rules: Rules):
        reg = registry() if rules.all_proposals else {}
        _index_messages(reg)
        self.proposals: tuple[Proposal, ...] = tuple(get_proposal(n) for n in rules.all_proposals)
        self.judges = CORE if not self.proposals else JudgeSet(
            list(CORE.judges) + [j for p in self.proposals for j in p.judges if j.when is None or j.when(rules)])
        self.receive: dict[str, list] = {}
        self.client_receive: dict[str, list] = {}
        self.after: dict = {}
        self.steps: list = []
        kinds = list(ACTION_KINDS)
        for i, p in enumerate(self.proposals):
            for kind, fn in p.receive.items():
                self.receive.setdefault(kind, []).append((i, fn, p.claims.get(kind)))
            for kind, fn in p.client_receive.items():
                self.client_receive.setdefault(kind, []).append((i, fn))
            for key, fn in p.after.items():
                self.after.setdefault(key, []).append((i, fn))
            self.steps += [(i, fn) for fn in p.steps]
            kinds += [k for k in p.action_kinds if k not in kinds]
        self.action_kinds = tuple(kinds)
        self.ids_at = dict(IDS_AT)
        for p in self.proposals:
            self.ids_at.update({m.kind: m.ids_at for m in p.messages if m.ids_at})
        self.states: tuple[StateSpec | None, ...] = tuple(p.state for p in self.proposals)

    # --- the named configurations --------------------------------------------------------

    def members(self, suite: str) -> tuple[Config, ...]:
        """The members the proposals add to the named configuration ``suite`` (``Proposal.members``)."""
        return tuple(cfg.validate() for p in self.proposals for name, cfg in p.members if name == suite)

    # --- the state ------------------------------------------------------------------

    def start(self, cfg: Config) -> tuple:
        """``System.ext`` at the start of a run."""
        return tuple(spec.start(cfg) if spec is not None else () for spec in self.states)

    def ids(self, cfg: Config) -> int:
        """How many message IDs the proposals may make in a run."""
        return sum(spec.ids(cfg) for spec in self.states if spec is not None)

    # --- the steps ------------------------------------------------------------------

    def take(self, s: System, cfg: Config, rules: Rules, c: int, out: list) -> bool:
        """If the head of client c's channel is a proposal's to take, add the steps that take it; say so."""
        msg = s.up[c][0]
        for i, fn, claim in self.receive.get(msg[0], ()):
            popped = s._replace(up=replace_at(s.up, c, s.up[c][1:]))
            world = World(popped, cfg, rules, self.proposals[i], i, out)
            if msg[0] in CLIENT_KINDS and (claim is None or not claim(world, c, msg)):
                continue
            fn(world, c, msg)
            return True
        return False

    def add_steps(self, s: System, cfg: Config, rules: Rules, out: list) -> None:
        """Every step the proposals' own actions make from ``s``."""
        for i, fn in self.steps:
            fn(World(s, cfg, rules, self.proposals[i], i, out))

    def after_core(self, s: System, cfg: Config, rules: Rules, steps: list) -> list:
        """The core's steps with what the proposals do in the same step."""
        if not self.after:
            return steps
        out = []
        for step in steps:
            a = step.action
            hooks = self.after.get(a[0], []) + self.after.get((a[0], a[2]) if a[0] == "AgentReceive" else None, [])
            got = [step]
            for i, fn in hooks:
                world = World(s, cfg, rules, self.proposals[i], i, [])
                got = [x for g in got for x in _as_list(fn(world, g))]
            out += got
        return out

    def client_receives(self, s: System, c: int, msg: tuple) -> System:
        """``s`` with the proposals' parts updated for client c receiving ``msg``."""
        hooks = self.client_receive.get(msg[0])
        if not hooks:
            return s
        ext = s.ext
        for i, fn in hooks:
            ext = replace_at(ext, i, fn(ext[i], c, msg))
        return s._replace(ext=ext)

    # --- what the judges read -----------------------------------------------------------

    def records(self, sender: str, msg: tuple) -> list:
        """The records of a proposal's message (the generic request or response first), or []."""
        m = _MESSAGES.get(msg[0])
        if m is None:
            return []
        out = []
        if m.request:
            out.append(Request(sender, msg[m.rid_at], m.method))
        elif m.answers is not None and m.rid_at is not None:
            out.append(Response("client" if sender == "agent" else "agent", msg[m.rid_at]))
        if m.record is not None:
            rec = m.record(msg)
            if isinstance(rec, list):  # a message that is read as several records (a close: also a cancel)
                out += rec
            elif rec is not None:
                out.append(rec)
        return out

    # --- the symmetry reduction -------------------------------------------------------

    def rename_ids(self, ext: tuple, f) -> tuple:
        """``ext`` with every message ID renamed by ``f``."""
        return tuple(rename_value(v, spec.id_fields, f) if spec is not None and spec.id_fields else v
                     for v, spec in zip(ext, self.states))

    def permute(self, ext: tuple, inv: list, pick) -> tuple:
        """``ext`` with the clients renamed: client ``c`` becomes ``inv[c]``; ``pick`` orders a per-client tuple."""
        out = []
        for v, spec in zip(ext, self.states):
            if spec is not None:
                if spec.client_fields:
                    v = rename_value(v, spec.client_fields, inv.__getitem__, zero=True)
                if spec.per_client:
                    v = v._replace(**{spec.per_client: pick(getattr(v, spec.per_client))})
            out.append(v)
        return tuple(out)

    def per_client(self, ext: tuple, c: int) -> tuple:
        """What the proposals keep of client ``c`` (for telling clients apart)."""
        return tuple(getattr(v, spec.per_client)[c] for v, spec in zip(ext, self.states)
                     if spec is not None and spec.per_client)


def rename_value(v, fields: tuple[str, ...], f, zero: bool = False):
    """``v`` (NamedTuples and tuples, nested) with every field named in ``fields`` mapped by ``f`` (None kept,
    and 0 too unless ``zero``: 0 is no message ID, but it is client 0)."""
    if isinstance(v, tuple):
        names = getattr(v, "_fields", None)
        if names is not None:
            changes = {}
            for name in names:
                x = getattr(v, name)
                if name in fields:
                    if x or (zero and x == 0):
                        changes[name] = f(x)
                elif isinstance(x, tuple) and x:
                    y = rename_value(x, fields, f, zero)
                    if y is not x:
                        changes[name] = y
            return v._replace(**changes) if changes else v
        items = [rename_value(x, fields, f, zero) for x in v]
        return v if all(a is b for a, b in zip(items, v)) else tuple(items)
    return v


def _as_list(got) -> list:
    return got if isinstance(got, list) else [got]


def _index_messages(reg: dict) -> None:
    """Every proposal's messages by kind, once: a kind is one proposal's, and no core kind."""
    if _MESSAGES or not reg:
        return
    core = set(CLIENT_KINDS) | set(AGENT_KINDS)
    for p in reg.values():
        for m in p.messages:
            if m.kind in core or m.kind in _MESSAGES:
                raise ProposalError(f"proposal {p.name!r}: message kind {m.kind!r} is already taken")
            _MESSAGES[m.kind] = m
            _BY_WIRE[(m.sender, m.method, m.answers, m.error if m.answers else False)] = m


_CACHE: dict = {}


def without_messages(rules: Rules, names: tuple[str, ...]) -> Rules:
    """``rules`` restricted to the runs in which no message of the proposals ``names`` is sent: every step
    that puts one on a channel (a client's, or the agent's) is dropped, as TLA+ hides a module's actions.
    What is left is what the proposals change of the core's own behaviour (``review`` of an addition: a
    conservative extension leaves nothing)."""
    kinds = frozenset(m.kind for n in names for m in get_proposal(n).messages)

    def keep(pre: System, step: Step) -> bool:
        for _, msg in step.emitted:
            if msg[0] in kinds:
                return False
        for old, new in zip(pre.up, step.state.up):
            if len(new) > len(old) and any(m[0] in kinds for m in new[len(old):]):
                return False
        return True

    p = _parts.of(rules)
    keeps = keep if p.keep is None else (lambda pre, step: p.keep(pre, step) and keep(pre, step))
    return rules.with_(name=f"{rules.name} without {', '.join(names)}'s messages", parts=p.with_(keep=keeps))


def every_judge(rules: Rules) -> JudgeSet:
    """The judges a transcript is judged with under ``rules``: the core's, and every registered proposal's
    (a log may use any proposal's messages; those of a proposal ``rules`` does not compose are reported as
    warnings, ``wire_rules.severity``), each of a flag's reading as ``rules`` sets the flag."""
    key = ("every", rules.all_proposals, rules.flags)
    got = _CACHE.get(key)
    if got is None:
        extra = [j for p in registry().values() for j in p.judges if j.when is None or j.when(rules)]
        got = _CACHE[key] = JudgeSet(list(CORE.judges) + extra) if extra else CORE
    return got


def composition(rules: Rules) -> "Composition":
    """What the proposals of ``rules`` add (``NONE`` when it composes none), made once per rule set."""
    if rules is LAST[0]:  # a search asks for the same rules at every step (``Rules`` is frozen)
        return LAST[1]
    names = rules.all_proposals
    if not names:
        got = NONE
    else:
        key = (names, rules.flags)
        got = _CACHE.get(key)
        if got is None:
            got = _CACHE[key] = Composition(rules)
    LAST[0], LAST[1] = rules, got
    return got


#: the rules asked last and their composition (``composed.py`` reads it from compiled code)
LAST: list = [None, None]


NONE = Composition(Rules())

