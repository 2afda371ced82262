"""`acp-lifecycle trace`: check JSON-RPC transcripts against the rules (and the model)."""

from __future__ import annotations

import json
import sys

from .common import UsageError, add_json, console, input_file, path_argument, refuse_options


def register(sub) -> None:
    from acp_lifecycle.model.wire_rules import DEFAULT_RULES, RULE_SETS  # not monitor: loaded only to check

    p = sub.add_parser("trace", help="check JSON-RPC transcripts (JSON Lines) against the rules")
    path_argument(p, "files", kind="in-file", nargs="+", metavar="FILE")
    p.add_argument("--rules", choices=RULE_SETS, default=DEFAULT_RULES,
                   help=f"the rule set: the RFD as written, or refined by the 2.4.0 schema text (default: {DEFAULT_RULES})")
    add_json(p, "print the findings as JSON")
    p.add_argument("--partial", action="store_true", help="the log is cut: skip rules about what must happen by the end")
    path_argument(p, "--schema", kind="in-json", help="the v2 schema.json to validate against (default: the pulled 2.4.0 copy)")
    p.add_argument("--no-schema", action="store_true", help="skip schema validation")
    p.add_argument("--model", action="store_true",
                   help="also ask whether any run of the model explains the transcript (the first line none does)")
    p.add_argument("--max-nodes", type=int, default=2_000_000, help="with --model: stop the search after this many nodes")

    p.set_defaults(run=_trace)


def _schema(args):
    """(validator or None, a one-line note when validation is skipped for want of a schema)."""
    if args.no_schema:
        return None, None
    from acp_lifecycle.sims.wire.schema import SchemaError, Validator, cache_path, locate

    if args.schema is None and not cache_path().is_file():
        return None, "schema validation skipped: no v2 schema pulled (run `acp-lifecycle schema pull` once, or pass --schema PATH)"
    try:
        return Validator(locate(args.schema)), None
    except SchemaError as e:
        raise UsageError(str(e)) from None


def _trace(args) -> int:
    from pathlib import Path

    from rich.markup import escape

    from acp_lifecycle.sims.wire.transcript import TranscriptError, check_transcript, parse

    if args.max_nodes < 1:
        raise UsageError(f"--max-nodes must be positive, not {args.max_nodes}")
    if not args.model:
        refuse_options(args, "without --model", "--max-nodes")
    if args.no_schema:
        refuse_options(args, "with --no-schema", "--schema")
    for name in args.files:
        input_file(name)
    schema_validator, note = _schema(args)
    parsed = []
    for name in args.files:
        try:
            entries = parse(Path(name))
        except TranscriptError as e:
            raise UsageError(str(e)) from None
        if not any("msg" in e or "raw" in e for _, e in entries):
            raise UsageError(f"{name}: no JSON-RPC message in the transcript (nothing to check)")
        parsed.append((name, entries))
    report = []
    violations = 0
    explanations = {}
    for name, entries in parsed:
        findings = check_transcript(entries, partial=args.partial, validator=schema_validator, rules=args.rules)
        violations += sum(1 for f in findings if f.severity == "violation")
        report.append((name, findings))
        if args.model:
            from acp_lifecycle.model.config import rule_set
            from acp_lifecycle.sims.wire.modeltrace import explain

            explanations[name] = explain(entries, rules=rule_set(args.rules), max_nodes=args.max_nodes,
                                         complete=not args.partial)
    unexplained = sum(1 for e in explanations.values() if not e.explained)
    if note:
        print(f"acp-lifecycle: {note}", file=sys.stderr)
    if args.json:
        files = []
        for n, fs in report:
            item = {"file": n, "violations": [f.data() for f in fs]}
            if n in explanations:
                item["model"] = explanations[n].data()
            files.append(item)
        print(json.dumps({"rules": args.rules, "schema": schema_validator is not None, "files": files}, indent=2))
    else:
        out = console()
        for name, findings in report:
            if not findings:
                out.print(f"{escape(name)}: [green]no findings[/]")
            for f in findings:
                style = "bold red" if f.severity == "violation" else "yellow"
                out.print(f"{escape(name)}:{f.line}: [{style}]{f.severity}[/] {f.property}: {escape(f.message)}", highlight=False)
                if f.quote:
                    out.print(f"    {f.clause}: {f.quote}", markup=False, highlight=False)
            if name in explanations:
                out.print(f"{name}: model: {explanations[name].text()}", markup=False, highlight=False)
        total = sum(len(fs) for _, fs in report)
        line = f"{len(report)} file(s), {violations} violation(s), {total - violations} warning(s) (rules {args.rules})"
        if args.model:
            line += f", {unexplained} not explained by the model"
        out.print(line, markup=False, highlight=False)
    return 1 if violations or unexplained else 0
