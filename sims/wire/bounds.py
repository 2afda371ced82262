"""The bounds of the model a transcript needs (``trace --model``): a ``Config`` made of what
one session's lines show (clients, prompts, cancels, resumes, lost connections, tool calls,
failures, ...), each clamped to ``LIMITS`` on request.

``modeltrace.explain`` searches the model under these bounds; ``quick`` bounds (every working
episode started by a prompt, but the surplus) are tried first.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from acp_lifecycle.model import LIMITS, VOCAB, Config

from .abstraction import Line, Prepared, prepare, split_sessions

__all__ = ["config_and_clamps", "config_for"]


def config_for(entries: list[tuple[int, dict]], clamp: bool = True) -> Config:
    """Bounds derived from the transcript (not a named configuration).

    clients: distinct client indices (``cN`` and ``cN.k`` are client N, any
    other label a client of its own); prompts: the most session/prompt
    requests of one client; cancels: ``$/cancel_request`` + ``session/cancel``;
    resumes: ``session/resume``; losses: ``closed`` events, restarts: runs of
    ``closed`` events for distinct clients, at least one when a client resumes
    (a restart while no client is connected shows in no line); tool_calls: distinct toolCallIds;
    tool_refinements: updates of a call already announced that carry no status or repeat its last one;
    permissions: ``session/request_permission``; failures: error idles,
    notices, error updates and error responses other than -32800; imports:
    messageIds echoed but never in a prompt result, or echoed while no prompt
    waited for its response; agent_work: times the
    session went from idle to working; stop_reasons and alphabet as observed;
    every exploration flag on, ``down_latency=False`` (deliveries to clients
    are not in a transcript).

    A client that joins the session by resume (``Prepared.late``) starts
    with its connection lost: one more loss each.

    With ``clamp`` the integer bounds are clamped to ``config.LIMITS``
    (``explain`` reports which); without, they are kept (the transcript itself
    bounds the search, so LIMITS, which are about exhaustive search, need not
    apply). A transcript of several sessions gives the bounds of its first
    (``explain`` derives them per session).
    """
    sessions = split_sessions(entries)
    part = sessions.parts[0] if sessions.parts else None
    prep = prepare(part.entries if part else [], sessions.initialized, part.creator if part else None)
    cfg, _, _ = config_and_clamps(prep, clamp)
    return cfg


@dataclass
class _Counts:
    """What a session's lines show, counted the way the bounds are made of (``config_and_clamps``)."""

    prompts: dict = field(default_factory=dict)  # client -> prompts it sent
    cancels: int = 0
    resumes: int = 0
    closed: int = 0
    restarts: int = 0
    perms: int = 0
    failures: int = 0
    running: int = 0  # working episodes (idle -> running or requires_action)
    blocked: int = 0
    refinements: int = 0  # tool_call_updates without a status or repeating it, of a call already announced
    meta: bool = False
    tools: set = field(default_factory=set)
    status: dict = field(default_factory=dict)  # toolCallId -> the last status reported
    acked: set = field(default_factory=set)
    echoed: set = field(default_factory=set)
    unprompted: set = field(default_factory=set)  # messageIds echoed while no prompt waited
    asked: set = field(default_factory=set)  # (client, request id) of prompts not answered yet
    stops: list = field(default_factory=list)
    alphabet: list = field(default_factory=list)
    fg: str = "idle"
    prev_closed: set | None = None

    def line(self, ln: Line) -> None:
        m = ln.msg
        k = m[0]
        if k != "closed":
            self.prev_closed = None
        if k in ("ok", "err", "v1_prompt_result"):
            self.asked.discard((ln.client, m[1]))
        if k == "prompt":
            self.asked.add((ln.client, m[1]))
            self.prompts[ln.client] = self.prompts.get(ln.client, 0) + 1
            if m[2] not in self.alphabet:
                self.alphabet.append(m[2])
        elif k in ("cancel_req", "cancel"):
            self.cancels += 1
        elif k == "resume":
            self.resumes += 1
        elif k == "closed":
            self.closed += 1
            # a run of closed events for distinct clients may be one restart
            if self.prev_closed is None or ln.client in self.prev_closed:
                self.restarts += 1
                self.prev_closed = set()
            self.prev_closed.add(ln.client)
        elif k == "tool":
            if m[1] in self.tools and (m[2] is None or m[2] == self.status.get(m[1])):
                self.refinements += 1  # it refines the call, or repeats its status: either changes nothing
            self.tools.add(m[1])
            if m[2] is not None:
                self.status[m[1]] = m[2]
        elif k == "perm":
            self.perms += 1
        elif k in ("notice", "error_update") or (k == "err" and m[2] != -32800):
            self.failures += 1
        elif k == "ok":
            self.acked.add(m[2])
        elif k in ("user_message", "chunk"):
            self.echo(m)
        elif k == "state":
            self.state(m)

    def echo(self, m: tuple) -> None:
        self.echoed.add(m[1])
        if m[1] not in self.acked and not self.asked:
            # echoed while no prompt waits for its response: imported, even if a
            # later response carries the same ID (an agent that reuses IDs)
            self.unprompted.add(m[1])
        if m[0] == "user_message" and m[2] is None:
            self.meta = True

    def state(self, m: tuple) -> None:
        if m[1] == "idle":
            if m[2] == "error" or m[3]:
                self.failures += 1
            normal = m[2] in VOCAB.STOP_REASONS or m[2] == "_custom" or (m[2] == "" and self.fg != "idle")
            if normal and m[2] not in ("error", "cancelled") and m[2] not in self.stops:
                self.stops.append(m[2])
            self.fg = "idle"
        elif m[1] in ("running", "requires_action", "failed"):
            if self.fg == "idle" and m[1] != "failed":
                self.running += 1
            if m[1] == "requires_action" and self.fg != "requires_action":
                self.blocked += 1  # each block spends a permission request (its request may be cut off)
            self.fg = m[1]

    def bounds(self, prep: Prepared) -> dict:
        losses = self.closed + len(prep.late)
        return {
            "clients": prep.clients,
            "prompts": max(self.prompts.values(), default=0),
            "cancels": self.cancels,
            "resumes": self.resumes,
            "losses": losses,
            # a restart while no client is connected shows in no line: one may come before a resume
            "restarts": min(max(self.restarts, 1 if self.resumes else 0), losses),
            "tool_calls": len(self.tools),
            "tool_refinements": self.refinements,
            "permissions": max(self.perms, self.blocked),
            "failures": self.failures,
            "imports": len((self.echoed - self.acked) | self.unprompted),
            "agent_work": self.running,
            "retries": 0,
        }


def _clamped(want: dict, clamp: bool) -> list[str]:
    """Bring each bound within LIMITS (``clamp``), or say it is beyond; the notes."""
    notes = []
    for name, value in want.items():
        _lo, hi = LIMITS[name]
        if value > hi:
            if clamp:
                notes.append(f"{name}={value} clamped to {hi}")
                want[name] = hi
            else:
                notes.append(f"{name}={value} is beyond LIMITS {hi} (kept: the transcript bounds the search)")
    return notes


def config_and_clamps(prep: Prepared, clamp: bool = True) -> tuple[Config, list[str], Config]:
    """(bounds, clamp notes, quick bounds): the quick bounds assume prompts
    started all work but the surplus (agent_work = working episodes - prompts);
    ``explain`` tries them first, then the full bounds."""
    counts = _Counts()
    for ln in prep.lines:
        counts.line(ln)
    want = counts.bounds(prep)
    clamped = _clamped(want, clamp)
    order = {"a": 0, "b": 1, "/c": 2}
    cfg = Config(
        name="transcript",
        alphabet=tuple(sorted(counts.alphabet, key=order.get)) or ("a",),
        stop_reasons=tuple(counts.stops) or ("end_turn",),
        # Holding is not observable: a held prompt behaves as a received one
        # everywhere in system.py (NOT_INSERTED); it only doubles the states.
        hold=False,
        hook=True,
        reserve=True,
        live_only=True,
        chunks=True,
        meta=counts.meta,
        request_first=True,
        idle_cancel=True,
        withdraw_permission=True,
        reject_resume=True,
        down_latency=False,
        **want,
    )
    if clamp:
        cfg = cfg.validate()
    quick = replace(cfg, agent_work=min(cfg.agent_work, max(0, counts.running - sum(counts.prompts.values()))))
    return cfg, clamped, quick
