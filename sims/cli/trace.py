"""`acp-lifecycle trace`: check JSON-RPC transcripts against the rules (and the model).

A transcript is read one line at a time and each line judged as it is read
(``sims.wire.transcript.read`` into the monitor): memory holds what the monitor
remembers, not the log (only ``--model`` keeps the lines, for its search).
Findings are printed when every file has been read, so an unusable line
anywhere is one line on stderr, exit 2, and nothing on stdout.

Output: in a terminal each finding is wrapped to its width with a hanging
indent, its rule's sentence on the next line; into a pipe or a file each
finding is one line, never wrapped (and its sentence the next, indented).
``--json`` is JSON Lines: one record per finding, per ``--model`` answer, and
a summary last.
"""

from __future__ import annotations

import gc
import json
import shlex
import sys
import textwrap
from contextlib import contextmanager
from pathlib import Path

from .common import UsageError, add_json, input_file, path_argument, refuse_options

#: Continuation lines of a wrapped finding, and of its rule's sentence.
_HANG = "    "
_QUOTE_HANG = "      "


def register(sub) -> None:
    from acp_lifecycle.model.wire_rules import DEFAULT_RULES, RULE_SETS  # not monitor: loaded only to check

    p = sub.add_parser("trace", help="check JSON-RPC transcripts (JSON Lines) against the rules")
    path_argument(p, "files", kind="in-file", nargs="+", metavar="FILE")
    p.add_argument("--rules", choices=RULE_SETS, default=DEFAULT_RULES,
                   help=f"the rule set: the RFD as written (rfd) or refined by the 2.4.0 schema text (rfd+2.4.0); "
                        f"default: {DEFAULT_RULES}")
    add_json(p, "print JSON Lines: one record per finding, then a summary record")
    p.add_argument("--partial", action="store_true", help="the log is cut: skip rules about what must happen by the end")
    path_argument(p, "--schema", kind="in-json", help="the v2 schema.json to validate against (default: the pulled 2.4.0 copy)")
    p.add_argument("--no-schema", action="store_true", help="skip schema validation")
    p.add_argument("--model", action="store_true",
                   help="also ask whether any run of the model explains the transcript (the first line none does)")
    p.add_argument("--max-nodes", type=int, default=2_000_000, help="with --model: stop the search after this many nodes")
    p.add_argument("--variant", metavar="NAME",
                   help="judge by a spec variant's rules instead (`variants --list`): the rules of the proposals it "
                        "composes are violations, not warnings, and its flags choose their readings; with --model, "
                        "explain by its runs")

    p.set_defaults(run=_trace)


def _schema(args):
    """(validator or None, a one-line note when validation is skipped for want of a schema)."""
    if args.no_schema:
        return None, None
    from acp_lifecycle.sims.wire.schema import SchemaError, Validator, cache_path, locate

    if args.schema is None and not cache_path().is_file():
        return None, "schema validation skipped: no v2 schema pulled (run `acp-lifecycle schema pull` once, or pass --schema PATH)"
    try:
        # no memo: a transcript's messages rarely repeat exactly, and the compiled check is cheaper than the key
        return Validator(locate(args.schema), cache_size=0), None
    except SchemaError as e:
        raise UsageError(str(e)) from None


# ---------------------------------------------------------------------------
# Reading and judging, one line at a time


@contextmanager
def _young_collections():
    """The garbage collector on what was made while reading, rarely: the monitor's memory holds no
    cycles, and every few hundred allocations the collector walked the growing heap (and, four
    times in a 200,000-line log, all of it: the modules and the schema too): 7% of a trace. What
    is loaded before reading is frozen out of its walks; a cycle a line leaves (a schema error's
    context points back to its parent) is still collected young."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


class _Handshake:
    """The protocol version each connection negotiated in the log: ``initialize``'s
    ``protocolVersion``, the agent's answer when it is in the log, else the client's request."""

    def __init__(self):
        self.asked: dict = {}  # (conn, request id as sent) -> (line, version the client asked for)
        self.initialize = False  # an initialize is in the log
        #: without an initialize: the first line only a v1 peer sends, (line, what)
        self.v1_sign: tuple[int, str] | None = None
        self._prompts: dict = {}  # pending session/prompt requests, while looking for a sign

    def feed(self, n: int, entry: dict) -> tuple[int, str] | None:
        """(line, what it says) when this entry settles that a connection runs ACP v1."""
        msg = entry.get("msg")
        if not isinstance(msg, dict) or "id" not in msg:
            return None
        method = msg.get("method")
        if method is None:  # a response: to an initialize, or to a prompt while looking for a v1 sign?
            if entry.get("from") != "agent" or not (self.asked or self._prompts):
                return None
            key = (str(entry.get("conn")), _id(msg["id"]))
            result = msg.get("result")
            if key in self.asked:
                line, _ = self.asked.pop(key)
                if isinstance(result, dict) and _is_v1(result.get("protocolVersion")):
                    return n, f"line {n} answers the initialize of line {line} with protocolVersion 1"
            elif self._prompts.pop(key, None) is not None and self.v1_sign is None and isinstance(result, dict) \
                    and "stopReason" in result and "messageId" not in result:
                self.v1_sign = (n, "a session/prompt result with a stopReason and no messageId")
            return None
        if entry.get("from") != "client":
            return None
        if method == "initialize":
            self.initialize = True
            self._prompts.clear()  # the initialize says which version: no need for signs
            params = msg.get("params")
            key = (str(entry.get("conn")), _id(msg["id"]))
            self.asked[key] = (n, params.get("protocolVersion") if isinstance(params, dict) else None)
        elif self.initialize or self.v1_sign is not None:
            return None
        elif method == "session/load":
            self.v1_sign = (n, "a session/load request, a v1 method")
        elif method == "session/prompt":
            self._prompts[(str(entry.get("conn")), _id(msg["id"]))] = n
        return None

    def finish(self) -> tuple[int, str] | None:
        """At the end of the log: an initialize asking for v1 that no answer in the log settled."""
        for line, version in self.asked.values():
            if _is_v1(version):
                return line, f"the initialize of line {line} asks for protocolVersion 1 (no answer in the log)"
        return None


def _id(rid) -> str:
    """A request id as compared on the wire (``1``, ``1.0`` and ``"1"`` are three ids)."""
    from acp_lifecycle.model.monitor import id_key

    return id_key(rid)


def _is_v1(version) -> bool:
    return type(version) is int and version == 1


def _bridge_first(name: str) -> str:
    out = str(Path(name).with_name(Path(name).name.removesuffix(".jsonl") + ".v2.jsonl"))
    return (f"`acp-lifecycle bridge --to v2 {shlex.quote(name)} > {shlex.quote(out)}`, "
            f"then `acp-lifecycle trace {shlex.quote(out)}`")


def _v1_error(name: str, why: str) -> UsageError:
    return UsageError(f"{name}: an ACP v1 transcript ({why}); trace checks v2 only: bridge it to v2 first, {_bridge_first(name)}")


def _v1_note(name: str, sign: tuple[int, str]) -> str:
    return (f"{name}:{sign[0]}: looks like ACP v1 ({sign[1]}) and no initialize says which version; "
            f"if it is v1, bridge it to v2 first, {_bridge_first(name)}")


def _check_file(name: str, args, validator):
    """(findings, the lines (kept only for --model), a note when it looks like v1 without an
    initialize to say so); UsageError for an unusable file, a v1 transcript, or one without a JSON-RPC message."""
    from acp_lifecycle.model.monitor import Monitor
    from acp_lifecycle.sims.wire.transcript import Reader, TranscriptError

    monitor = Monitor(getattr(args, "variant_rules", None) or args.rules, args.partial, validator)
    handshake = _Handshake()
    kept = [] if args.model else None
    messages = 0
    reader = Reader(name)
    try:
        for n, entry in reader:
            v1 = handshake.feed(n, entry)
            if v1 is not None:
                raise _v1_error(name, v1[1])
            if "msg" in entry or "raw" in entry:
                messages += 1
            if validator is not None:
                validator.plain_values = reader.plain
            monitor.feed(n, entry)
            if kept is not None:
                kept.append((n, entry))
    except TranscriptError as e:
        raise UsageError(str(e)) from None
    v1 = handshake.finish()
    if v1 is not None:
        raise _v1_error(name, v1[1])
    if not messages:
        raise UsageError(f"{name}: no JSON-RPC message in the transcript (nothing to check)")
    note = None if handshake.initialize or handshake.v1_sign is None else _v1_note(name, handshake.v1_sign)
    return monitor.finish(), kept, note


def _trace(args) -> int:
    if args.max_nodes < 1:
        raise UsageError(f"--max-nodes must be positive, not {args.max_nodes}")
    if not args.model:
        refuse_options(args, "without --model", "--max-nodes")
    model = None
    if args.variant is not None:
        refuse_options(args, "with --variant (a variant names its base rule set)", "--rules")
        from .options import model_rules

        args.rules = None  # the default: not given
        model = args.variant_rules = model_rules(args)
        args.rules = model.spec  # the text the variant's rules follow
    if args.no_schema:
        refuse_options(args, "with --no-schema", "--schema")
    for name in args.files:
        input_file(name)
    validator, note = _schema(args)
    if validator is not None and model is not None:
        validator.proposals = model.proposals  # their methods are the variant's, each with its own schema
    report = []
    explanations = {}
    notes = [note] if note else []
    for name in args.files:
        with _young_collections():
            findings, kept, v1_note = _check_file(name, args, validator)
        report.append((name, findings))
        if v1_note:
            notes.append(v1_note)
        if args.model:
            from acp_lifecycle.model.config import rule_set
            from acp_lifecycle.sims.wire.modeltrace import explain

            explanations[name] = explain(kept, rules=model or rule_set(args.rules), max_nodes=args.max_nodes,
                                         complete=not args.partial)
            del kept
    for note in notes:
        print(f"acp-lifecycle: {note}", file=sys.stderr)
    violations = sum(1 for _, fs in report for f in fs if f.severity == "violation")
    unexplained = sum(1 for e in explanations.values() if not e.explained)
    (_print_json if args.json else _print_text)(args, report, explanations, validator is not None)
    return 1 if violations or unexplained else 0


# ---------------------------------------------------------------------------
# Output


def _summary(args, report, explanations) -> dict:
    total = sum(len(fs) for _, fs in report)
    violations = sum(1 for _, fs in report for f in fs if f.severity == "violation")
    out = {"files": len(report), "violations": violations, "warnings": total - violations,
           "rules": args.variant or args.rules}
    if args.model:
        out["unexplained"] = sum(1 for e in explanations.values() if not e.explained)
    return out


def _print_json(args, report, explanations, schema: bool) -> None:
    """JSON Lines: ``{"record": "finding", "file", "line", ...}`` per finding,
    ``{"record": "model", "file", "model"}`` per file with --model, ``{"record": "summary", ...}`` last."""
    write = sys.stdout.write
    for name, findings in report:
        for f in findings:
            write(json.dumps({"record": "finding", "file": name, **f.data()}, ensure_ascii=False) + "\n")
        if name in explanations:
            write(json.dumps({"record": "model", "file": name, "model": explanations[name].data()}, ensure_ascii=False) + "\n")
    write(json.dumps({"record": "summary", **_summary(args, report, explanations), "schema": schema}) + "\n")


def rule_sentence(clause: str, quote: str) -> str:
    """The line under a finding: the clause id and its quoted sentence (the source
    once: a JSON-RPC rule's clause is its source, which the quote already names)."""
    if not quote:
        return clause
    return quote if not clause or quote.startswith(f"{clause}: ") else f"{clause}: {quote}"


def wrap(text: str, width: int | None, indent: str = "", hang: str = _HANG) -> list[str]:
    """``text`` as lines of at most ``width`` columns (None: one line, never wrapped),
    the first indented by ``indent``, the others by ``hang``; long words are split."""
    if width is None:
        return [indent + " ".join(text.splitlines())]
    return textwrap.wrap(text, width=max(width, len(hang) + 20), initial_indent=indent, subsequent_indent=hang,
                         break_long_words=True, break_on_hyphens=False) or [indent]


def finding_lines(name: str, f, width: int | None) -> list[tuple[str, str]]:
    """A finding as ``[(line, style), ...]``: the finding, wrapped, then its rule's sentence."""
    lines = [(line, "") for line in wrap(f"{name}:{f.line}: {f.severity} {f.property}: {f.message}", width)]
    sentence = rule_sentence(f.clause, f.quote)
    if sentence:
        lines += [(line, "dim") for line in wrap(sentence, width, indent=_HANG, hang=_QUOTE_HANG)]
    return lines


def _print_text(args, report, explanations, schema: bool) -> None:
    from rich.console import Console
    from rich.text import Text

    terminal = sys.stdout.isatty()
    out = Console(highlight=False, soft_wrap=True, markup=False) if terminal else None
    width = out.width if out is not None else None

    def emit(line: str, style: str = "", severity: str | None = None) -> None:
        if out is None:
            sys.stdout.write(line + "\n")
            return
        text = Text(line, style=style)
        if severity is not None:
            at = line.find(f": {severity}")
            if at >= 0:
                text.stylize("bold red" if severity == "violation" else "yellow", at + 2, at + 2 + len(severity))
        out.print(text)

    for name, findings in report:
        if not findings:
            emit(f"{name}: no findings", "green")
        for f in findings:
            for i, (line, style) in enumerate(finding_lines(name, f, width)):
                emit(line, style, f.severity if i == 0 else None)
        if name in explanations:
            for line in wrap(f"{name}: model: {explanations[name].text()}", width):
                emit(line)
    s = _summary(args, report, explanations)
    line = f"{s['files']} file(s), {s['violations']} violation(s), {s['warnings']} warning(s) (rules {s['rules']})"
    if args.model:
        line += f", {s['unexplained']} not explained by the model"
    for part in wrap(line, width):
        emit(part)
