"""Running a scenario: the ``Scenario`` record, ``play`` (play, check, expect), ``render``,
and the vocabulary scenarios are written in (step labels as the model spells them,
helpers for expectations). The scenarios themselves, and ``run`` by name, are in
``catalogue.py``, which imports this module (never the reverse)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from acp_lifecycle.model import VOCAB, Config, Lifecycle, Rules, Step, System

from acp_lifecycle.sims.traces import action_text, trace_lines

__all__ = [
    "CHECKED", "Scenario", "ScenarioError", "ScenarioRun", "Trace", "render", "play",
    # step labels
    "submit", "agent_gets", "insert", "respond", "echo", "client_gets", "resume", "BEGIN", "END",
    # helpers for expectations
    "require", "sent_messages", "step_number", "client_of", "submission_of", "view_entries", "expect_shown_once",
    "expect_acknowledged", "conversation_message", "idle_updates_sent", "scenario_config",
]

Trace = list[tuple[System, Step]]


class ScenarioError(RuntimeError):
    """A scenario's script does not run on the model; the message is one line."""


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    #: the checklist sentence or RFD sentence the scenario shows (verbatim)
    rfd: str
    config: Config
    rules: Rules
    steps: tuple[tuple, ...]
    #: ``expect(final, trace)`` raises AssertionError with a sentence when the
    #: outcome is not the one the scenario shows; its docstring says what it checks
    expect: Callable[[System, Trace], None] = field(compare=False)

    @property
    def summary(self) -> str:
        """What ``expect`` checks: the first line of its docstring."""
        doc = (self.expect.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else self.expect.__name__


@dataclass
class ScenarioRun:
    scenario: Scenario
    #: (pre-state, step) pairs from the initial state, one per label
    trace: Trace
    final: System


#: The properties a scenario checks after every step: what the RFD says must hold.
CHECKED = tuple(p for p in Lifecycle(Config(name="scenarios")).every_property()
                if p.kind in ("always", "step") and p.expect == "must_hold")


def play(sc: Scenario) -> ScenarioRun:
    """Play a scenario's steps on the model, check the properties, then its expectation.

    ``catalogue.run`` plays a scenario by its name.
    """
    model = Lifecycle(sc.config, sc.rules)
    (state,) = model.init_states()
    _check_properties(model, sc, 0, None, state, None)
    trace: Trace = []
    for n, label in enumerate(sc.steps, 1):
        enabled = model.next_steps(state)
        matches = [st for st in enabled if st.action == label]
        if len(matches) != 1:
            what = "is not enabled" if not matches else f"matches {len(matches)} steps"
            labels = ", ".join(action_text(st.action) for st in enabled) or "none"
            raise ScenarioError(
                f"scenario {sc.name}: step {n} {action_text(label)} {what}; enabled: {labels}"
            )
        step = matches[0]
        _check_properties(model, sc, n, state, step.state, step)
        trace.append((state, step))
        state = step.state
    sc.expect(state, trace)
    return ScenarioRun(sc, trace, state)


def render(r: ScenarioRun) -> list[str]:
    """The title, the numbered steps with their JSON-RPC messages, and what was checked."""
    sc = r.scenario
    return [f"{sc.name}: {sc.title}", *trace_lines(r.trace), f"expected: {sc.summary} ... ok"]


def _check_properties(model: Lifecycle, sc: Scenario, n: int, pre: System | None, state: System,
                      step: Step | None) -> None:
    where = f"step {n} {action_text(step.action)}" if step is not None else "the initial state"
    for p in CHECKED:
        if model.expectation(p) != "must_hold":
            continue  # not a rule of the scenario's rule set
        if p.kind == "always":
            msg = p.check(state)
        elif step is not None:
            msg = p.check(pre, step)
        else:
            continue
        if msg:
            raise ScenarioError(f"scenario {sc.name}: after {where}, property {p.id} is violated: {msg}")


# ---------------------------------------------------------------------------
# Labels (as the model spells them) and helpers for expectations
# ---------------------------------------------------------------------------


def submit(c: int, content: str = "a") -> tuple:
    return ("ClientSubmitPrompt", c, content)


def agent_gets(c: int, kind: str = "prompt") -> tuple:
    """The agent takes the head of client c's channel: prompt, cancel_req, cancel, perm_ans."""
    return ("AgentReceive", c, kind)


def insert(idx: int, how: str = "retained") -> tuple:
    """Insert request #idx (in order of receipt) as a retained or live-only message."""
    return ("AgentInsert", idx, how)


def respond(idx: int) -> tuple:
    return ("AgentRespond", idx)


def echo(mid: int, mode: str = "whole") -> tuple:
    """Report message mid to every client owed it: whole (user_message) or chunk."""
    return ("AgentEcho", mid, mode)


def client_gets(c: int, kind: str) -> tuple:
    """Client c takes the head of its channel: ok, err, user_message, chunk, state, notice, resumed."""
    return ("ClientReceive", c, kind)


def resume(c: int, mode: str, snapshot: str = "no-snapshot") -> tuple:
    """The agent handles client c's session/resume: replay none, whole or chunks."""
    return ("AgentResume", c, mode, snapshot)


BEGIN = ("AgentBeginWork", "input")
END = ("AgentEndWork", "end_turn")


def require(cond: object, sentence: str) -> None:
    if not cond:
        raise AssertionError(sentence)


def sent_messages(trace: Trace, kind: str) -> list[tuple[int, int, tuple]]:
    """(step number, client, message) for every message of a kind the agent sent."""
    return [(n, c, m) for n, (_, st) in enumerate(trace, 1) for c, m in st.emitted if m[0] == kind]


def step_number(trace: Trace, label: tuple) -> int:
    """The number of the first step with this label."""
    for n, (_, st) in enumerate(trace, 1):
        if st.action == label:
            return n
    raise AssertionError(f"the run has no step {action_text(label)}")


def client_of(s: System, c: int):
    require(c < len(s.clients), f"the run has no client {c}")
    return s.clients[c]


def submission_of(s: System, c: int, rid: int):
    for sub in client_of(s, c).subs:
        if sub.rid == rid:
            return sub
    raise AssertionError(f"client {c} has no submission {rid}")


def view_entries(s: System, c: int, mid: int) -> list[tuple]:
    """Client c's view entries for message mid (a message shown twice has two)."""
    return [e for e in client_of(s, c).view if e[0] == mid]


def expect_shown_once(s: System, c: int, mid: int, content: tuple) -> None:
    got = view_entries(s, c, mid)
    require(
        len(got) == 1 and got[0][1] == content and not got[0][2],
        f"client {c} should show message {mid} once with content {list(content)}, its view is {s.clients[c].view}",
    )


def expect_acknowledged(s: System, c: int, rid: int, mid: int) -> None:
    sub = submission_of(s, c, rid)
    require(
        sub.status == "acknowledged" and sub.mid == mid,
        f"client {c}'s prompt {rid} should be acknowledged as message {mid}, it is {sub.status} with message {sub.mid}",
    )


def conversation_message(s: System, mid: int):
    for m in s.agent.conv:
        if m.mid == mid:
            return m
    raise AssertionError(f"the agent's conversation has no message {mid}")


def idle_updates_sent(trace: Trace) -> list[tuple]:
    """The idle state_updates sent, once per step (broadcasts collapsed)."""
    out = []
    for _, st in trace:
        seen = []
        for _, m in st.emitted:
            if m[0] == "state" and m[1] == VOCAB.IDLE and m not in seen:
                seen.append(m)
        out.extend(seen)
    return out


def scenario_config(name: str, **bounds) -> Config:
    """A scenario's bounds: FIFO delivery to clients, no optional exploration the script does not use."""
    for key, value in (("down_latency", True), ("hook", False), ("reserve", False), ("live_only", False), ("chunks", False)):
        bounds.setdefault(key, value)
    return Config(name=name, **bounds).validate()
