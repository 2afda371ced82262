"""A witness for people and programs: compact lines, what explains it, the other rule set's answer,
its robustness, its link into ``explore``, its sequence chart. ``diff``, ``find`` and ``review`` share it."""

from __future__ import annotations

import json
from typing import Callable

from acp_lifecycle.model.wire import summary

from .check import answers
from .observe import observed_lines
from .robust import check_robust

__all__ = ["compact", "entry_text", "explanations", "annotate", "robust_text", "answer_text", "chart_notes",
           "witness_mermaid"]


def _metas(msg: dict) -> list:
    params = msg.get("params") or {}
    where = [params, params.get("update") or {}, msg.get("result") if isinstance(msg.get("result"), dict) else {}]
    return [x["_meta"] for x in where if isinstance(x, dict) and "_meta" in x]


def compact(msg: dict) -> str:
    """``model.wire.summary`` with any ``_meta`` kept (a correlation token is part of what differs)."""
    text = summary(msg)
    for meta in _metas(msg):
        text += " _meta=" + json.dumps(meta, separators=(",", ":"), sort_keys=True)
    return text


def entry_text(o: dict) -> str:
    """One observation (``observed_lines``) on one line: connection, arrow, compact message."""
    if o.get("event") == "end":
        return "(the run ends: no step is left)"
    if o.get("event") == "closed":
        return f"{o['conn']:<5} connection closes"
    arrow = "->" if o["from"] == "client" else "<-"
    return f"{o['conn']:<5} {arrow} {compact(o['msg'])}"


def _explain(pre, step) -> str:
    name, *args = step.action
    if name == "AgentBeginWork" and args[:1] == ["before-insertion"]:
        return "a foreground hook: `running` before insertion (not acknowledgment of it)"
    if name == "AgentInsert":
        if args[2:3] == ["queued"]:
            return "inserted while other work runs, and queued: that work does not take it"
        if pre.agent.work is not None:
            return "inserted while work runs: that work takes it"
    if name == "AgentHold":
        return "held: received, not inserted"
    if name == "AgentInitiateWork":
        return "work of the agent's own (no prompt)"
    if name == "AgentReserveId":
        return "an ID reserved before insertion"
    return ""


def explanations(w) -> dict[int, str]:
    """Step number -> why it matters, for the steps that explain a difference and show nothing
    of it on the wire by themselves (a hook's `running`, a queued insertion, a hold)."""
    out = {}
    for n, (pre, step) in enumerate(w.run, 1):
        text = _explain(pre, step)
        if text:
            out[n] = text
    return out


def annotate(d, *, robust: bool = True, progress: Callable[[int, int], None] | None = None) -> None:
    """Give every witness of a ``SuiteDiff`` its robustness (unless ``robust`` is False) and the
    other rule set's answers after the same observations."""
    if robust:
        check_robust(d, progress=progress)
    cfgs = {m.config.name: m.config for m in d.members}
    for ws, other in ((d.only_a, d.b), (d.only_b, d.a)):
        for w in ws.values():
            w.other_answers = answers(cfgs[w.member], other, w.events[:-1])


def robust_text(w) -> str:
    r = w.robustness
    if r is None:
        return ""
    if r.robust:
        return f"robust: it remains with each bound one higher and under each reading ({len(r.checked)} checked)"
    also = f" (also: {', '.join(r.vanishes_under[1:])})" if len(r.vanishes_under) > 1 else ""
    return f"artefact of {r.artefact_of}: {w.refused} allows this run too under it{also}"


def answer_text(w, most: int = 4) -> str:
    got = getattr(w, "other_answers", None)
    if got is None:
        return ""
    if not got:
        return f"{w.refused} instead: nothing (it can neither send a message nor end here)"
    shown = got[:most] + ([f"{len(got) - most} more"] if len(got) > most else [])
    return f"{w.refused} instead: " + " | ".join(shown)


def chart_notes(w) -> tuple[dict[int, str], str]:
    """(step notes, the final note) of a witness's sequence chart."""
    last = observed_lines(w)[-1]
    note = (f"step {last['step']}: {' '.join(entry_text(last).split())}\n"
            f"{w.refused} allows every message before this one, and not this one")
    for extra in (answer_text(w), robust_text(w)):
        if extra:
            note += "\n" + extra
    return explanations(w), note


def witness_mermaid(w, title: str) -> str:
    """The Mermaid sequence chart of a witness: its run, what explains it, the other rule set's answer."""
    from acp_lifecycle.sims.diagrams.sequence import sequence_mermaid

    notes, note = chart_notes(w)
    return sequence_mermaid(w.run, title, note, violation=False, notes=notes)
