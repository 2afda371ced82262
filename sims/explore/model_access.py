"""Every use of the model by ``explore`` and ``agent``, in one place.

The explorer and the model agent step the model one transition at a time. They
reach the model only through this module: the initial state, the enabled steps,
the properties judged on a state or a step, the JSON-RPC rendering of a step and
the names of configurations, rule sets and seeded bugs. This module in turn reaches
the model only through the model object (``Lifecycle``) and the names the package
``acp_lifecycle.model`` exports (``tests/test_structure.py`` checks its imports).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from acp_lifecycle.model import BUGS, RULE_SETS, Config, ConfigError, Lifecycle, Property, Rules, Step, System

__all__ = [
    "BadRequest", "Model", "model_for", "names", "Step", "System", "Config", "Rules",
    "agent_message", "client_message", "summary", "action_text", "to_data",
]


class BadRequest(ValueError):
    """A configuration, rule set, bug or path that does not name a run of the model (one line)."""


def agent_message(msg: tuple) -> dict:
    """A model message the agent sends, as JSON-RPC."""
    return Lifecycle.render("agent", msg)


def client_message(msg: tuple) -> dict:
    """A model message a client sends, as JSON-RPC."""
    return Lifecycle.render("client", msg)


def summary(msg: dict) -> str:
    """A one-line summary of a JSON-RPC message, for people."""
    return Lifecycle.summary(msg)


def action_text(action: tuple) -> str:
    """``("ClientSubmitPrompt", 0, "a")`` -> ``ClientSubmitPrompt(0, 'a')``."""
    name, *args = action
    return f"{name}({', '.join(repr(a) for a in args)})"


def names() -> dict:
    """The configurations (suites and their members), rule sets (and spec variants) and seeded bugs the explorer offers."""
    from acp_lifecycle.model import VARIANTS
    from acp_lifecycle.sims.configs import SUITES

    return {
        "configs": {n: [m.name for m in s.members] for n, s in SUITES.items()},
        "rules": list(RULE_SETS) + [v for v in VARIANTS if v not in RULE_SETS],
        "bugs": {b.name: {"summary": b.summary, "breaks": b.breaks, "member": b.member} for b in BUGS.values()},
    }


@dataclass(frozen=True)
class Model:
    """One member of a configuration under one rule set: what the explorer steps through."""

    cfg: Config
    rules: Rules
    config: str  # the name asked for (a suite or a member)
    member: str
    rule_set: str
    bug: str = ""
    #: bounds changed from the member's, as "failures=2,cancels=1" (``--set``)
    sets: str = ""

    # --- stepping: through the model object (model/spec.py) ------------------------
    @property
    def model(self) -> Lifecycle:
        return Lifecycle(self.cfg, self.rules)

    def initial(self) -> System:
        (s,) = self.model.init_states()
        return s

    def successors(self, state: System) -> list[Step]:
        return self.model.next_steps(state)

    def walk(self, path: list[int]) -> list[tuple[System, Step]]:
        """The run a list of action indices names: ``[(pre-state, step), ...]``; BadRequest if it names none."""
        s = self.initial()
        trace = []
        for n, i in enumerate(path, 1):
            steps = self.successors(s)
            if not 0 <= i < len(steps):
                raise BadRequest(
                    f"path: step {n} takes action {i}, but {len(steps)} action(s) are enabled there"
                    + (" (the run has ended)" if not steps else f" (0..{len(steps) - 1})"))
            trace.append((s, steps[i]))
            s = steps[i].state
        return trace

    def path_of(self, trace) -> list[int]:
        """The action indices of a trace found by ``check`` (each step is a real step of ``successors``)."""
        path = []
        for pre, step in trace:
            steps = self.successors(pre)
            for i, cand in enumerate(steps):
                if cand.action == step.action and cand.state == step.state:
                    path.append(i)
                    break
            else:  # pragma: no cover - check's traces are replayed on the model
                raise BadRequest(f"step {action_text(step.action)} is not a step of the model here")
        return path

    def fingerprint(self, state: System) -> str:
        """A state's 64-bit fingerprint (the same in every process), as 16 hex digits: the whole state,
        ghost fields included, without symmetry reduction."""
        from acp_lifecycle.sims.search.storage import portable_fingerprint

        return f"{portable_fingerprint(state) & (1 << 64) - 1:016x}"

    # --- properties -----------------------------------------------------------------
    def properties(self) -> list[Property]:
        """The properties that are rules of this rule set."""
        return self.model.properties()

    def step_findings(self, pre: System, step: Step) -> list[dict]:
        """What one step breaks: its ``step`` properties, and the ``always`` properties on the state it reaches."""
        out = []
        for p in self.properties():
            if p.kind == "step":
                msg = p.check(pre, step)
            elif p.kind == "always":
                msg = None if p.check(pre) else p.check(step.state)  # only what this step broke
            else:
                continue
            if msg:
                out.append(self._finding(p, msg))
        return out

    def state_findings(self, state: System) -> list[dict]:
        """The ``always`` properties false in a state."""
        return [self._finding(p, m) for p in self.properties() if p.kind == "always" and (m := p.check(state))]

    def obligations(self, state: System) -> list[dict]:
        """The ``eventually`` obligations open in a state (they must not stay open forever)."""
        return [self._finding(p, m) for p in self.properties() if p.kind == "eventually" and (m := p.check(state))]

    def reached(self, trace) -> list[dict]:
        """The ``sometimes`` situations the run has reached, each with the first step that reached it."""
        out = []
        for p in self.properties():
            if p.kind != "sometimes":
                continue
            for n, (pre, step) in enumerate(trace, 1):
                if p.check(pre, step):
                    out.append({"property": p.id, "summary": p.summary, "step": n})
                    break
        return out

    def _finding(self, p: Property, message: str) -> dict:
        return {"property": p.id, "kind": p.kind, "level": p.level, "expect": self.model.expectation(p),
                "summary": p.summary, "message": str(message), "clause": p.clause_for(message),
                "quote": p.quote_for(message)}

    # --- rendering -------------------------------------------------------------------
    def messages(self, pre: System, step: Step) -> list[dict]:
        """The JSON-RPC messages of one step, each with its direction, client and one-line summary."""
        return [{"direction": d, "client": c, "message": m, "summary": summary(m)}
                for d, c, m in self.model.step_messages(pre, step)]

    def check_traces(self) -> list[dict]:
        """Every counterexample and witness ``check`` finds on this member: property, outcome, path."""
        from acp_lifecycle.sims.configs import Suite
        from acp_lifecycle.sims.search.check import check_suite

        r = check_suite(Suite(self.member, "", (self.cfg,)), self.rules)
        out = []
        for pid, v in r.verdicts.items():
            if v.trace:
                out.append({"property": pid, "kind": v.prop.kind, "status": v.status, "outcome": v.outcome,
                            "ok": v.ok, "message": v.message, "path": self.path_of(v.trace)})
        return out

    def query(self, path: list[int] | None = None) -> str:
        """The URL query that names this model (and a path in it)."""
        from urllib.parse import urlencode

        q = {"config": self.config}
        if self.member != self.config:
            q["member"] = self.member
        if self.rule_set != "rfd":
            q["rules"] = self.rule_set
        if self.bug:
            q["bug"] = self.bug
        if self.sets:
            q["set"] = self.sets
        if path is not None:
            q["path"] = ",".join(map(str, path))
        return urlencode(q, safe=",")


def model_for(config: str = "tiny", member: str = "", rules: str = "rfd", bug: str = "", sets: str = "") -> Model:
    """The model a query names: a configuration (suite or member), a member of it, a rule set or a
    spec variant, a seeded bug, and bounds changed from the member's (``"failures=2,cancels=1"``)."""
    from acp_lifecycle.model import VARIANTS
    from acp_lifecycle.sims.configs import get_suite

    if rules not in RULE_SETS and rules not in VARIANTS:
        raise BadRequest(f"unknown rule set {rules!r}; choose one of: {', '.join(RULE_SETS)} or a variant "
                         f"({', '.join(v for v in VARIANTS if v not in RULE_SETS)})")
    r = RULE_SETS[rules] if rules in RULE_SETS else VARIANTS[rules].rules
    try:
        suite = get_suite(config, r)  # with the members its proposals add
    except ConfigError as e:
        raise BadRequest(str(e)) from None
    members = {m.name: m for m in suite.members}
    if member and member not in members:
        raise BadRequest(f"configuration {config!r} has no member {member!r}; choose one of: {', '.join(members)}")
    cfg = members[member] if member else suite.members[0]
    if sets:
        from acp_lifecycle.sims.configs import UsageError, parse_bounds

        try:  # the command line's --set: one wording for an unknown bound, a missing or bad value
            cfg = cfg.with_(**parse_bounds(sets.split(","), option="set="))
        except (UsageError, ConfigError) as e:
            raise BadRequest(str(e)) from None
    if bug:
        if bug not in BUGS:
            raise BadRequest(f"unknown bug {bug!r}; see `acp-lifecycle bugs --list`")
        r = BUGS[bug].on(r)
    return Model(cfg, r, config, cfg.name, rules, bug, sets)


def parse_path(text: str) -> list[int]:
    """``"0,3,1"`` -> ``[0, 3, 1]``; BadRequest (one line) for anything else."""
    text = (text or "").strip()
    if not text:
        return []
    out = []
    for part in text.split(","):
        part = part.strip()
        if not (part.isascii() and part.isdigit()) or len(part) > 6:  # '²' and '١' are digits to isdigit()
            raise BadRequest(f"path: {part!r} is not an action index (a path is action indices: 0,3,1)")
        out.append(int(part))
    if len(out) > 500:
        raise BadRequest(f"path: {len(out)} steps; at most 500")
    return out


def to_data(value):
    """A model value (NamedTuples, tuples, frozensets) as JSON data; NamedTuples become objects."""
    if hasattr(value, "_asdict"):
        return {k: to_data(v) for k, v in value._asdict().items()}
    if isinstance(value, (tuple, list)):
        return [to_data(v) for v in value]
    if isinstance(value, frozenset):
        return sorted(to_data(v) for v in value)
    return value


def agent_config(**budgets) -> Config:
    """The bounds of a live model agent: one session, one client per connection, budgets far above a test's needs."""
    base = Config(name="agent", clients=1, prompts=10_000, alphabet=("a", "/c"), cancels=10_000, resumes=10_000,
                  down_latency=True, hold=True, hook=True, reserve=True, live_only=True, chunks=True)
    return replace(base, **budgets)


# --- the live agent (sims/agent): the model's steps taken one by one against a real client ----------------

#: Agent steps a live agent on stdio does not take: it receives only what its client sent (receipt
#: is driven by the client), it cannot lose its own stdio nor restart, it imports nothing.
_NOT_LIVE = ("AgentReceive", "AgentResume", "AgentRestart", "AgentImportMessage")

#: The client steps, by the model message they send.
_CLIENT_ACTION = {"prompt": "ClientSubmitPrompt", "cancel_req": "ClientCancelRequest", "cancel": "ClientCancelSession",
                  "perm_ans": "ClientAnswerPermission", "resume": "ClientResume"}


def live_agent_steps(state: System, steps: list[Step], alone: bool = False, shoulds: bool = True) -> list[Step]:
    """The agent's own choices among the enabled steps (no receipt, no fault of the environment).

    Left out: a failure that ends work blocked on a permission request (left open, a client would
    keep its dialog open for good; withdrawn, ``Config.withdraw_permission``, a client answering it
    at that moment crosses the withdrawal, and the agent's clock cannot tell that race from a
    client that ignored it: the live agent's config leaves the switch off); a tool call of cancelled work set running (``in_progress``) while the
    session was last reported ``requires_action`` (the model allows it: cancelled work may still
    update its tool calls; the 2.4.0 rule ``requires_action_then_running`` of ``trace`` does not:
    progress without ``running``). With ``alone`` (the client closed its side) every step that
    asks it something: a permission request nobody will answer. With ``shoulds`` every step that
    skips what a SHOULD asks: a failure reported without its error object
    (``error_idle_has_details``)."""
    w = state.agent.work
    blocked = w is not None and w.perm and not w.cancelling
    waiting = state.agent.fg == "requires_action"
    return [s for s in steps if s.action[0].startswith("Agent") and s.action[0] not in _NOT_LIVE
            and not (blocked and s.action[0] == "AgentFailWork" and "withdraws-permission" not in s.action)
            and not (waiting and s.action[0] == "AgentToolCall" and s.action[2] in ("run", "start-running"))
            and not (alone and _asks(s.action))
            and not (shoulds and "no-details" in s.action)]


def _asks(action: tuple) -> bool:
    """Does the step send the client a request (a permission request)?"""
    if action[0] == "AgentRequestPermission":
        return "withdrawn" not in action  # withdrawing one asks nothing
    return action[0] in ("AgentBeginWork", "AgentInitiateWork") and "blocked" in action


def receipt_steps(steps: list[Step]) -> list[Step]:
    """The ways the agent may handle the head of client 0's channel."""
    return [s for s in steps if s.action[0] in ("AgentReceive", "AgentResume") and s.action[1] == 0]


def delivery_step(steps: list[Step]) -> Step | None:
    """The step that hands client 0 the head of the agent's channel to it."""
    return next((s for s in steps if s.action[0] == "ClientReceive" and s.action[1] == 0), None)


def client_step(state: System, steps: list[Step], msg: tuple) -> Step | None:
    """The model client's step that sends ``msg`` (a model message; a prompt's and a resume's
    request id are the client's next), or None when a correct client would not send it here."""
    name = _CLIENT_ACTION[msg[0]]
    for s in steps:
        if s.action[0] != name or s.action[1] != 0:
            continue
        sent = s.state.up[0][-1]
        if msg[0] == "prompt" and s.action[2] == msg[2]:
            return s
        if msg[0] == "cancel_req" and sent == msg:
            return s
        if msg[0] == "cancel":
            return s
        if msg[0] == "perm_ans" and sent[1:] == msg[1:]:
            return s
        if msg[0] == "resume" and sent[2] == msg[2]:
            return s
    return None


def forced_client_step(state: System, steps: list[Step], msg: tuple) -> Step:
    """A client step no correct client takes here, so that its rules can judge it: the model client's
    step for the same request with the message actually sent, or the message put on the channel."""
    if msg[0] == "perm_ans":
        for s in steps:
            if s.action[0] == "ClientAnswerPermission" and s.action[1:] == (0, msg[1]):
                return s._replace(state=s.state._replace(up=(s.state.up[0][:-1] + (msg,),) + s.state.up[1:]))
    if msg[0] == "cancel":
        w = state.agent.work
        msg = ("cancel", w.serial if w is not None else 0)
    nxt = state._replace(up=(state.up[0] + (msg,),) + state.up[1:])
    return Step((_CLIENT_ACTION[msg[0]], 0, "outside-the-model-client"), nxt, ())


def next_request_id(state: System) -> int:
    """The request id the model client gives its next request."""
    return state.clients[0].next_rid


def message_origin(state: System, mid: int) -> int | None:
    """The model request id of the prompt message ``mid`` came from (None: no prompt)."""
    for m in state.agent.conv:
        if m.mid == mid:
            return state.agent.reqs[m.origin].rid if m.origin >= 0 else None
    return None


def work_active(state: System) -> bool:
    return state.agent.work is not None


def prompts_open(state: System) -> bool:
    """A prompt the agent received and has not answered."""
    return any(not r.answers and not r.orphan for r in state.agent.reqs)

