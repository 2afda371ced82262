"""`acp-lifecycle bugs` and `configs`: what is built in."""

from __future__ import annotations

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.sims.configs import SUITES

from .common import Column, add_json, print_json, print_table, screen


def register(sub) -> None:
    p = sub.add_parser("bugs", help="list the seeded bugs")
    p.add_argument("--list", action="store_true", help="list them (the default)")
    add_json(p)

    p.set_defaults(run=_bugs)

    p = sub.add_parser("configs", help="list the named configurations and their members")
    add_json(p)

    p.set_defaults(run=_configs)


def _bugs(args) -> int:
    if args.json:
        print_json([
            {"name": b.name, "summary": b.summary, "breaks": b.breaks, "member": b.member, "source": b.source,
             "rules": dict(b.changes)} for b in BUGS.values()
        ])
        return 0
    rows = [[f"{b.name}\n  [dim]{b.summary}[/]", b.breaks, b.member, b.source] for b in BUGS.values()]
    print_table(screen(), [Column("bug", key=True), Column("breaks"), Column("member"), Column("source")], rows)
    return 0


def _configs(args) -> int:
    if args.json:
        from dataclasses import asdict

        print_json([{"name": n, "summary": s.summary, "members": [asdict(m) for m in s.members]} for n, s in SUITES.items()])
        return 0
    rows = [[name, s.summary, ", ".join(m.name for m in s.members),
             "exhaustive (check)" if s.exhaustive else "random (fuzz)"] for name, s in SUITES.items()]
    print_table(screen(), [Column("configuration", key=True), Column("summary"), Column("members"), Column("search")], rows,
                legend="`check --config NAME` takes a configuration or one of its members")
    return 0

