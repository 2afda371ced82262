"""Counterexamples and results for people (text) and for programs (JSON data).

The runs themselves (steps, messages, wrapping) are ``traces.py``, re-exported here.
"""

from __future__ import annotations

from acp_lifecycle.sims.search.check import SuiteResult
from acp_lifecycle.sims.search.explore import Verdict
from acp_lifecycle.sims.traces import action_text, trace_data, trace_lines, wrap_line

__all__ = ["action_text", "trace_lines", "trace_data", "result_data", "wrap_line"]

def _verdict_data(v: Verdict, where: str) -> dict:
    p = v.prop
    return {
        "id": p.id,
        "kind": p.kind,
        "expect": v.expectation,
        "level": p.level,
        "summary": p.summary,
        "clauses": list(p.clauses),
        "quote": p.quote_for(v.message),
        "status": v.status,
        "outcome": v.outcome,
        "ok": v.ok,
        "message": v.message,
        "member": where,
        "trace": trace_data(v.trace) if v.trace else None,
    }


def result_data(r: SuiteResult) -> dict:
    return {
        "config": r.suite.name,
        "rules": r.rules.name,
        "ok": r.ok,
        "states": r.states,
        "transitions": r.transitions,
        "seconds": round(r.seconds, 3),
        "wall_seconds": round(r.wall, 3),
        "members": [
            {
                "name": m.config.name,
                "states": m.states,
                "transitions": m.transitions,
                "depth": m.depth,
                "terminal_states": m.terminal_states,
                "seconds": round(m.seconds, 3),
            }
            for m in r.members
        ],
        "properties": [_verdict_data(v, r.found_in[k]) for k, v in r.verdicts.items()],
    }
