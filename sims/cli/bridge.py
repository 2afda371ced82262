"""`acp-lifecycle bridge`: convert a transcript between ACP v1 and v2."""

from __future__ import annotations

from .common import UsageError, path_argument


def register(sub) -> None:
    p = sub.add_parser("bridge", help="bridge a JSON-RPC transcript between ACP v1 and v2 (prompt lifecycle)")
    path_argument(p, "file", kind="in-file", metavar="FILE")
    p.add_argument("--to", required=True, choices=("v1", "v2"))
    p.add_argument("--insertion", choices=("echo", "immediate"), help="--to v2: the bridge's insertion point (default echo)")
    p.add_argument("--background", choices=("forward", "drop"), help="--to v1: updates outside a v1 turn (default forward)")
    p.add_argument("--partial", action="store_true", help="the log is cut: do not report what is still pending at its end")
    p.add_argument("--json", action="store_true")

    p.set_defaults(run=_bridge)


def _bridge(args) -> int:
    from acp_lifecycle.sims.bridge import bridge_command
    from acp_lifecycle.sims.wire.transcript import TranscriptError

    try:
        return bridge_command(args.file, args.to, insertion=args.insertion, as_json=args.json,
                              partial=args.partial, background=args.background)
    except (TranscriptError, ValueError) as e:
        raise UsageError(str(e)) from None
