"""`acp-lifecycle scenario`: named, scripted runs."""

from __future__ import annotations

import sys
from dataclasses import replace

from .common import (
    Column,
    UsageError,
    add_force,
    add_json,
    screen,
    output_file,
    path_argument,
    print_json,
    print_lines,
    print_table,
    refuse_options,
)
from .options import add_model_options, model_rules, parse_sets, with_sets


SUFFIXES = (".mmd", ".mermaid", ".md", ".png", ".svg")


def register(sub) -> None:
    p = sub.add_parser("scenario", help="run a named race scenario step by step (scenario --list)")
    p.add_argument("name", nargs="?", help="the scenario to run")
    p.add_argument("--list", action="store_true", help="list the scenarios")
    p.add_argument("--all", action="store_true", help="run every scenario and print one line each")
    add_json(p, "print the run (the list, the results) as JSON")
    path_argument(p, "--diagram", kind="out-file", suffixes=SUFFIXES,
                  help="also draw the run as a sequence chart (.mmd, .md, .png or .svg)")
    add_force(p, "an existing --diagram file")
    add_model_options(p, rules_default="each scenario's own (rfd for all but two, which are rfd+2.4.0's)")

    p.set_defaults(run=_scenario)



def _scenario(args) -> int:
    from acp_lifecycle.sims.render import trace_data
    from acp_lifecycle.sims.scenarios import SCENARIOS, ScenarioError, render, run

    if args.list:
        if args.name is not None:
            raise UsageError("--list takes no scenario name")
        refuse_options(args, "with --list", "--all", "--diagram", "--force", "--rules", "--variant", "--set")
        if args.json:
            print_json([{"name": sc.name, "title": sc.title, "summary": sc.summary} for sc in SCENARIOS.values()])
            return 0
        print_table(screen(), [Column("scenario", key=True), Column("what it shows")],
                    [[sc.name, sc.title] for sc in SCENARIOS.values()])
        return 0
    if args.all:
        if args.name is not None:
            raise UsageError("--all runs every scenario: give no NAME with it")
        refuse_options(args, "with --all (one chart is drawn for one scenario)", "--diagram", "--force")
    elif args.name is None:
        raise UsageError("name a scenario, or pass --all or --list")
    elif args.name not in SCENARIOS:
        raise UsageError(f"unknown scenario {args.name!r}; `acp-lifecycle scenario --list` shows them")
    if args.diagram is not None:
        output_file(args.diagram, option="--diagram", force=args.force, suffixes=SUFFIXES)
    elif args.force:
        raise UsageError("--force applies only with --diagram")
    names = list(SCENARIOS) if args.all else [args.name]
    sets = parse_sets(args.sets)
    given = args.rules is not None or args.variant is not None
    rules = model_rules(args) if given else None
    failed = 0
    results = []
    for name in names:
        sc = SCENARIOS[name]
        # the scenario's steps under other rules or bounds (its own by default)
        sc = replace(sc, rules=rules or sc.rules, config=with_sets(sc.config, sets))
        try:
            r = run(sc)
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
            print_lines(screen(), render(r))
        else:
            print(f"scenario {name} FAILED: {error}")
        if ok and args.diagram is not None:
            from acp_lifecycle.sims.diagrams import write_sequence

            sc = SCENARIOS[name]
            path = write_sequence(r.trace, args.diagram, title=f"{sc.name}: {sc.title}", note=f"expected: {sc.summary}",
                                  violation=False)
            print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print_json(results if args.all else results[0])
    return 1 if failed else 0
