"""`acp-lifecycle record`: run a stdio agent, relay its traffic unchanged, write the transcript."""

from __future__ import annotations

from .common import UsageError, add_force, output_file, path_argument


def register(sub) -> None:
    p = sub.add_parser(
        "record",
        help="run a stdio ACP agent as a transparent proxy and record its transcript",
        usage="acp-lifecycle record [-h] [--force] [--conn LABEL] OUT.jsonl -- AGENT [ARGS ...]",
        description="Start AGENT, relay this process's stdin/stdout to it byte for byte (its stderr passes "
        "through), and write every JSON-RPC line as a transcript line to OUT.jsonl, flushed as it goes. "
        "Point your client at `acp-lifecycle record OUT.jsonl -- AGENT ...` instead of the agent, then run "
        "`acp-lifecycle trace OUT.jsonl`. Exit status: the agent's; 2, with one line and no OUT.jsonl written, when "
        "the agent cannot start (it exits with an error before writing anything; its stderr is held until its first "
        "output, for 3 s at most, and summarised in that line).",
    )
    path_argument(p, "out", kind="out-file", metavar="OUT.jsonl", help="the transcript to write")
    p.add_argument("stray", nargs="*", metavar="-- AGENT [ARGS ...]", help="the agent command line, after --")
    add_force(p, "OUT.jsonl if it exists")
    p.add_argument("--conn", default="stdio", metavar="LABEL", help="the connection label in the transcript (default: stdio)")
    p.set_defaults(run=_record, takes_program=True, program=None)


def _record(args) -> int:
    from acp_lifecycle.sims.wire.record import RecordError, record

    if not args.conn.strip():
        raise UsageError("--conn: give a label")
    out = output_file(args.out, force=args.force)
    if args.stray:
        raise UsageError(f"put the agent command after --: acp-lifecycle record {args.out} -- {' '.join(args.stray)}")
    if not args.program:
        raise UsageError("give the agent command after --: acp-lifecycle record OUT.jsonl -- AGENT [ARGS ...]")
    try:
        return record(out, args.program, force=args.force, conn=args.conn)
    except RecordError as e:
        raise UsageError(str(e)) from None
