"""`acp-lifecycle diff A B`: what one rule set lets agents do on the wire that the other does not.

Exit status: 0 when there is no observable difference within the bounds, 1
when there is one, 2 for bad usage.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import fields
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from acp_lifecycle.model.config import Config
from acp_lifecycle.model.wire import summary
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.render import trace_data, trace_lines

from .common import (
    UsageError,
    add_force,
    add_json,
    screen,
    output_dir,
    path_argument,
    positive_int,
    print_json,
    print_lines,
    refuse_options,
)
from .options import add_model_options, parse_sets, suite_with_sets

#: What the diff observes, in one sentence (printed with the bounds, and in --json).
OBSERVED = (
    "every JSON-RPC message on each connection, in the order sent; connection closures; "
    "the end of a run; ids up to consistent renaming"
)


def register(sub) -> None:
    p = sub.add_parser(
        "diff",
        help="what one variant lets agents do on the wire that another does not (distinguishing runs)",
        description="Find the distinguishing runs of two rule sets on a configuration: the shortest "
        "observable prefix both allow, followed by one message only one allows, for A-not-B and "
        "B-not-A, one shortest witness per kind of message. Exit 0: no observable difference "
        "within the bounds; 1: differences; 2: bad usage.",
    )
    p.add_argument("a", metavar="A", help="a spec variant (`acp-lifecycle variants --list`) or bug:NAME (a seeded bug)")
    p.add_argument("b", metavar="B", help="the other rule set, as A")
    p.add_argument("--config", default="default", help="named configuration or member (default: default)")
    add_json(p, "print the result as JSON, one line on stdout (every witness's full run included)")
    p.add_argument("--runs", action="store_true",
                   help="print each witness's full run: every step, internal ones too")
    path_argument(p, "--diagrams", kind="out-dir",
                  help="write a sequence chart (Mermaid and PNG) of each witness into DIR")
    add_force(p, "files in a non-empty --diagrams directory")
    p.add_argument("--max-states", type=positive_int, default=3_000_000,
                   help="stop with an error past this many product states per member and direction")
    add_model_options(p, rules=False)  # A and B name the rules; --set the bounds
    p.set_defaults(run=_diff)


def _diff(args) -> int:
    from acp_lifecycle.sims.diff import diff_suite, rule_set

    ra, rb = rule_set(args.a), rule_set(args.b)
    suite = get_suite(args.config)
    if not suite.exhaustive:
        raise UsageError(f"configuration {suite.name!r} is too large for exhaustive search")
    suite = suite_with_sets(suite, parse_sets(args.sets))
    if args.diagrams is None:
        refuse_options(args, "without --diagrams", "--force")
    if args.json:
        refuse_options(args, "with --json (the JSON has every full run)", "--runs")
    out_dir = output_dir(args.diagrams, option="--diagrams", force=args.force) if args.diagrams is not None else None

    err = Console(stderr=True)
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(), console=err,
                   transient=True, disable=not err.is_terminal)
    task = bar.add_task("diff", total=len(suite.members))
    names = [m.name for m in suite.members]

    def on_member(name: str) -> None:
        bar.update(task, description=f"member {name}", completed=names.index(name))

    with bar:
        d = diff_suite(suite, ra, rb, max_nodes=args.max_states, on_member=on_member)
    written = _write_diagrams(d, out_dir) if out_dir else []
    if args.json:
        data = diff_data(d)
        if written:
            data["diagrams"] = [str(p) for p in written]
        print_json(data)
    else:
        print_lines(screen(), diff_lines(d, runs=args.runs))
        for p in written:
            err.print(f"wrote {p}", highlight=False)
    return 1 if d.different else 0


# --- data and text -------------------------------------------------------------------


def bounds(cfg: Config) -> dict:
    """The budgets of a member that differ from a one-client, one-prompt configuration."""
    base = Config()
    return {f.name: getattr(cfg, f.name) for f in fields(cfg)
            if f.name != "name" and getattr(cfg, f.name) != getattr(base, f.name)}


def _bounds_text(cfg: Config) -> str:
    b = bounds(cfg)
    return " ".join(f"{k}={','.join(v) if isinstance(v, tuple) else v}" for k, v in b.items()) or "(the defaults)"


def witness_data(w) -> dict:
    from acp_lifecycle.sims.diff import observed_lines

    obs = observed_lines(w)
    return {
        "kind": w.kind,
        "allowed_by": w.allowed,
        "refused_by": w.refused,
        "member": w.member,
        "messages": len(w.events),
        "steps": len(w.run),
        "observed": obs[:-1],
        "distinguishing": obs[-1],
        "run": trace_data(w.run),
    }


def diff_data(d) -> dict:
    def direction(x) -> dict:
        return {"product_states": x.nodes, "transitions": x.transitions, "states": x.states,
                "subsets": x.subsets, "seconds": round(x.seconds, 3), "kinds": list(x.witnesses)}

    return {
        "a": d.a.name,
        "b": d.b.name,
        "config": d.suite.name,
        "observed": OBSERVED,
        "different": d.different,
        "seconds": round(d.seconds, 3),
        "members": [
            {"name": m.config.name, "bounds": bounds(m.config), "a_not_b": direction(m.a_not_b),
             "b_not_a": direction(m.b_not_a)}
            for m in d.members
        ],
        "only_a": [witness_data(w) for w in d.only_a.values()],
        "only_b": [witness_data(w) for w in d.only_b.values()],
    }


def _entry_text(o: dict) -> str:
    if o.get("event") == "end":
        return "(the run ends: no step is left)"
    if o.get("event") == "closed":
        return f"{o['conn']:<5} connection closes"
    arrow = "->" if o["from"] == "client" else "<-"
    return f"{o['conn']:<5} {arrow} {summary(o['msg'])}"


def witness_lines(w, runs: bool = False) -> list[str]:
    """A witness for people: each observed message with the step that sent it, the distinguishing one marked."""
    from acp_lifecycle.sims.diff import observed_lines

    obs = observed_lines(w)
    n, k = len(w.events), len(w.run)
    lines = [f"    member {w.member}: {n} message{'s' * (n != 1)}, {k} step{'s' * (k != 1)}; "
             f"{w.refused} allows all but !"]
    for i, o in enumerate(obs):
        mark = "!" if i == len(obs) - 1 else " "
        action = w.run[o["step"] - 1][1].action[0]
        text = _entry_text(o)
        lines.append(f"    {mark} {text:<47} {o['step']:>2} {action}")
    if runs:
        lines.append(f"    the run of {w.allowed}, every step:")
        lines += ["    " + line for line in trace_lines(w.run, compact=True)]
    return lines


def _kinds(groups: dict) -> str:
    return f"{len(groups)} kind{'s' * (len(groups) != 1)} of message"


def diff_lines(d, runs: bool = False) -> list[str]:
    a, b = d.a.name, d.b.name
    n = len(d.members)
    lines = [f"acp-lifecycle diff {a} {b}: configuration {d.suite.name} ({n} member{'s' * (n != 1)})", ""]
    if not d.different:
        lines += [f"No observable difference between {a} and {b} within the bounds.", ""]
    else:
        lines += textwrap.wrap(f"{a} and {b} differ: {_kinds(d.only_a)} only {a} allows, {_kinds(d.only_b)} "
                               f"only {b} allows. Each is shown by its shortest run; ! marks the message "
                               "the other does not allow after the same observations.", 80) + [""]
    for allowed, refused, groups in ((a, b, d.only_a), (b, a, d.only_b)):
        if not d.different:
            break
        if not groups:
            lines += [f"Only {allowed} allows: nothing ({refused} allows every run of {allowed}).", ""]
            continue
        lines += [f"Only {allowed} allows ({_kinds(groups)}, shortest first):", ""]
        for i, (k, w) in enumerate(groups.items(), 1):
            lines.append(f"{i:>2}. {k}")
            lines += witness_lines(w, runs)
            lines.append("")
    lines += textwrap.wrap(f"Observed: {OBSERVED}.", 80)
    lines.append("Bounds (each member is explored exhaustively, nothing beyond):")
    width = max(len(m.config.name) for m in d.members)
    for m in d.members:
        lines += textwrap.wrap(_bounds_text(m.config), 80, initial_indent=f"  {m.config.name:<{width}}  ",
                               subsequent_indent=" " * (width + 4))
    lines += ["", f"{'member':<{width}}  {'product states':>15}  {'seconds':>7}  {'A-not-B':>7}  {'B-not-A':>7}"]
    for m in d.members:
        states = f"{m.a_not_b.nodes:,}/{m.b_not_a.nodes:,}"
        lines.append(f"{m.config.name:<{width}}  {states:>15}  {m.seconds:>7.2f}  "
                     f"{len(m.a_not_b.witnesses):>7}  {len(m.b_not_a.witnesses):>7}")
    lines += textwrap.wrap(f"A = {a}, B = {b}. Product states: (A's state, renaming, set of B's states) "
                           "for A-not-B/B-not-A." + (" Every witness above was replayed as a run of its "
                                                     "variant and checked." if d.different else ""), 80)
    return lines


# --- diagrams ---------------------------------------------------------------------------


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.+-]+", "-", text.lower()).strip("-")


def _write_diagrams(d, out: Path) -> list[Path]:
    from acp_lifecycle.sims.diagrams import write_sequence
    from acp_lifecycle.sims.diff import observed_lines

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for groups in (d.only_a, d.only_b):
        for i, (k, w) in enumerate(groups.items(), 1):
            last = observed_lines(w)[-1]
            title = f"Only {w.allowed} allows (member {w.member}): {k}"
            note = (f"step {last['step']}: {_entry_text(last)}\n"
                    f"{w.refused} allows every message before this one, and not this one")
            stem = f"only-{_slug(w.allowed)}-{i:02d}"
            for suffix in (".mmd", ".png"):
                written.append(write_sequence(w.run, out / (stem + suffix), title, note, violation=False))
    return written
