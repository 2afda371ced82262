"""The ``acp-lifecycle`` command.

Exit status: 0 when every verdict matches its expectation, 1 when one does not,
2 for bad usage (a one-line error, never a traceback).
"""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from acp_lifecycle.model.bugs import BUGS, get_bug
from acp_lifecycle.model.config import RFD_RULES, ConfigError

from .check import SuiteResult, check_suite
from .configs import SUITES, get_suite
from .explore import TooLarge
from .render import result_data, trace_lines

__all__ = ["main"]


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse prints usage too)
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="acp-lifecycle", description="Model checker for the ACP v2 prompt lifecycle.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    c = sub.add_parser("check", help="explore a configuration exhaustively and check every property")
    c.add_argument("--config", default="default", help="named configuration or member (default: default)")
    c.add_argument("--bug", help="check a seeded bug instead of the RFD's rules (see `bugs --list`)")
    c.add_argument("--json", action="store_true", help="print the result as JSON")
    c.add_argument("--max-states", type=int, default=3_000_000, help="stop with an error past this many states per member")
    c.add_argument("--no-traces", action="store_true", help="do not print counterexamples and witnesses")
    c.add_argument("--diagrams", metavar="DIR", help="write a sequence chart (Mermaid and PNG) of each counterexample into DIR")
    c.add_argument("--export-traces", metavar="DIR", help="write each counterexample as a JSON Lines transcript into DIR")
    c.add_argument("--bridge", choices=("to-v1", "to-v2"),
                   help="check a bridged configuration: every run of the model through a v1<->v2 bridge "
                        "(to-v1: v2 agent, v1 client; to-v2: v1 agent, v2 clients)")
    c.add_argument("--bridge-bug", help="with --bridge: a seeded bridge bug (see docs/bridges.md)")

    f = sub.add_parser("fuzz", help="random stateful exploration with Hypothesis, shrinking a failure to a minimal run")
    f.add_argument("--config", default="fuzz", help="named configuration or member (default: fuzz, 3 clients x 3 prompts)")
    f.add_argument("--bug", help="fuzz a seeded bug instead of the RFD's rules")
    f.add_argument("--examples", type=int, default=200, help="random runs per member (default: 200)")
    f.add_argument("--steps", type=int, default=60, help="steps drawn per run (default: 60)")
    f.add_argument("--seed", type=int, default=0, help="random seed: same seed, same result (default: 0)")
    f.add_argument("--json", action="store_true", help="print the result as JSON")

    b = sub.add_parser("bugs", help="list the seeded bugs")
    b.add_argument("--list", action="store_true", help="list them (the default)")
    b.add_argument("--json", action="store_true")

    g = sub.add_parser("configs", help="list the named configurations and their members")
    g.add_argument("--json", action="store_true")

    v = sub.add_parser("variants", help="check every spec variant and print the verdict matrix")
    v.add_argument("--config", default="default", help="named configuration (default: default)")
    v.add_argument("--variant", action="append", help="only this variant (repeatable)")
    v.add_argument("--json", action="store_true", help="print the matrix as JSON")
    v.add_argument("--markdown", action="store_true", help="print the matrix as Markdown")
    v.add_argument("--list", action="store_true", help="list the variants and exit")

    r = sub.add_parser("regress", help="re-run the verdict matrix and compare it with the agreed one")
    r.add_argument("--verdicts", default="docs/verdicts.json", help="the agreed matrix (default: docs/verdicts.json)")
    r.add_argument("--variant", action="append", help="only this variant (repeatable)")
    r.add_argument("--accept", action="store_true", help="rewrite the agreed matrix (and its .md) with the new verdicts")
    r.add_argument("--yes", action="store_true", help="with --accept: do not ask")

    sc = sub.add_parser("scenario", help="run a named race scenario step by step (scenario --list)")
    sc.add_argument("name", nargs="?", help="the scenario to run")
    sc.add_argument("--list", action="store_true", help="list the scenarios")
    sc.add_argument("--all", action="store_true", help="run every scenario and print one line each")
    sc.add_argument("--json", action="store_true", help="print the run as JSON")
    sc.add_argument("--diagram", metavar="FILE", help="also draw the run as a sequence chart (.mmd, .md, .png or .svg)")

    dg = sub.add_parser("diagrams", help="regenerate the diagrams from the model (diagrams/, docs/diagrams.md)")
    dg.add_argument("--out", default="diagrams", help="directory to write (default: diagrams)")
    dg.add_argument("--format", default="mermaid,dot,svg,png", help="comma-separated: mermaid,dot,svg,png")
    dg.add_argument("--check", action="store_true", help="exit 1 if the committed text diagrams are stale; write nothing")

    tr = sub.add_parser("trace", help="check JSON-RPC transcripts (JSON Lines) against the rules")
    tr.add_argument("files", nargs="+", metavar="FILE")
    tr.add_argument("--json", action="store_true", help="print the findings as JSON")
    tr.add_argument("--partial", action="store_true", help="the log is cut: skip rules about what must happen by the end")
    tr.add_argument("--schema", metavar="PATH", help="the v2 schema.json to validate against (default: the pulled 2.4.0 copy)")
    tr.add_argument("--no-schema", action="store_true", help="skip schema validation")
    tr.add_argument("--model", action="store_true",
                    help="also ask whether any run of the model explains the transcript (the first line none does)")
    tr.add_argument("--max-nodes", type=int, default=2_000_000, help="with --model: stop the search after this many nodes")

    br = sub.add_parser("bridge", help="bridge a JSON-RPC transcript between ACP v1 and v2 (prompt lifecycle)")
    br.add_argument("file", metavar="FILE")
    br.add_argument("--to", required=True, choices=("v1", "v2"))
    br.add_argument("--insertion", choices=("echo", "immediate"), help="--to v2: the bridge's insertion point (default echo)")
    br.add_argument("--background", choices=("forward", "drop"), help="--to v1: updates outside a v1 turn (default forward)")
    br.add_argument("--partial", action="store_true", help="the log is cut: do not report what is still pending at its end")
    br.add_argument("--json", action="store_true")

    sp = sub.add_parser("schema", help="the official v2 JSON schema (npm @agentclientprotocol/sdk@2.4.0)")
    sp.add_argument("action", choices=["pull", "path", "validate"],
                    help="pull: fetch and verify it into the user cache; path: print where it is; "
                         "validate: check every message the model renders on a configuration")
    sp.add_argument("--schema", metavar="PATH", help="use this schema.json instead of the pulled copy")
    sp.add_argument("--config", default="default", help="with validate: the configuration (default: default)")
    sp.add_argument("--bug", help="with validate: a seeded bug's rules")

    d = sub.add_parser("docs", help="regenerate docs/clauses.md and docs/bugs.md")
    d.add_argument("--out", default="docs", help="directory to write (default: docs)")
    d.add_argument("--check", action="store_true", help="exit 1 if the files there are stale, write nothing")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        if args.command == "check":
            return _check(args)
        if args.command == "bugs":
            return _bugs(args)
        if args.command == "fuzz":
            return _fuzz(args)
        if args.command == "configs":
            return _configs(args)
        if args.command == "docs":
            return _docs(args)
        if args.command == "scenario":
            return _scenario(args)
        if args.command == "variants":
            return _variants(args)
        if args.command == "diagrams":
            return _diagrams(args)
        if args.command == "trace":
            return _trace(args)
        if args.command == "schema":
            return _schema(args)
        if args.command == "bridge":
            return _bridge(args)
        if args.command == "regress":
            return _regress(args)
        _parser().print_help()
        return 2
    except (UsageError, ConfigError, TooLarge) as e:
        print(f"acp-lifecycle: error: {e}", file=sys.stderr)
        return 2
    except KeyError as e:
        print(f"acp-lifecycle: error: {e.args[0]}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("acp-lifecycle: interrupted", file=sys.stderr)
        return 130


# --- check ------------------------------------------------------------------


#: Members small enough to bridge every terminal path (and the connection kept for multi-client).
BRIDGE_MEMBERS = (("tiny", None), ("failures", None), ("cancel-race", None), ("multi-client", "c0"))


def _check_bridge(args) -> int:
    from .bridge import BRIDGE_BUGS, PROPERTIES as BRIDGE_PROPERTIES, explore_bridge

    to = args.bridge[3:]
    options = {}
    if args.bridge_bug:
        if args.bridge_bug not in BRIDGE_BUGS or BRIDGE_BUGS[args.bridge_bug][0] != to:
            names = ", ".join(n for n, b in BRIDGE_BUGS.items() if b[0] == to)
            raise UsageError(f"unknown bridge bug {args.bridge_bug!r} for --bridge {args.bridge}; choose from {names}")
        options["bug"] = args.bridge_bug
    runs = [explore_bridge(m, to, conn=conn, **options) for m, conn in BRIDGE_MEMBERS]
    out = _console()
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


def _check(args) -> int:
    if args.bridge:
        return _check_bridge(args)
    if args.bridge_bug:
        raise UsageError("--bridge-bug needs --bridge")
    suite = get_suite(args.config)
    if not suite.exhaustive:
        raise UsageError(f"configuration {suite.name!r} is too large for exhaustive search; use `acp-lifecycle fuzz --config {suite.name}`")
    rules = get_bug(args.bug).rules if args.bug else RFD_RULES
    if args.max_states < 1:
        raise UsageError(f"--max-states must be positive, not {args.max_states}")
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
            task = bar.add_task(f"{cfg.name} ({i + 1}/{len(suite.members)})", total=None, states=0, depth=0)

            def progress(states, transitions, depth):
                bar.update(task, states=states, depth=depth)

            return progress

        result = check_suite(suite, rules, max_states=args.max_states, on_member=on_member)
    if args.json:
        print(json.dumps(result_data(result), indent=2))
    else:
        _print_result(result, traces=not args.no_traces)
    if args.export_traces:
        from pathlib import Path

        from .transcript import dumps, export

        out = Path(args.export_traces)
        out.mkdir(parents=True, exist_ok=True)
        n = 0
        for pid, v in result.verdicts.items():
            if v.status == "violated" and v.trace:
                (out / f"{pid}.jsonl").write_text(dumps(export(v.trace)))
                n += 1
        print(f"wrote {n} transcript(s) into {out}", file=sys.stderr)
    if args.diagrams:
        from .diagrams import write_counterexamples

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


def _console() -> Console:
    # A pipe gets 80 columns from rich; the tables need more to stay unwrapped.
    probe = Console()
    return Console(highlight=False, soft_wrap=True, width=None if probe.is_terminal else 140)


def _print_result(r: SuiteResult, traces: bool) -> None:
    out = _console()
    out.print(f"[bold]acp-lifecycle check[/]: configuration [bold]{r.suite.name}[/] ({r.suite.summary}), rules [bold]{r.rules.name}[/]")
    t = Table(show_edge=False, pad_edge=False)
    for col in ("member", "states", "transitions", "depth", "terminal", "seconds"):
        t.add_column(col, justify="left" if col == "member" else "right")
    for m in r.members:
        t.add_row(m.config.name, f"{m.states:,}", f"{m.transitions:,}", str(m.depth), f"{m.terminal_states:,}", f"{m.seconds:.2f}")
    t.add_row("[bold]total[/]", f"{r.states:,}", f"{r.transitions:,}", "", "", f"{r.seconds:.2f}")
    out.print(t)
    out.print()
    t = Table(show_edge=False, pad_edge=False)
    for col in ("property", "kind", "expect", "verdict", "steps", "member"):
        t.add_column(col)
    for pid, v in r.verdicts.items():
        style = _STYLE.get(v.outcome, "bold red")
        steps = str(len(v.trace)) if v.trace else ""
        expect = v.prop.expect.replace("_", " ") + (" (SHOULD)" if v.prop.level == "SHOULD" else "")
        t.add_row(pid, v.prop.kind, expect, f"[{style}]{v.outcome}[/]", steps, r.found_in[pid])
    out.print(t)
    if traces:
        for pid, v in r.verdicts.items():
            if v.status != "violated":
                continue
            out.print()
            style = _STYLE.get(v.outcome, "bold red")
            out.print(f"[{style}]{v.outcome}[/]: [bold]{pid}[/] (member {r.found_in[pid]}, {len(v.trace)} steps)")
            out.print(f"  {v.prop.summary}")
            if v.prop.quote:
                out.print(f"  {v.prop.clauses[0]} {v.prop.quote}")
            for line in trace_lines(v.trace, v.message):
                out.print(line, markup=False)
    out.print()
    bad = [pid for pid, v in r.verdicts.items() if not v.ok]
    if bad:
        out.print(f"[bold red]{len(bad)} of {len(r.verdicts)} verdicts do not match their expectation:[/] {', '.join(bad)}")
    else:
        out.print(f"[bold green]All {len(r.verdicts)} verdicts match their expectation[/] ({r.states:,} states, {r.seconds:.1f} s).")


def _variant_names(args) -> list[str] | None:
    from acp_lifecycle.model.variants import get_variant

    return [get_variant(n).name for n in args.variant] if args.variant else None


def _variant_progress(err: Console, names: list[str]):
    """A progress bar over variants on stderr (only on a terminal)."""
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(), console=err,
                   transient=True, disable=not err.is_terminal)
    task = bar.add_task("variants", total=len(names))

    def on_variant(name):
        # called as each variant starts: the ones before it are done
        bar.update(task, description=f"variant {name}", completed=names.index(name))

    return bar, on_variant


def _variants(args) -> int:
    from acp_lifecycle.model.variants import VARIANTS

    from .variants import also_breaks, matrix, surprises, to_json, to_markdown

    if args.list:
        t = Table(show_edge=False, pad_edge=False)
        for col in ("variant", "summary", "expected to break"):
            t.add_column(col)
        for v in VARIANTS.values():
            t.add_row(v.name, v.summary, ", ".join(v.worse_on))
        _console().print(t)
        return 0
    names = _variant_names(args) or list(VARIANTS)
    suite = get_suite(args.config)
    if not suite.exhaustive:
        raise UsageError(f"configuration {suite.name!r} is too large for exhaustive search")
    bar, on_variant = _variant_progress(Console(stderr=True), names)
    with bar:
        m = matrix(args.config, names, on_variant)
    data = to_json(m)
    bad = {k: v for k, v in surprises(m).items() if v}
    if args.json:
        print(json.dumps(data, indent=2))
    elif args.markdown:
        print(to_markdown(data), end="")
    else:
        _print_matrix(data)
        for name, extra in also_breaks(m).items():
            if extra and name in data["variants"]:
                print(f"{name} also breaks: {', '.join(extra)}")
        for name, lines in bad.items():
            print(f"{name}: NOT AS DEFINED: " + "; ".join(lines))
    return 1 if bad else 0


def _print_matrix(data: dict) -> None:
    from acp_lifecycle.model.properties import PROPERTIES

    names = list(data["variants"])
    t = Table(show_edge=False, pad_edge=False, title=f"verdicts on configuration {data['config']} (✗ N: violated, N steps)")
    t.add_column("property", no_wrap=True)
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    for i, _ in enumerate(names):
        t.add_column(letters[i], no_wrap=True)
    for p in PROPERTIES:
        if p.kind == "sometimes":
            continue
        row = []
        for n in names:
            c = data["variants"][n][p.id]
            if c["verdict"] == "violated":
                row.append(f"[red]✗ {c['steps']}[/]")
            elif c["verdict"] == "holds":
                row.append("[green]holds[/]")
            else:
                row.append(f"[dim]{c['verdict']}[/]")
        t.add_row(p.id, *row)
    out = _console()
    out.print(t)
    out.print("  ".join(f"{letters[i]} = {n}" for i, n in enumerate(names)))


def _regress(args) -> int:
    from pathlib import Path

    from acp_lifecycle.model.variants import VARIANTS

    from .variants import compare, describe_diff, load, matrix, to_json, to_markdown

    path = Path(args.verdicts)
    if not path.is_file():
        raise UsageError(f"no agreed matrix at {path}; run from the project's checkout or pass --verdicts PATH")
    try:
        agreed = load(path)
    except ValueError as e:
        raise UsageError(f"{path} is not a verdict matrix: {e}") from None
    names = _variant_names(args) or list(VARIANTS)
    bar, on_variant = _variant_progress(Console(stderr=True), names)
    with bar:
        m = matrix(agreed.get("config", "default"), names, on_variant)
    diffs = compare(agreed, m)
    if args.variant:
        diffs = [d for d in diffs if d[0] in names]
    if not diffs:
        print(f"regress: {len(names)} variant(s) x {len(to_json(m)['variants'][names[0]])} properties match {path}")
        return 0
    for d in diffs:
        for line in describe_diff(m, d):
            print(line)
    print(f"regress: {len(diffs)} verdict(s) differ from {path}")
    if not args.accept:
        return 1
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError("--accept needs --yes when there is no terminal to ask on")
        answer = input(f"Rewrite {path} with these {len(diffs)} change(s)? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("regress: nothing written")
            return 1
    fresh = to_json(m)
    merged = {"config": fresh["config"], "variants": dict(agreed.get("variants", {}))}
    merged["variants"].update(fresh["variants"])
    merged["variants"] = {n: merged["variants"][n] for n in VARIANTS if n in merged["variants"]}
    path.write_text(json.dumps(merged, indent=2) + "\n")
    md = path.with_suffix(".md")
    md.write_text(to_markdown(merged))
    print(f"regress: wrote {path} and {md}")
    return 0


def _scenario(args) -> int:
    from .render import trace_data
    from .scenarios import SCENARIOS, ScenarioError, render, run

    if args.list or (not args.name and not args.all):
        t = Table(show_edge=False, pad_edge=False)
        t.add_column("scenario", no_wrap=True)
        t.add_column("what it shows")
        for sc in SCENARIOS.values():
            t.add_row(sc.name, sc.title)
        _console().print(t)
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
                from .diagrams import write_sequence

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


def _validator(args):
    """The schema validator for --schema/the pulled copy, or None with --no-schema."""
    if getattr(args, "no_schema", False):
        return None
    from .schema import SchemaError, Validator, locate

    try:
        return Validator(locate(args.schema))
    except SchemaError as e:
        raise UsageError(str(e)) from None


def _bridge(args) -> int:
    from .bridge import bridge_command
    from .transcript import TranscriptError

    try:
        return bridge_command(args.file, args.to, insertion=args.insertion, as_json=args.json,
                              partial=args.partial, background=args.background)
    except (TranscriptError, ValueError) as e:
        raise UsageError(str(e)) from None


def _schema(args) -> int:
    from .schema import SchemaError, locate, pull

    try:
        path = pull() if args.action == "pull" else locate(args.schema)
    except SchemaError as e:
        raise UsageError(str(e)) from None
    if args.action != "validate":
        print(path)
        return 0
    from .schema import Validator, validate_model

    suite = get_suite(args.config)
    if not suite.exhaustive:
        raise UsageError(f"configuration {suite.name!r} is too large to validate exhaustively")
    rules = get_bug(args.bug).rules if args.bug else RFD_RULES
    validator = Validator(path)
    bad = 0
    for cfg in suite.members:
        r = validate_model(validator, cfg, rules)
        print(f"{cfg.name}: {r.states:,} states, {r.messages:,} messages, {len(r.problems)} problem(s)")
        for problem, example in r.problems.items():
            bad += 1
            print(f"  {problem}\n    e.g. {example[0]} {json.dumps(example[3], separators=(',', ':'))}")
    return 1 if bad else 0


def _trace(args) -> int:
    from pathlib import Path

    from .transcript import TranscriptError, check_transcript, parse

    validator = _validator(args)
    report = []
    try:
        parsed = [(f, parse(Path(f))) for f in args.files]
    except TranscriptError as e:
        raise UsageError(str(e)) from None
    violations = 0
    explanations = {}
    if args.max_nodes < 1:
        raise UsageError(f"--max-nodes must be positive, not {args.max_nodes}")
    for name, entries in parsed:
        findings = check_transcript(entries, partial=args.partial, validator=validator)
        violations += sum(1 for f in findings if f.severity == "violation")
        report.append((name, findings))
        if args.model:
            from .modeltrace import explain

            explanations[name] = explain(entries, max_nodes=args.max_nodes, complete=not args.partial)
    unexplained = sum(1 for e in explanations.values() if not e.explained)
    if args.json:
        files = []
        for n, fs in report:
            item = {"file": n, "violations": [f.data() for f in fs]}
            if n in explanations:
                item["model"] = explanations[n].data()
            files.append(item)
        print(json.dumps({"files": files}, indent=2))
    else:
        out = _console()
        for name, findings in report:
            if not findings:
                out.print(f"{name}: [green]no findings[/]")
            for f in findings:
                style = "bold red" if f.severity == "violation" else "yellow"
                out.print(f"{name}:{f.line}: [{style}]{f.severity}[/] {f.property}: {f.message}", highlight=False)
                if f.quote:
                    out.print(f"    {f.clause}: {f.quote}", markup=False, highlight=False)
            if name in explanations:
                out.print(f"{name}: model: {explanations[name].text()}", markup=False, highlight=False)
        total = sum(len(fs) for _, fs in report)
        line = f"{len(report)} file(s), {violations} violation(s), {total - violations} warning(s)"
        if args.model:
            line += f", {unexplained} not explained by the model"
        out.print(line)
    return 1 if violations or unexplained else 0


def _diagrams(args) -> int:
    from pathlib import Path

    from .diagrams import stale, write_all, write_docs

    out = Path(args.out)
    if args.check:
        old = stale(out)
        for p in old:
            print(f"stale: {p}")
        return 1 if old else 0
    formats = [f.strip() for f in args.format.split(",") if f.strip()]
    try:
        written = write_all(out, formats)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if out == Path("diagrams"):
        written.append(write_docs("docs/diagrams.md"))
    for p in written:
        print(f"wrote {p}")
    return 0


def _docs(args) -> int:
    from pathlib import Path

    from .docsgen import GENERATED, write

    out = Path(args.out)
    if args.check:
        stale = [n for n, make in GENERATED.items() if not (out / n).exists() or (out / n).read_text() != make()]
        for n in stale:
            print(f"stale: {out / n}")
        return 1 if stale else 0
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a directory")
    for path in write(out):
        print(f"wrote {path}")
    return 0


def _fuzz(args) -> int:
    from .fuzz import fuzz
    from .render import trace_data

    suite = get_suite(args.config)
    rules = get_bug(args.bug).rules if args.bug else RFD_RULES
    if not 1 <= args.examples <= 1_000_000:
        raise UsageError(f"--examples must be between 1 and 1000000, not {args.examples}")
    if not 1 <= args.steps <= 10_000:
        raise UsageError(f"--steps must be between 1 and 10000, not {args.steps}")
    err = Console(stderr=True)
    results = []
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} runs"),
                  TimeElapsedColumn(), console=err, transient=True, disable=not err.is_terminal) as bar:
        for cfg in suite.members:
            task = bar.add_task(f"fuzz {cfg.name}", total=args.examples)
            results.append(fuzz(cfg, rules, examples=args.examples, seed=args.seed, steps=args.steps,
                                progress=lambda n, task=task: bar.update(task, completed=min(n, args.examples))))
            if not results[-1].ok:
                break
    ok = all(r.ok for r in results)
    if args.json:
        print(json.dumps({
            "config": suite.name, "rules": rules.name, "seed": args.seed, "ok": ok,
            "members": [{
                "name": r.config.name, "ok": r.ok, "examples": r.examples, "runs": r.runs, "seconds": round(r.seconds, 2),
                "distinct_states": len(r.states), "actions": sorted(r.actions), "sometimes": sorted(r.sometimes),
                "limitations": r.limitations, "property": r.property, "message": r.message,
                "trace": trace_data(r.trace) if r.trace else None,
            } for r in results],
        }, indent=2))
        return 0 if ok else 1
    out = _console()
    for r in results:
        status = "[green]clean[/]" if r.ok else f"[bold red]{r.property} VIOLATED[/]"
        drawn = f"{r.runs} with shrinking" if not r.ok else f"{r.runs} drawn"
        out.print(f"{r.config.name}: {status} after {r.examples} run(s) ({drawn}), "
                  f"{len(r.states):,} distinct states, {len(r.actions)} action kinds, {r.seconds:.1f} s, seed {args.seed}")
        if r.limitations:
            out.print(f"  limitations and open questions seen: {', '.join(sorted(r.limitations))}")
        if not r.ok:
            out.print(f"  minimal failing run ({len(r.trace)} steps):")
            for line in r.lines():
                out.print(line, markup=False, highlight=False)
    return 0 if ok else 1


# --- listings -------------------------------------------------------------------


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
    _console().print(t)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
