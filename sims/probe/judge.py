"""Judging a recorded v1 run: the v1 schema, the bridge to v2, then ``trace``'s rules.

A published agent speaks ACP v1; the rules of the v2 prompt lifecycle apply
to what a v2 client would see through the project's v1-to-v2 bridge
(``bridge --to v2``, insertion at the agent's echo). ``judge`` returns
``Finding``s, each with the line of the v1 transcript it is about (for a
``trace`` finding, the v1 line that caused the bridged line) and the bridged
line:

* ``source "trace"``: a rule of ``model/monitor/`` broken in the bridged
  transcript (``rule`` its id, ``level`` violation or warning, ``clause`` and
  ``quote`` the sentence it enforces);
* ``source "bridge"``: something the bridge could not carry to v2 (``rule``
  is the problem's kind, level ``problem``);
* ``source "schema-v1"``: an agent message the v1 schema of
  ``@agentclientprotocol/sdk@2.4.0`` rejects (when the schema is pulled);
* ``source "probe"``: a note about what the v1 agent did that no rule judges
  (observe.py: no echo, HTTP statuses as error codes, tool calls left
  unfinished, a second prompt ending the first), level ``note``.
"""

from __future__ import annotations

from acp_lifecycle.sims.bridge import run_bridge
from acp_lifecycle.sims.wire.transcript import check_transcript, dumps

from .finding import Finding
from .observe import observe

__all__ = ["Finding", "judge", "load_validators", "model_verdict"]

#: The search budget of ``trace --model`` on one probe run (its transcripts are short).
MODEL_NODES = 200_000


def load_validators() -> tuple[object | None, object | None]:
    """(v1 validator, v2 validator) from the pulled schemas; None where one is missing."""
    from acp_lifecycle.sims.wire.schema import SchemaError, Validator, locate

    out = []
    for version in ("v1", "v2"):
        try:
            out.append(Validator(locate(version=version)))
        except SchemaError:
            out.append(None)
    return out[0], out[1]


def _v1_schema(entries, validator) -> list[Finding]:
    findings, asked = [], {}
    for n, entry in entries:
        msg = entry.get("msg")
        if not isinstance(msg, dict):
            continue
        sender = entry["from"]
        if "method" in msg and "id" in msg:
            asked[(sender, repr(msg["id"]))] = msg["method"]
        if sender != "agent":
            continue
        method = asked.get(("client", repr(msg.get("id")))) if "method" not in msg else None
        for problem in validator.check(msg, "agent", method):
            findings.append(Finding("schema-v1", "v1-schema", "violation", problem, n))
    return findings


def judge(entries, partial: bool = False, validators=(None, None)) -> tuple[list[Finding], list[dict]]:
    """(findings, the bridged v2 transcript) for a parsed v1 transcript ``[(line, entry)]``."""
    findings, bridged, _ = judge_lines(entries, partial, validators)
    return findings, bridged


def judge_lines(entries, partial: bool = False, validators=(None, None)) -> tuple[list[Finding], list[dict], list[int]]:
    """``judge``, and for each bridged line the v1 line that caused it."""
    v1, v2 = validators
    run = run_bridge(entries, "v2", partial=partial, insertion="echo")
    causes = [o.cause for o in run.out]
    findings = [Finding("bridge", p.kind, "problem", p.message, p.line) for p in run.problems]
    bridged = list(enumerate(run.entries, 1))
    for f in check_transcript(bridged, partial=partial, validator=v2):
        cause = causes[f.line - 1] if 0 < f.line <= len(causes) else f.line
        findings.append(Finding("trace", f.property, f.severity, f.message, cause, f.line, f.clause, f.quote))
    if v1 is not None:
        findings += _v1_schema(entries, v1)
    findings += observe(entries, partial)
    findings.sort(key=lambda f: (f.line, f.source, f.rule))
    return findings, run.entries, causes


def model_verdict(bridged: list[dict], partial: bool = False, max_nodes: int = MODEL_NODES) -> dict:
    """``trace --model`` on a bridged v2 transcript (``sims.wire.modeltrace.explain`` under the
    RFD's rules, as ``acp-lifecycle trace --model`` runs it): does some run of the model explain
    it? ``{"explained", "verdict", "line", "text", "nodes"}``: ``verdict`` is ``explained``,
    ``unexplained`` or ``inconclusive`` (the node budget ran out), ``line`` the first bridged
    line no run explains. A cut log (``partial``) need not be a point where a run can end."""
    from acp_lifecycle.sims.wire.modeltrace import explain

    r = explain(list(enumerate(bridged, 1)), max_nodes=max_nodes, complete=not partial)
    verdict = "explained" if r.explained else "inconclusive" if r.exhausted else "unexplained"
    return {"explained": r.explained, "verdict": verdict, "line": r.first_unexplained_line, "text": r.text(),
            "nodes": r.nodes}


def bridged_text(entries: list[dict]) -> str:
    return dumps(entries)
