"""``probe --report FILE``: a Markdown conformance report an agent author can publish.

``report(results, ...)`` turns a probe's ``RunResult``s into one Markdown page:
the agent and its version (its ``initialize`` answer), how it was probed and the
command that reproduces it, each scenario's verdict (outcome, the rules'
count, ``trace --model``'s verdict), every MUST and SHOULD broken with the
clause quoted and the transcript line, the notes a client author needs (what
no rule flags), what the v1-to-v2 bridge cannot carry, and, with ``--live``,
what a v2 client saw through ``bridge serve``.
"""

from __future__ import annotations

import shlex
import time
from collections import OrderedDict

from .scenarios import DESCRIPTIONS

__all__ = ["report", "NOTE_MEANING"]

#: What each probe note means for a client author (observe.py names them).
NOTE_MEANING = {
    "no-user-echo": "The agent never reports the prompt back (`user_message_chunk`); a client shows the "
                    "user's message itself (a v2 client behind the bridge gets the bridge's echo).",
    "http-status-as-error-code": "A failed prompt's JSON-RPC error code is an HTTP status (401, 500, 529), "
                                 "not a JSON-RPC code: a client that branches on codes must expect them.",
    "permission-for-unannounced-tool-call": "A permission request names a tool call no `tool_call` update "
                                            "announced: a client must create the call from the request.",
    "tool-call-left-unfinished": "A tool call is still `pending` (or `in_progress`) when its turn ends: a "
                                 "client must settle it itself, or it shows a call running forever.",
    "prompt-ended-by-next-prompt": "A second `session/prompt` during a turn ends the first `cancelled` "
                                   "without a `session/cancel`.",
    "prompt-answered-after-next-prompt": "A second `session/prompt` during a turn is queued: the first is "
                                         "answered after the second was sent.",
    "message-text-repeated": "A message's text starts over within a turn: after a broken model stream the "
                             "agent retried and streamed the text again into the same message; a client "
                             "shows it twice.",
    "prompt-never-answered": "A prompt is never answered: the agent went idle with it (merged into another "
                             "turn, or dropped). A v1 client waiting for its answer waits forever.",
    "prompt-answered-with-permission-pending": "The agent ends the turn while its permission request is "
                                               "unanswered and not withdrawn (`$/cancel_request`): the "
                                               "client's answer then goes to a finished turn.",
}
_LEVEL = {"violation": "MUST", "warning": "SHOULD"}


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _agent(results) -> tuple[str, str]:
    for r in results:
        if r.agent:
            return str(r.agent.get("name") or r.agent.get("title") or "?"), str(r.agent.get("version") or "?")
    return "?", "?"


def _model(r) -> str:
    if r.model is None:
        return "-"
    if r.model["verdict"] == "unexplained" and r.model.get("v1_line"):
        return f"unexplained (line {r.model['v1_line']})"
    return r.model["verdict"]


def _verdicts(results, live: bool) -> list[str]:
    head = "| scenario | the client | outcome | MUST broken | SHOULD broken | notes | trace --model |"
    rule = "|---|---|---|---:|---:|---:|---|"
    if live:
        head += " live (v2, bridge serve) |"
        rule += "---|"
    lines = [head, rule]
    for r in results:
        count = {lvl: sum(f.level == lvl for f in r.findings) for lvl in ("violation", "warning", "note")}
        outcome = r.status + (f": {r.note}" if r.note else "")
        row = (f"| `{r.scenario}` | {_cell(DESCRIPTIONS.get(r.scenario, ''))} | {_cell(outcome)} | "
               f"{count['violation']} | {count['warning']} | {count['note']} | {_model(r)} |")
        if live:
            lv = r.live
            row += (f" {lv.status}, {sum(f.level == 'violation' for f in lv.findings)} MUST, "
                    f"model {_model(lv)} |" if lv is not None else " - |")
        lines.append(row)
    return lines


def _broken(results) -> list[str]:
    groups: OrderedDict = OrderedDict()
    for r in results:
        for run, f in [(r, f) for f in r.findings] + [(r.live, f) for f in (r.live.findings if r.live else [])]:
            if f.level in _LEVEL:
                groups.setdefault((f.level, f.rule, f.clause, f.quote), []).append((r.scenario, run, f))
    if not groups:
        return ["No MUST or SHOULD of the rules is broken in any scenario."]
    lines = []
    for (level, rule, clause, quote), hits in sorted(groups.items(), key=lambda kv: (kv[0][0] != "violation", kv[0][1])):
        lines += [f"### `{rule}` ({_LEVEL[level]}), {len(hits)} time{'s' * (len(hits) != 1)}", ""]
        if quote:
            lines += [f"> {clause}: {quote}" if clause else f"> {quote}", ""]
        for scenario, run, f in hits[:12]:
            where = f"line {f.line}" + (f" (bridged line {f.v2_line})" if f.v2_line and f.source != "live" else "")
            file = run.transcript.rsplit("/", 1)[-1]
            lines.append(f"- `{scenario}`, {where} of `{file}`: {f.message}")
        if len(hits) > 12:
            lines.append(f"- and {len(hits) - 12} more")
        lines.append("")
    return lines


def _notes(results) -> list[str]:
    groups: OrderedDict = OrderedDict()
    for r in results:
        for f in r.findings:
            if f.level == "note":
                groups.setdefault(f.rule, []).append((r, f))
    if not groups:
        return ["Nothing beyond the rules."]
    lines = []
    for rule, hits in groups.items():
        scenarios = sorted({r.scenario for r, _ in hits})
        lines += [f"- **`{rule}`** ({', '.join(f'`{s}`' for s in scenarios)}): {NOTE_MEANING.get(rule, '')}"]
        r, f = hits[0]
        lines.append(f"  For example `{r.scenario}`, line {f.line}: {f.message}")
    return lines


def _model_text(results) -> list[str]:
    lines = []
    for r in results:
        for run, side in ((r, "bridged"), (r.live, "live")):
            if run is not None and run.model and run.model["verdict"] != "explained":
                lines.append(f"- `{r.scenario}` ({side}): {run.model['text']}")
    return lines or ["Every transcript is explained by some run of the model."]


def _bridge(results) -> list[str]:
    seen = OrderedDict()
    for r in results:
        for f in r.findings:
            if f.level == "problem":
                seen.setdefault((f.rule, f.message), r.scenario)
    return [f"- `{rule}` (first in `{s}`): {msg}" for (rule, msg), s in seen.items()] or ["Nothing."]


def report(results, *, profile, argv: list[str], live: bool = False) -> str:
    """The Markdown report of a probe run (``argv``: the probe's own arguments, to reproduce it)."""
    name, version = _agent(results)
    ran = sum(r.status == "ran" for r in results)
    musts = sum(f.level == "violation" for r in results for f in r.findings)
    lines = [f"# ACP conformance of {name} {version}", "",
             f"Probed {time.strftime('%Y-%m-%d', time.gmtime())} by `acp-lifecycle probe` (profile "
             f"`{profile.name}`, {profile.api} API) against a scripted model provider on 127.0.0.1: "
             f"{len(results)} scenario{'s' * (len(results) != 1)}, {ran} ran, {musts} MUST broken. Each run is an ACP v1 transcript, "
             "judged against the v1 schema, bridged to v2 and checked by `trace`'s rules and by "
             "`trace --model` (does some run of the formal model explain it?).", "",
             "Reproduce:", "", "```sh", "acp-lifecycle probe " + shlex.join(argv), "```", "",
             "## Verdicts", "", *_verdicts(results, live), "",
             "## Rules broken", "", *_broken(results), "",
             "## The model's verdict", "", *_model_text(results), "",
             "## What a client author needs to know", "", *_notes(results), "",
             "## What the v1-to-v2 bridge cannot carry", "", *_bridge(results), ""]
    return "\n".join(lines)
