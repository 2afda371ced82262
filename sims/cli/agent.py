"""`acp-lifecycle agent`: a v2 ACP agent on stdio whose every choice is one the model agent may make (docs/agent.md)."""

from __future__ import annotations

import json
import sys

from .common import UsageError, add_force, output_file, path_argument


def register(sub) -> None:
    from acp_lifecycle.model.config import RULE_SETS

    p = sub.add_parser("agent", help="run the model agent as a v2 ACP agent on stdio (for client authors)")
    p.add_argument("--seed", type=int, default=0, help="the seed of its random choices (default: 0)")
    p.add_argument("--choices", choices=("adversarial", "eager", "lazy"),
                   help="a policy instead of uniform random choices: the unusual choices first, the quickest, the slowest")
    p.add_argument("--rules", choices=tuple(RULE_SETS), default="rfd+2.4.0",
                   help="the rules the agent follows and judges the client by (default: rfd+2.4.0)")
    path_argument(p, "--record", kind="out-file", suffixes=(".jsonl",),
                  help="write the run as a transcript (JSON Lines, docs/transcripts.md)")
    path_argument(p, "--report", kind="out-file", suffixes=(".json",),
                  help="write the report (what the agent did, the client's findings) as JSON")
    add_force(p, "an existing --record or --report file")
    p.add_argument("--grace", type=float, default=1.0,
                   help="seconds a message may still be unread by the client when it sends its next one; the client's "
                        "rules judge it as having read everything older (default: 1)")
    p.add_argument("--idle-timeout", type=float, default=None,
                   help="stop after this many seconds without a message from the client (default: never)")
    p.add_argument("--no-schema", action="store_true",
                   help="do not validate the messages against the pulled v2 schema (as trace --no-schema)")
    p.set_defaults(run=_agent)


def _agent(args) -> int:
    from acp_lifecycle.model.config import rule_set
    from acp_lifecycle.sims.agent.stdio import run

    if not 0 <= args.grace <= 60:
        raise UsageError(f"--grace must be 0..60 seconds, not {args.grace}")
    if args.idle_timeout is not None and args.idle_timeout <= 0:
        raise UsageError(f"--idle-timeout must be positive, not {args.idle_timeout}")
    record = output_file(args.record, option="--record", force=args.force, suffixes=(".jsonl",)) if args.record else None
    report_path = output_file(args.report, option="--report", force=args.force, suffixes=(".json",)) if args.report else None
    stdout = open(sys.stdout.fileno(), "w", encoding="utf-8", closefd=False, newline="\n")
    stdin = open(sys.stdin.fileno(), "r", encoding="utf-8", errors="replace", closefd=False, newline="\n")
    validator = None if args.no_schema else _validator()
    rec = open(record, "w", encoding="utf-8") if record else None
    try:
        report = run(rule_set(args.rules), args.choices or "seed", args.seed, stdin, stdout, rec, args.grace,
                     args.idle_timeout, validator)
    finally:
        if rec is not None:
            rec.close()
    if report_path:
        report_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    _print(report)
    return 0


def _validator():
    """The pulled v2 schema's validator, as ``trace`` uses by default (None when none is pulled)."""
    from acp_lifecycle.sims.wire.schema import SchemaError, Validator, cache_path, locate

    if not cache_path().is_file():
        return None
    try:
        return Validator(locate(None), cache_size=0)
    except SchemaError:
        return None


def _print(report: dict) -> None:
    from .trace import rule_sentence

    err = sys.stderr
    shoulds = " (SHOULDs skipped on purpose: --choices adversarial)" if report["skips_shoulds"] else ""
    print(f"acp-lifecycle agent: {report['policy']} (seed {report['seed']}), rules {report['rules']}: "
          f"{len(report['sessions'])} session(s), {report['lines']} line(s)", file=err)
    print(f"  client: {report['client_violations']} violation(s), {report['client_warnings']} warning(s); "
          f"agent: {report['agent_violations']} violation(s), {report['agent_warnings']} warning(s){shoulds}",
          file=err)
    for f in report["findings"]:
        where = f"line {f['line']}" if f["line"] else "at the end"
        judge = "" if f["judge"] == "trace" else ", judged with the agent's clock"
        print(f"  {where}: {f['by']} {f['severity']} {f['property']} ({f['level']}{judge}): {f['message']}", file=err)
        sentence = rule_sentence(f["clause"], f["quote"])
        if sentence:
            print(f"      {sentence}", file=err)
    for s in report["sessions"]:
        for n in s["notes"]:
            print(f"  {s['session']} note: {n}", file=err)
