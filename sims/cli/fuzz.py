"""`acp-lifecycle fuzz`: Hypothesis stateful exploration."""

from __future__ import annotations


from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from acp_lifecycle.model.bugs import get_bug
from acp_lifecycle.sims.configs import get_suite

from .common import UsageError, add_json, positive_int, print_json, print_lines, screen
from .options import add_model_options, model_rules, parse_sets, suite_with_sets, variant_expectation


def register(sub) -> None:
    p = sub.add_parser("fuzz", help="random stateful exploration with Hypothesis, shrinking a failure to a minimal run")
    p.add_argument("--config", help="named configuration or member (default: fuzz, 3 clients x 3 prompts; "
                                    "with --bug: the member the bug is seeded in, as in `bugs --list`)")
    p.add_argument("--bug", help="fuzz a seeded bug instead of the RFD's rules (on --rules or --variant, if given)")
    add_model_options(p)
    p.add_argument("--examples", type=positive_int, help="random runs per member (default: 200; with --bug 1000, "
                                                         "the run stops at the first failure)")
    p.add_argument("--steps", type=positive_int, help="steps drawn per run (default: 60 on fuzz, 20 on the small "
                                                      "configurations that check explores)")
    p.add_argument("--seed", type=int, default=0, help="random seed: same seed, same result (default: 0)")
    add_json(p)

    p.set_defaults(run=_fuzz)


def _fuzz(args) -> int:
    bug = get_bug(args.bug) if args.bug is not None else None
    rules = bug.on(model_rules(args)) if bug else model_rules(args)  # before Hypothesis loads: a note is at once
    from acp_lifecycle.sims.render import trace_data
    from acp_lifecycle.sims.search.fuzz import fuzz

    suite = get_suite(args.config if args.config is not None else bug.member if bug else "fuzz", rules)
    suite = suite_with_sets(suite, parse_sets(args.sets))
    if args.examples is None:
        args.examples = 1000 if bug else 200
    if args.steps is None:
        args.steps = 20 if suite.exhaustive else 60
    if not 1 <= args.examples <= 1_000_000:
        raise UsageError(f"--examples must be between 1 and 1000000, not {args.examples}")
    if not 1 <= args.steps <= 10_000:
        raise UsageError(f"--steps must be between 1 and 10000, not {args.steps}")
    # a variant is judged by its own expectations, as check --variant judges it (not its base's)
    expectation = variant_expectation(args) if bug is None else None
    err = Console(stderr=True)
    results = []
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} runs"),
                  TimeElapsedColumn(), console=err, transient=True, disable=not err.is_terminal) as bar:
        for cfg in suite.members:
            task = bar.add_task(f"fuzz {cfg.name}", total=args.examples)
            results.append(fuzz(cfg, rules, examples=args.examples, seed=args.seed, steps=args.steps,
                                progress=lambda n, task=task: bar.update(task, completed=min(n, args.examples)),
                                expectation=expectation))
            if not results[-1].ok:
                break
    ok = all(r.ok for r in results)
    if args.json:
        print_json({
            "config": suite.name, "rules": rules.name, "seed": args.seed, "examples": args.examples, "steps": args.steps, "ok": ok,
            "members": [{
                "name": r.config.name, "ok": r.ok, "examples": r.examples, "runs": r.runs, "seconds": round(r.seconds, 2),
                "distinct_states": len(r.states), "actions": sorted(r.actions), "sometimes": sorted(r.sometimes),
                "limitations": r.limitations, "property": r.property, "message": r.message,
                "hypothesis_steps": r.hypothesis_steps,
                "trace": trace_data(r.trace) if r.trace else None,
            } for r in results],
        })
        return 0 if ok else 1
    out = screen()
    for r in results:
        status = "[green]clean[/]" if r.ok else f"[bold red]{r.property} VIOLATED[/]"
        drawn = f"{r.runs} with shrinking" if not r.ok else f"{r.runs} drawn"
        out.print(f"{r.config.name}: {status} after {r.examples} run(s) ({drawn}), "
                  f"{len(r.states):,} distinct states, {len(r.actions)} action kinds, {r.seconds:.1f} s, seed {args.seed}")
        if r.limitations:
            out.print(f"  limitations and open questions seen: {', '.join(sorted(r.limitations))}")
        if not r.ok:
            how = (f"Hypothesis shrank it to {r.hypothesis_steps}, deleting steps left {len(r.trace)}"
                   if r.hypothesis_steps != len(r.trace) else "as Hypothesis shrank it")
            out.print(f"  minimal failing run ({len(r.trace)} steps; {how}):")
            print_lines(out, r.lines())  # each wrapped to the width (80 on a pipe)
    if ok:
        # Random runs prove nothing: say what a clean result covers, and how to draw more.
        out.print("(random runs: a clean result is no proof; --examples N or --seed N draws more)")
    return 0 if ok else 1
