"""`acp-lifecycle mutate`: put faults into the model agent and clients, and see which property catches each."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from acp_lifecycle.model.config import RULE_SETS
from acp_lifecycle.sims.configs import get_suite

from .common import Column, UsageError, add_json, positive_int, print_json, print_table, screen


def register(sub) -> None:
    p = sub.add_parser("mutate", help="run the mutants of the model agent and clients: kill matrix and mutation score")
    p.add_argument("--config", default="default", help="named configuration the mutants run against (default: default)")
    p.add_argument("--rules", choices=tuple(RULE_SETS),
                   help="run every mutant on this rule set (default: each mutant's own, mostly rfd+2.4.0)")
    p.add_argument("--mutant", action="append", metavar="NAME", help="only this mutant (repeatable)")
    p.add_argument("--kind", choices=("fault", "choice", "limitation"), help="only mutants of this kind")
    # --workers, as check names its processes; --jobs, the old name, still works
    p.add_argument("--workers", "--jobs", dest="workers", type=positive_int, default=1, metavar="N",
                   help="run mutants in this many processes (default: 1; --jobs is the same)")
    p.add_argument("--list", action="store_true", help="list the mutants and exit")
    p.add_argument("--markdown", action="store_true", help="print the report as Markdown (docs/mutants.md)")
    add_json(p)
    p.set_defaults(run=_mutate)


def _selected(args) -> list[str]:
    from acp_lifecycle.sims.mutate import all_mutants, get_mutant

    names = [get_mutant(n).name for n in args.mutant] if args.mutant else list(all_mutants())
    if args.kind:
        names = [n for n in names if all_mutants()[n].kind == args.kind]
    if not names:
        raise UsageError("no mutant matches")
    return names


def _mutate(args) -> int:
    from acp_lifecycle.sims.mutate.core import run_all

    if args.json and args.markdown:
        raise UsageError("--json and --markdown exclude each other")
    names = _selected(args)
    suite = get_suite(args.config)
    if not suite.exhaustive:
        raise UsageError(f"configuration {suite.name!r} is too large for exhaustive search")
    if args.list:
        return _list(args, names)
    err = Console(stderr=True)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task("mutants", total=len(names))
        report = run_all(names, args.config, args.rules, jobs=args.workers,
                         on_done=lambda r: bar.update(task, advance=1, description=r.mutant.name))
    if args.json:
        print_json(report.data())
    elif args.markdown:
        print(markdown(report), end="")
    else:
        _print(report)
    return 1 if report.problems else 0


def _list(args, names) -> int:
    from acp_lifecycle.sims.mutate import all_mutants

    ms = [all_mutants()[n] for n in names]
    if args.json:
        print_json([{"name": m.name, "kind": m.kind, "summary": m.summary, "clauses": list(m.clauses), "kills": m.kills,
                     "member": m.member, "rules": m.rules, "seeded": m.seeded, "equivalent": m.equivalent,
                     "source": m.source} for m in ms])
        return 0
    rows = [[f"{m.name}\n  [dim]{m.summary}[/]", m.kind + (" (equivalent)" if m.equivalent else ""), m.kills, m.member]
            for m in ms]
    print_table(screen(), [Column("mutant", key=True), Column("kind"), Column("expected to be caught by"),
                            Column("member")], rows)
    return 0


def _status(r) -> str:
    if r.killed:
        return "killed"
    return "equivalent" if r.mutant.equivalent else f"[bold red]{r.status.upper()}[/]"


def _print(report) -> None:
    out = screen()
    out.print(f"[bold]acp-lifecycle mutate[/]: {len(report.runs)} mutants against configuration "
              f"[bold]{report.config}[/]")
    rows = [[r.mutant.name + (" (seeded)" if r.mutant.seeded else ""), r.mutant.kind, _status(r), r.caught_by,
             str(r.length) if r.killed else "", r.member, f"{r.seconds:.2f}"] for r in report.runs]
    print_table(out, [Column("mutant", key=True), Column("kind"), Column("status"), Column("caught by"),
                      Column("steps", justify="right"), Column("member"), Column("seconds", justify="right")], rows)
    out.print()
    faults = report.faults
    killed = sum(r.killed for r in faults)
    slowest = max((r.seconds for r in report.runs if r.killed), default=0.0)
    out.print(f"Mutation score: [bold]{killed}/{len(faults)} = {100 * report.score:.1f}%[/] of the fault mutants "
              f"that are not equivalent ({sum(r.mutant.seeded for r in faults)} of them seeded bugs); "
              f"slowest kill {slowest:.2f} s.")
    for kind, what in (("choice", "choices taken away, noticed by a witness"),
                       ("limitation", "limitations taken away, noticed by a verdict")):
        rs = report.of(kind)
        if rs:
            out.print(f"{sum(r.killed for r in rs)}/{len(rs)} {what}.")
    survivors = [r for r in report.runs if not r.killed]
    if survivors:
        out.print()
        out.print("[bold]Survivors[/]")
        for r in survivors:
            why = f"equivalent: {r.mutant.equivalent}" if r.mutant.equivalent else "a hole: no property notices it"
            out.print(f"  {r.mutant.name}: {why}", highlight=False)
    for p in report.problems:
        out.print(f"[bold red]{p}[/]", highlight=False)


def markdown(report) -> str:
    lines = [
        "<!-- Written by `acp-lifecycle mutate --markdown --workers 2 > docs/mutants.md` (seconds vary from run to run). -->",
        "",
        f"# Mutants (configuration `{report.config}`)",
        "",
        "Faults put into the model agent and clients (`sims/mutate/mutants/`, one file each, the seeded bugs "
        "of `model/bugs.py`, and the value families of `sims/mutate/mutants/value_family.py`, `value:FIELD=NAMED->OTHER`: where "
        "a clause names a value, another one sent in its place), each run against every member of the configuration, its own member first, until "
        "a verdict of `check` changes. *caught by*: the property that noticed (the one the mutant expects when it "
        "is among them); *also*: the others; *steps*: the length of the counterexample; *seconds*: the "
        "explorations with the mutant in place. Kinds: `fault` (breaks a rule), `choice` (takes away a choice "
        "the spec allows: only a witness notices), `limitation` (takes away a limitation or open question of "
        "the RFD: the expected counterexample disappears).",
        "",
    ]
    faults = report.faults
    killed = sum(r.killed for r in faults)
    lines += [
        f"**Mutation score: {killed}/{len(faults)} = {100 * report.score:.1f}%** of the fault mutants that are not "
        f"equivalent ({sum(r.mutant.seeded for r in faults)} of them seeded bugs); slowest kill "
        f"{max((r.seconds for r in report.runs if r.killed), default=0):.2f} s.",
        "",
        "| mutant | kind | rules | status | caught by | also | steps | member | seconds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report.runs:
        status = "killed" if r.killed else ("equivalent" if r.mutant.equivalent else f"**{r.status}**")
        also = ", ".join(f"`{p}`" for p in sorted(r.changed) if p != r.caught_by)
        name = f"`{r.mutant.name}`" + (" (seeded)" if r.mutant.seeded else "")
        caught = f"`{r.caught_by}`" if r.caught_by else ""
        lines.append(f"| {name} | {r.mutant.kind} | {r.rules} | {status} | {caught} | {also} | "
                     f"{r.length if r.killed else ''} | {r.member} | {r.seconds:.2f} |")
    equiv = [r for r in report.runs if r.mutant.equivalent]
    if equiv:
        lines += ["", "## Equivalent mutants", "", "What each does is allowed by the spec:", ""]
        for r in equiv:
            lines.append(f"- `{r.mutant.name}` ({r.status}): {r.mutant.summary}. {r.mutant.equivalent}.")
    holes = [r for r in report.runs if not r.killed and not r.mutant.equivalent]
    lines += ["", "## Holes", ""]
    lines += [f"- `{r.mutant.name}`: {r.mutant.summary}" for r in holes] or ["None: every mutant that is not equivalent is caught."]
    return "\n".join(lines) + "\n"
