"""`acp-lifecycle bugs` and `configs`: what is built in."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.sims.configs import SUITES

from .common import console


def register(sub) -> None:
    p = sub.add_parser("bugs", help="list the seeded bugs")
    p.add_argument("--list", action="store_true", help="list them (the default)")
    p.add_argument("--json", action="store_true")

    p.set_defaults(run=_bugs)

    p = sub.add_parser("configs", help="list the named configurations and their members")
    p.add_argument("--json", action="store_true")

    p.set_defaults(run=_configs)


def _bugs(args) -> int:
    if args.json:
        print(json.dumps([
            {"name": b.name, "summary": b.summary, "breaks": b.breaks, "member": b.member, "source": b.source,
             "rules": dict(b.changes)} for b in BUGS.values()
        ], indent=2))
        return 0
    t = Table(show_edge=False, pad_edge=False)
    for col in ("bug", "breaks", "member", "source"):
        t.add_column(col)
    for b in BUGS.values():
        t.add_row(f"{b.name}\n  [dim]{b.summary}[/]", b.breaks, b.member, b.source)
    console().print(t)
    return 0


def _configs(args) -> int:
    if args.json:
        from dataclasses import asdict

        print(json.dumps({n: {"summary": s.summary, "members": [asdict(m) for m in s.members]} for n, s in SUITES.items()}, indent=2))
        return 0
    out = Console(highlight=False)
    for name, s in SUITES.items():
        out.print(f"[bold]{name}[/]: {s.summary}")
        for m in s.members:
            out.print(f"  {m.name}")
    return 0

