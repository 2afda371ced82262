"""`acp-lifecycle bridge`: convert a transcript between ACP v1 and v2, or bridge a live agent (`bridge serve`)."""

from __future__ import annotations

import sys

from .common import (Parser, UsageError, action_help, add_force, add_json, input_file, output_file, path_argument,
                     refuse_options)


class _BridgeParser(Parser):
    """``bridge``'s parser: what follows ``--`` is the agent's command (``bridge serve``),
    kept whole so that the agent's own options stay its own."""

    def parse_known_args(self, args=None, namespace=None):
        args = list(sys.argv[1:] if args is None else args)
        agent = []
        if "--" in args:
            i = args.index("--")
            args, agent = args[:i], args[i + 1:]
        ns, extras = super().parse_known_args(args, namespace)
        ns.agent_command = agent
        return ns, extras


def register(sub) -> None:
    p = sub.add_parser(
        "bridge",
        help="bridge ACP v1 and v2: convert a transcript, or `bridge serve` a live agent over stdio",
        description="bridge --to v1|v2 FILE: the transcript as the other version's clients see it. "
                    "bridge serve --to v1|v2 [--record OUT.jsonl] -- AGENT_CMD [ARGS...]: run in place of "
                    "the agent: start it and translate live between the client on stdin/stdout and it.",
    )
    p.__class__ = _BridgeParser
    path_argument(p, "file", kind="in-file", metavar="FILE|serve",
                  help="a transcript (JSON Lines), or `serve` for a live bridge (the agent's command after --)")
    p.add_argument("--to", required=True, choices=("v1", "v2"),
                   help="the clients' version: v2 for a v1 agent (v2 clients), v1 for a v2 agent (a v1 client)")
    p.add_argument("--insertion", choices=("echo", "immediate"), help="--to v2: the bridge's insertion point (default echo)")
    p.add_argument("--background", choices=("forward", "drop"), help="--to v1: updates outside a v1 turn (default forward)")
    p.add_argument("--partial", action="store_true", help="the log is cut: do not report what is still pending at its end")
    add_json(p)
    path_argument(p, "--record", kind="out-file", suffixes=(".jsonl",), metavar="OUT.jsonl",
                  help="serve: record both sides (OUT.jsonl, OUT.v1.jsonl, OUT.v2.jsonl; {time} and {pid} are filled in)")
    add_force(p, "an existing record (serve --record)")
    p.action_helps = {"serve": _serve_help}  # `bridge serve --help`: serve's own
    p.set_defaults(run=_bridge)


def _serve_help() -> str:
    def add(p):
        p.add_argument("--to", required=True, choices=("v1", "v2"),
                       help="the client's version: v2 for a v1 agent (a v2 editor), v1 for a v2 agent (a v1 editor)")
        p.add_argument("--insertion", choices=("echo", "immediate"),
                       help="--to v2: the bridge's insertion point (default echo)")
        p.add_argument("--background", choices=("forward", "drop"),
                       help="--to v1: updates outside a v1 turn (default forward)")
        p.add_argument("--record", metavar="OUT.jsonl",
                       help="record both sides (OUT.jsonl, OUT.v1.jsonl, OUT.v2.jsonl; {time} and {pid} are filled in)")
        p.add_argument("--force", action="store_true", help="overwrite an existing record")
        p.add_argument("agent", nargs="+", metavar="AGENT_CMD [ARGS ...]", help="the agent's command line, after --")
    return action_help(
        "acp-lifecycle bridge serve",
        "Run in place of the agent: start AGENT_CMD and translate live between the client on stdin/stdout and "
        "it. stdin may be a pipe, a file (the client's input, read to its end) or /dev/null (no input). "
        "Problems go to stderr, never to the client's stream. docs/bridges.md.", add,
        usage="acp-lifecycle bridge serve [-h] --to {v1,v2}\n"
              "           [--insertion {echo,immediate}] [--background {forward,drop}]\n"
              "           [--record OUT.jsonl] [--force] -- AGENT_CMD [ARGS ...]")


def _options(args) -> dict:
    if args.to == "v2":
        refuse_options(args, "with --to v2 (it is the v1 client's option)", "--background")
        return {"insertion": args.insertion or "echo"}
    refuse_options(args, "with --to v1 (it is the v2 clients' option)", "--insertion")
    return {"background": args.background or "forward"}


def _bridge(args) -> int:
    agent = getattr(args, "agent_command", [])
    if args.file == "serve":
        return _serve(args, agent)
    if agent:
        raise UsageError("a command after -- applies to `bridge serve`, not to a transcript")
    refuse_options(args, "to a transcript (only to `bridge serve`)", "--record", "--force")
    options = _options(args)
    input_file(args.file)
    from acp_lifecycle.sims.bridge import bridge_command
    from acp_lifecycle.sims.bridge.serve import load_validators
    from acp_lifecycle.sims.wire.transcript import TranscriptError

    # The output gate of `bridge serve`: what its side's schema rejects is not written (invalid-output).
    validators, note = load_validators(args.to)
    if note:
        print(f"acp-lifecycle bridge: {note}", file=sys.stderr)
    try:
        return bridge_command(args.file, args.to, as_json=args.json, partial=args.partial, validators=validators, **options)
    except (TranscriptError, ValueError) as e:
        raise UsageError(str(e)) from None


def _serve(args, agent: list[str]) -> int:
    import asyncio

    from acp_lifecycle.sims.bridge.serve import RecordError, load_validators, record_paths, serve

    refuse_options(args, "to `bridge serve` (its output is the live session)", "--json", "--partial")
    if args.force and not args.record:
        raise UsageError("--force applies only with --record")
    options = _options(args)
    if not agent:
        raise UsageError("bridge serve needs the agent's command after --: bridge serve --to v2 -- AGENT_CMD [ARGS...]")
    import shutil

    if shutil.which(agent[0]) is None:
        raise UsageError(f"cannot start the agent {agent[0]}: no such command (or not executable)")
    record = None
    if args.record is not None:
        try:
            record = record_paths(args.record)
        except RecordError as e:
            raise UsageError(str(e)) from None
        for path in record:
            output_file(path, option="--record", force=args.force)
    validators, note = load_validators(args.to)
    if note:
        print(f"acp-lifecycle bridge: {note}", file=sys.stderr)
    try:
        return asyncio.run(serve(args.to, agent, record, options, validators))
    except RecordError as e:
        raise UsageError(str(e)) from None
