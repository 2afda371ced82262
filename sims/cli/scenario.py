"""`acp-lifecycle scenario`: named, scripted runs."""

from __future__ import annotations

import json
import sys

from rich.table import Table

from .common import UsageError, console


def register(sub) -> None:
    p = sub.add_parser("scenario", help="run a named race scenario step by step (scenario --list)")
    p.add_argument("name", nargs="?", help="the scenario to run")
    p.add_argument("--list", action="store_true", help="list the scenarios")
    p.add_argument("--all", action="store_true", help="run every scenario and print one line each")
    p.add_argument("--json", action="store_true", help="print the run as JSON")
    p.add_argument("--diagram", metavar="FILE", help="also draw the run as a sequence chart (.mmd, .md, .png or .svg)")

    p.set_defaults(run=_scenario)


def _scenario(args) -> int:
    from acp_lifecycle.sims.render import trace_data
    from acp_lifecycle.sims.scenarios import SCENARIOS, ScenarioError, render, run

    if args.list or (not args.name and not args.all):
        t = Table(show_edge=False, pad_edge=False)
        t.add_column("scenario", no_wrap=True)
        t.add_column("what it shows")
        for sc in SCENARIOS.values():
            t.add_row(sc.name, sc.title)
        console().print(t)
        return 0 if args.list or args.all else 2
    names = list(SCENARIOS) if args.all else [args.name]
    if args.diagram and not args.diagram.endswith((".mmd", ".mermaid", ".md", ".png", ".svg")):
        raise UsageError(f"--diagram {args.diagram}: choose a .mmd, .md, .png or .svg file name")
    if args.name and args.name not in SCENARIOS:
        raise UsageError(f"unknown scenario {args.name!r}; `acp-lifecycle scenario --list` shows them")
    failed = 0
    results = []
    for name in names:
        try:
            r = run(name)
            ok, error = True, ""
        except (ScenarioError, AssertionError) as e:
            r, ok, error = None, False, str(e).splitlines()[0] if str(e) else type(e).__name__
            failed += 1
        if args.json:
            results.append({"scenario": name, "ok": ok, "error": error,
                            "steps": trace_data(r.trace) if r else None})
        elif args.all:
            print(f"{'ok  ' if ok else 'FAIL'} {name}" + (f": {error}" if error else ""))
        elif ok:
            for line in render(r):
                print(line)
            if args.diagram:
                from acp_lifecycle.sims.diagrams import write_sequence

                sc = SCENARIOS[name]
                try:
                    path = write_sequence(r.trace, args.diagram, title=f"{sc.name}: {sc.title}", note=f"expected: {sc.summary}", violation=False)
                except ValueError as e:
                    raise UsageError(str(e)) from None
                print(f"wrote {path}", file=sys.stderr)
        else:
            print(f"scenario {name} FAILED: {error}")
    if args.json:
        print(json.dumps(results if args.all else results[0], indent=2))
    return 1 if failed else 0
