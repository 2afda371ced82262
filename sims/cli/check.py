"""`acp-lifecycle check`: explore a configuration exhaustively (or a bridged one) and print the verdicts."""

from __future__ import annotations

import argparse
import sys
import time

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from acp_lifecycle.model.bugs import get_bug
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.render import result_data, trace_lines
from acp_lifecycle.sims.search.check import SuiteResult, check_suite
from acp_lifecycle.sims.search.engine import default_workers

from .common import (
    Column,
    UsageError,
    add_force,
    add_json,
    screen,
    output_dir,
    path_argument,
    positive_int,
    print_json,
    print_lines,
    print_table,
    refuse_options,
)
from .options import add_model_options, model_rules, parse_sets, suite_with_sets, variant_expectations


def register(sub) -> None:
    p = sub.add_parser("check", help="explore a configuration exhaustively and check every property")
    p.add_argument("--config", default="default", help="named configuration or member (default: default)")
    add_model_options(p)
    p.add_argument("--bug", help="check a seeded bug instead of the RFD's rules (see `bugs --list`)")
    add_json(p, "print the result as JSON (traces included unless --no-traces)")
    p.add_argument("--max-states", type=positive_int, default=None,
                   help="stop with an error past this many states per member (default: 3,000,000; 10,000,000 for huge)")
    p.add_argument("--no-traces", action="store_true", help="do not print counterexamples and witnesses")
    path_argument(p, "--diagrams", kind="out-dir", help="write a sequence chart (Mermaid and PNG) of each counterexample into DIR")
    path_argument(p, "--export-traces", kind="out-dir", help="write each counterexample as a JSON Lines transcript into DIR")
    add_force(p, "files in a non-empty --diagrams or --export-traces directory")
    p.add_argument("--bridge", choices=("to-v1", "to-v2"),
                   help="check a bridged configuration: every run of the model through a v1<->v2 bridge "
                        "(to-v1: v2 agent, v1 client; to-v2: v1 agent, v2 clients)")
    p.add_argument("--bridge-bug", help="with --bridge: a seeded bridge bug (see docs/bridges.md)")
    p.add_argument("--workers", type=positive_int, default=None, metavar="N",
                   help=f"processes searching in parallel (default: the cores available, {default_workers()} here)")
    p.add_argument("--dask", nargs="?", const="local", default=None, metavar="SCHEDULER", type=_scheduler,
                   help="search on a Dask cluster: a local one, or the scheduler at this address "
                        "(pip install 'acp-lifecycle[dask]'; see docs/performance.md)")
    p.add_argument("--no-symmetry", action="store_true",
                   help="store every state, not one per class of states that differ only in client names and message IDs")
    p.add_argument("--por", action=argparse.BooleanOptionalAction, default=False,
                   help="partial-order reduction: expand one client's independent, invisible steps alone "
                        "(off by default: it saves under 5%% of the states; docs/performance.md)")

    p.set_defaults(run=_check)


# --- check ------------------------------------------------------------------


#: Seconds between two progress lines when standard error is not a terminal.
PROGRESS_EVERY = 30.0


def _progress_lines(name: str, every: float | None = None):
    """A progress callback for a log (CI, a pipe): one line on standard error every ``every``
    seconds of a long search, none for a search that ends sooner."""
    every = PROGRESS_EVERY if every is None else every
    start = last = time.monotonic()

    def progress(states, transitions, depth):
        nonlocal last
        now = time.monotonic()
        if now - last >= every:
            last = now
            print(f"acp-lifecycle check: {name}: {states:,} states, depth {depth}, {now - start:.0f} s",
                  file=sys.stderr, flush=True)

    return progress


#: Members small enough to bridge every terminal path (and the connection kept for multi-client).
BRIDGE_MEMBERS = (("tiny", None), ("failures", None), ("cancel-race", None), ("multi-client", "c0"))


def _check_bridge(args) -> int:
    from acp_lifecycle.sims.bridge import BRIDGE_BUGS, explore_bridge
    from acp_lifecycle.sims.bridge import PROPERTIES as BRIDGE_PROPERTIES

    refuse_options(args, "with --bridge (it checks fixed members under the RFD's rules)", "--config", "--bug", "--rules",
                   "--variant", "--set",
                   "--max-states", "--no-traces", "--diagrams", "--export-traces", "--force", "--workers", "--dask",
                   "--no-symmetry")
    to = args.bridge[3:]
    options = {}
    if args.bridge_bug is not None:
        if args.bridge_bug not in BRIDGE_BUGS or BRIDGE_BUGS[args.bridge_bug][0] != to:
            names = ", ".join(n for n, b in BRIDGE_BUGS.items() if b[0] == to)
            raise UsageError(f"unknown bridge bug {args.bridge_bug!r} for --bridge {args.bridge}; choose from {names}")
        options["bug"] = args.bridge_bug
    runs = [explore_bridge(m, to, conn=conn, **options) for m, conn in BRIDGE_MEMBERS]
    if args.json:
        return _bridge_json(args, to, runs)
    out = screen()
    agent, client = ("v2", "v1") if to == "v1" else ("v1", "v2")
    out.print(f"[bold]acp-lifecycle check --bridge {args.bridge}[/]: every terminal path of the model's {agent} agent, "
              f"bridged to {client} clients")
    t = Table(show_edge=False, pad_edge=False)
    for col in ("member", "paths", "transcripts", "seconds"):
        t.add_column(col, justify="left" if col == "member" else "right")
    for r in runs:
        t.add_row(r.member, f"{r.paths:,}", f"{r.transcripts:,}", f"{r.seconds:.2f}")
    out.print(t)
    bad = 0
    t = Table(show_edge=False, pad_edge=False)
    for col in ("bridge property (must hold)", "verdict", "member"):
        t.add_column(col)
    for p in BRIDGE_PROPERTIES:
        if p.to != to:
            continue
        hit = next(((r.member, r.violations[p.id]) for r in runs if p.id in r.violations), None)
        if hit:
            bad += 1
        t.add_row(p.id, "[bold red]VIOLATED[/]" if hit else "[green]holds[/]", hit[0] if hit else "")
    out.print(t)
    questions = {}
    for r in runs:
        for kind, (tr, problem) in r.questions.items():
            if kind not in questions or len(tr) < len(questions[kind][1]):
                questions[kind] = (r.member, tr, problem)
    for kind, (member, tr, problem) in sorted(questions.items()):
        out.print(f"[yellow]open question confirmed[/]: {kind} ({member}, {len(tr)} lines): {problem[1]}", highlight=False)
    for r in runs:
        for pid, (tr, msgs) in r.violations.items():
            out.print(f"[bold red]VIOLATED[/] {pid} ({r.member}, {len(tr)} lines): {msgs[0]}", highlight=False)
    out.print(f"{bad} bridge propert{'y' if bad == 1 else 'ies'} violated, {len(questions)} open question(s) confirmed")
    return 1 if bad else 0


def _bridge_json(args, to: str, runs) -> int:
    from acp_lifecycle.sims.bridge import PROPERTIES as BRIDGE_PROPERTIES

    props = []
    for p in BRIDGE_PROPERTIES:
        if p.to != to:
            continue
        hit = next(((r.member, r.violations[p.id]) for r in runs if p.id in r.violations), None)
        props.append({"id": p.id, "verdict": "violated" if hit else "holds", "member": hit[0] if hit else None,
                      "messages": list(hit[1][1]) if hit else [], "transcript": hit[1][0] if hit else None})
    questions = {}
    for r in runs:
        for kind, (tr, problem) in r.questions.items():
            if kind not in questions or len(tr) < len(questions[kind]["transcript"]):
                questions[kind] = {"kind": kind, "member": r.member, "problem": problem[1], "transcript": tr}
    bad = sum(1 for p in props if p["verdict"] == "violated")
    print_json({
        "bridge": args.bridge, "bridge_bug": args.bridge_bug, "ok": not bad,
        "members": [{"name": r.member, "paths": r.paths, "transcripts": r.transcripts, "seconds": round(r.seconds, 3)}
                    for r in runs],
        "properties": props, "open_questions": [questions[k] for k in sorted(questions)],
    })
    return 1 if bad else 0


def _check(args) -> int:
    if args.bridge:
        return _check_bridge(args)
    if args.bridge_bug is not None:
        raise UsageError("--bridge-bug needs --bridge")
    # everything the user gave is checked before the work starts
    rules = model_rules(args)
    rules = get_bug(args.bug).on(rules) if args.bug is not None else rules
    suite = get_suite(args.config, rules)  # with the members the rules' proposals add
    if not suite.exhaustive:
        raise UsageError(f"configuration {suite.name!r} is too large for exhaustive search; use `acp-lifecycle fuzz --config {suite.name}`")
    suite = suite_with_sets(suite, parse_sets(args.sets))
    if args.export_traces is not None:
        output_dir(args.export_traces, option="--export-traces", force=args.force)
    if args.diagrams is not None:
        output_dir(args.diagrams, option="--diagrams", force=args.force)
    if args.force and args.export_traces is None and args.diagrams is None:
        raise UsageError("--force applies only with --diagrams or --export-traces")
    workers = args.workers if args.workers is not None else default_workers()
    if args.dask is not None:
        from acp_lifecycle.sims.search.dask import require_dask

        require_dask()
    err = Console(stderr=True)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[states]:>9,} states  depth {task.fields[depth]}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    ) as bar:

        def on_member(i, cfg):
            name = f"{cfg.name} ({i + 1}/{len(suite.members)})"
            if not err.is_terminal:
                return _progress_lines(name)
            task = bar.add_task(name, total=None, states=0, depth=0)

            def progress(states, transitions, depth):
                bar.update(task, states=states, depth=depth)

            return progress

        with _search_cluster(args.dask, workers) as cluster:
            result = check_suite(suite, rules, max_states=args.max_states, on_member=on_member,
                                 symmetry=not args.no_symmetry, workers=workers, cluster=cluster, por=args.por)
    variant_expectations(result, args)
    if args.json:
        data = result_data(result)
        data["search"] = _search_data(result, workers, args.dask)
        if args.no_traces:
            for prop in data["properties"]:
                prop["trace"] = None
        print_json(data)
    else:
        _print_result(result, traces=not args.no_traces, search=_search_line(result, workers, args.dask))
    if args.export_traces is not None:
        from pathlib import Path

        from acp_lifecycle.sims.wire.transcript import dumps, export

        out = Path(args.export_traces)
        out.mkdir(parents=True, exist_ok=True)
        n = 0
        for pid, v in result.verdicts.items():
            if v.status == "violated" and v.trace:
                (out / f"{pid}.jsonl").write_text(dumps(export(v.trace)))
                n += 1
        print(f"wrote {n} transcript(s) into {out}", file=sys.stderr)
    if args.diagrams is not None:
        from acp_lifecycle.sims.diagrams import write_counterexamples

        written = write_counterexamples(result.verdicts, args.diagrams, found_in=result.found_in)
        print(f"wrote {len(written)} diagram file(s) into {args.diagrams}", file=sys.stderr)
    return 0 if result.ok else 1


_STYLE = {
    "holds": "green",
    "reached": "green",
    "limitation confirmed": "yellow",
    "open question confirmed": "yellow",
    "not applicable": "dim",
}


def _scheduler(text: str) -> str:
    if not text or text != text.strip() or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(
            f"invalid scheduler address {text!r}: give one such as tcp://HOST:8786, or none for a local cluster")
    return text


def _search_cluster(address, workers):
    if address is None:
        from contextlib import nullcontext

        return nullcontext(None)
    from acp_lifecycle.sims.search.dask import cluster

    return cluster(None if address == "local" else address, workers)


def _search_data(r: SuiteResult, workers: int, dask) -> dict:
    return {
        "symmetry": r.symmetry,
        "symmetry_broken": {m.config.name: m.symmetry_broken for m in r.members if m.symmetry_broken},
        "workers": max(m.workers for m in r.members),
        "dask": dask,
        "collision_probability": {"optimistic": r.collision[0], "actual_fingerprints": r.collision[1]},
    }


def _search_line(r: SuiteResult, workers: int, dask) -> str:
    broken = [m for m in r.members if m.symmetry_broken]
    if broken:
        m = broken[0]
        sym = (f"off in {len(broken)} member(s), turned off because a step broke what it assumes "
               f"({m.config.name}: {m.symmetry_broken})")
    else:
        sym = "on (client names, message IDs)" if r.symmetry else "off (--no-symmetry)"
    used = max(m.workers for m in r.members)
    if dask:
        where = f"Dask ({dask})"
    elif workers > 1 and len(r.members) > 1:
        where = f"the small members side by side in {min(workers, len(r.members))} processes"
        big = [m.config.name for m in r.members if m.workers > 1]
        if big:
            where += f", {', '.join(big)} on {used} worker processes"
    elif used > 1:
        where = f"{used} worker processes"
    elif workers > 1:
        where = "one process (no member was wide enough to split over workers)"
    else:
        where = "one process"
    return (f"Symmetry reduction {sym}; {where}. Probability that two distinct states shared a 64-bit "
            f"fingerprint: calculated (optimistic) {r.collision[0]:.1E}, based on the actual fingerprints "
            f"{r.collision[1]:.1E}.")


def _print_result(r: SuiteResult, traces: bool, search: str = "") -> None:
    out = screen()
    out.print(f"[bold]acp-lifecycle check[/]: configuration [bold]{r.suite.name}[/] ({r.suite.summary}), rules [bold]{r.rules.name}[/]")
    cols = [Column("member", key=True)] + [Column(c, justify="right") for c in ("states", "transitions", "depth", "terminal", "seconds")]
    rows = [[m.config.name, f"{m.states:,}", f"{m.transitions:,}", str(m.depth), f"{m.terminal_states:,}", f"{m.seconds:.2f}"]
            for m in r.members]
    rows.append(["[bold]total[/]", f"{r.states:,}", f"{r.transitions:,}", "", "", f"{r.seconds:.2f}"])
    if r.wall and abs(r.wall - r.seconds) >= 0.01:
        rows.append(["[bold]wall clock[/]", "", "", "", "", f"{r.wall:.2f}"])
    print_table(out, cols, rows)
    out.print()
    rows = []
    for pid, v in r.verdicts.items():
        style = _STYLE.get(v.outcome, "bold red")
        steps = str(len(v.trace)) if v.trace else ""
        expect = (v.expectation or "n/a").replace("_", " ") + (" (SHOULD)" if v.prop.level == "SHOULD" else "")
        rows.append([pid, v.prop.kind, expect, f"[{style}]{v.outcome}[/]", steps, r.found_in[pid]])
    print_table(out, [Column("property", key=True), Column("kind"), Column("expect"), Column("verdict"),
                      Column("steps", justify="right"), Column("member")], rows)
    if traces:
        for pid, v in r.verdicts.items():
            if v.status != "violated":
                continue
            out.print()
            style = _STYLE.get(v.outcome, "bold red")
            out.print(f"[{style}]{v.outcome}[/]: [bold]{pid}[/] (member {r.found_in[pid]}, {len(v.trace)} steps)")
            out.print(f"  {v.prop.summary}")
            if v.prop.quote_for(v.message):
                out.print(f"  {v.prop.clause_for(v.message)} {v.prop.quote_for(v.message)}")
            print_lines(out, trace_lines(v.trace, v.message))
    out.print()
    if search:
        out.print(search, highlight=False)
    bad = [pid for pid, v in r.verdicts.items() if not v.ok]
    if bad:
        out.print(f"[bold red]{len(bad)} of {len(r.verdicts)} verdicts do not match their expectation:[/] {', '.join(bad)}")
    else:
        out.print(f"[bold green]All {len(r.verdicts)} verdicts match their expectation[/] ({r.states:,} states, {r.wall or r.seconds:.1f} s).")
