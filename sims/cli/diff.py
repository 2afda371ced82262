"""`acp-lifecycle diff A B`: what one rule set lets agents do on the wire that the other does not.

Exit status: 0 when there is no observable difference within the bounds, 1
when there is one, 2 for bad usage.
"""

from __future__ import annotations

import re
import sys
import textwrap
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from acp_lifecycle.model.config import Config
from acp_lifecycle.sims.configs import get_suite

from .common import (
    UsageError,
    add_force,
    add_json,
    add_workers,
    workers_of,
    screen,
    output_dir,
    path_argument,
    positive_int,
    print_json,
    print_lines,
    refuse_options,
)
from .options import add_model_options, parse_sets, suite_with_sets


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
    p.add_argument("--no-robust", dest="robust", action="store_false",
                   help="skip checking each distinguishing run under each bound one higher and the model's other "
                   "readings (sims/diff/robust.py)")
    add_model_options(p, rules=False)  # A and B name the rules; --set the bounds
    add_workers(p, "the members")
    p.set_defaults(run=_diff)


def exhaustive(config: str, sets: list[str], *names: str) -> tuple:
    """(the named configuration with the ``--set`` bounds, the rule sets named, by ``sims.diff.rule_set``):
    UsageError unless it can be explored exhaustively."""
    rules = [_rule_set(n) for n in names]
    suite = get_suite(config, *rules)  # with the members the proposals of either add
    if not suite.exhaustive:
        raise UsageError(f"configuration {suite.name!r} is too large for exhaustive search")
    return suite_with_sets(suite, parse_sets(sets)), *rules


def _rule_set(name: str):
    """A variant's rules as data, without loading the search (two variants whose rules are equal are
    answered at once); ``sims.diff.rule_set`` for a seeded bug and the error for an unknown name."""
    from acp_lifecycle.model.variants import VARIANTS

    if name in VARIANTS:
        return VARIANTS[name].rules
    from acp_lifecycle.sims.diff import rule_set

    return rule_set(name)


def equal_rules(ra, rb) -> bool:
    """Whether two rule sets are the same rules under two names: nothing tells them apart."""
    return ra.with_(name="") == rb.with_(name="")


def equal_rules_text(a: str, b: str, code=str) -> str:
    """Why ``a`` and ``b`` (names ``diff`` and ``review`` take) do not differ, when their rules are equal;
    ``code`` marks a name up (Markdown's backticks)."""
    from acp_lifecycle.model.variants import VARIANTS

    same = [f"{code(n)} changes no rule of its base {code(VARIANTS[n].base)}" for n in dict.fromkeys((a, b))
            if n in VARIANTS and VARIANTS[n].unchanged]
    return (f"No difference between {code(a)} and {code(b)}: their rules are equal"
            + (f" ({'; '.join(same)})" if same else "")
            + ", so each allows exactly the runs of the other and judges them alike; nothing was explored.")


def _diff(args) -> int:
    from acp_lifecycle.sims.diff import diff_suite
    from acp_lifecycle.sims.diff.report import annotate

    suite, ra, rb = exhaustive(args.config, args.sets, args.a, args.b)
    if args.diagrams is None:
        refuse_options(args, "without --diagrams", "--force")
    if args.json:
        refuse_options(args, "with --json (the JSON has every full run)", "--runs")
    out_dir = output_dir(args.diagrams, option="--diagrams", force=args.force) if args.diagrams is not None else None
    if equal_rules(ra, rb):  # at once: no exploration can find what equal rules cannot have
        why = equal_rules_text(args.a, args.b)
        if args.json:  # nothing explored, nothing observed
            print_json({"a": ra.name, "b": rb.name, "config": suite.name, "different": False,
                        "equal_rules": True, "why": why, "seconds": 0.0, "robust_seconds": 0.0, "members": [],
                        "only_a": [], "only_b": []})
        else:
            print_lines(screen(), [f"acp-lifecycle diff {args.a} {args.b}: configuration {suite.name}", "",
                                   *textwrap.wrap(why, 80)])
        return 0

    err = Console(stderr=True)
    from acp_lifecycle.sims.diff.addition import added

    if added(ra, rb) or added(rb, ra):  # one composes proposals the other does not: an addition
        return _addition(args, suite, ra, rb, err, out_dir)
    with DiffProgress(suite, err) as progress:
        d = diff_suite(suite, ra, rb, max_nodes=args.max_states, on_member=progress.member,
                       workers=workers_of(args))
        t0 = time.monotonic()
        annotate(d, robust=args.robust, progress=progress.runs)
        d.robust_seconds = time.monotonic() - t0
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


def _addition(args, suite, ra, rb, err, out_dir) -> int:
    """``diff`` where one rule set composes proposals the other does not: whether, restricted to the runs
    without their messages, it is a conservative extension of the other, and what the proposals bring."""
    from acp_lifecycle.sims.diff.addition import added, addition
    from acp_lifecycle.sims.search.check import check_suite

    base, new = (ra, rb) if added(ra, rb) else (rb, ra)
    with DiffProgress(suite, err) as progress:
        t0 = time.monotonic()
        checked = check_suite(suite, new, workers=workers_of(args))
        add = addition(suite, base, new, checked, max_nodes=args.max_states, robust=args.robust,
                       workers=workers_of(args),
                       on_member=progress.member, progress=progress.runs)
        add.restricted.robust_seconds = time.monotonic() - t0
    d = add.restricted
    written = _write_diagrams(d, out_dir) if out_dir else []
    if args.json:
        data = diff_data(d)
        data["addition"] = addition_data(add)
        data["different"] = True
        if written:
            data["diagrams"] = [str(p) for p in written]
        print_json(data)
        return 1
    print_lines(screen(), addition_lines(add) + [""] + diff_lines(d, runs=args.runs))
    for p in written:
        err.print(f"wrote {p}", highlight=False)
    return 1


def addition_data(add) -> dict:
    """What an addition brings, as data (``diff --json``'s ``addition``)."""
    from acp_lifecycle.sims.render import trace_data

    return {
        "base": add.base.name, "new": add.new.name, "proposals": list(add.proposals), "methods": list(add.methods),
        "conservative": add.conservative,
        "behaviours": [{"proposal": b.proposal, "witness": b.prop.id, "summary": b.prop.summary, "member": b.member,
                        "steps": len(b.run), "reached": bool(b.run), "clauses": list(b.clauses),
                        "run": trace_data(b.run) if b.run else []} for b in add.behaviours],
        "rules": [{"rule": p.id, "level": p.level, "verdict": v.status if v is not None else None,
                   "clauses": list(p.clauses)} for p, v in add.rules],
        "flags": [{"flag": f.flag.name, "value": f.value, "different": f.diff.different,
                   "only_here": list(f.diff.only_a), "only_other": list(f.diff.only_b)} for f in add.flags],
    }


def addition_lines(add) -> list[str]:
    """What an addition brings, for people."""
    base, new = add.base.name, add.new.name
    verdict = "is a conservative extension of" if add.conservative else "is NOT a conservative extension of"
    lines = textwrap.wrap(f"{new} composes {', '.join(add.proposals)} with {base}. Restricted to the runs that "
                          f"send none of its messages ({', '.join(add.methods)}), {new} {verdict} {base}"
                          + (" within the bounds." if add.conservative else ": the runs below differ."), 80)
    lines += [""] + textwrap.wrap(f"What it brings ({len(add.behaviours)} situations, each by its shortest run; "
                                  "`review` shows them as tables and charts):", 80)
    for b in add.behaviours:
        where = f"{len(b.run)} steps, member {b.member}" if b.run else "NOT REACHED"
        lines += textwrap.wrap(f"{b.prop.summary} ({where})", 78, initial_indent="- ", subsequent_indent="  ")
    broken = [p.id for p, v in add.rules if v is not None and v.status == "violated"]
    lines += ["", f"Its {len(add.rules)} rules: " + ("every one holds." if not broken else
                                                       f"VIOLATED: {', '.join(broken)}.")]
    for f in add.flags:
        what = (f"{len(f.diff.only_a)} kind(s) of message only {new} allows, {len(f.diff.only_b)} only the other"
                if f.diff.different else "no difference on the wire")
        lines += textwrap.wrap(f"Flag {f.flag.name}={str(f.value).lower() if isinstance(f.value, bool) else f.value}: "
                               f"{what}.", 80)
    return lines


class DiffProgress:
    """Progress of a diff: its members, then the checks of its runs under larger bounds. A bar on a
    terminal; else a line on stderr every 30 s while the runs are checked. ``review`` shares it."""

    def __init__(self, suite, err: Console):
        self.bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(), console=err,
                            transient=True, disable=not err.is_terminal)
        self.task = self.bar.add_task("diff", total=len(suite.members))
        self.names = [m.name for m in suite.members]
        self.terminal = err.is_terminal
        self.t0 = self.last = time.monotonic()

    def __enter__(self) -> "DiffProgress":
        self.bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.bar.__exit__(*exc)

    def member(self, name: str) -> None:
        self.bar.update(self.task, description=f"diff: member {name}", completed=self.names.index(name))
        self.t0 = time.monotonic()

    def runs(self, done: int, total: int) -> None:
        if done == 1:
            self.t0 = time.monotonic()
        self.bar.update(self.task, description="runs under larger bounds", completed=done, total=total)
        now = time.monotonic()
        if not self.terminal and now - self.last >= 30:
            self.last = now
            print(f"diff: checked {done}/{total} variations of the distinguishing runs "
                  f"({now - self.t0:.0f} s)", file=sys.stderr, flush=True)


# --- data and text -------------------------------------------------------------------


def witness_data(w, config: str = "", cfg: Config | None = None, rules=None) -> dict:
    """A witness as data; with ``config``, ``cfg`` and ``rules`` (those of its run) the link that opens it
    in ``acp-lifecycle explore`` (``explore``: null when the explorer does not offer the rule set)."""
    from acp_lifecycle.sims.diff import observed_lines
    from acp_lifecycle.sims.diff.links import explore_link
    from acp_lifecycle.sims.diff.report import explanations
    from acp_lifecycle.sims.render import action_text, trace_data

    obs = observed_lines(w)
    out = {
        "kind": w.kind,
        "allowed_by": w.allowed,
        "refused_by": w.refused,
        "member": w.member,
        "messages": len(w.events),
        "steps": len(w.run),
    }
    if w.robustness is not None:
        out.update(w.robustness.data())
    if w.other_answers is not None:
        out["refused_answers"] = list(w.other_answers)
    out["explained_by"] = [{"step": n, "action": action_text(w.run[n - 1][1].action), "why": why}
                           for n, why in explanations(w).items()]
    if cfg is not None and rules is not None:
        out["explore"] = explore_link(config, cfg, rules, w.run)
    out.update({"observed": obs[:-1], "distinguishing": obs[-1], "run": trace_data(w.run)})
    return out


def diff_data(d) -> dict:
    from acp_lifecycle.sims.diff.bounds import OBSERVED, bounds

    def direction(x) -> dict:
        return {"product_states": x.nodes, "transitions": x.transitions, "states": x.states,
                "subsets": x.subsets, "seconds": round(x.seconds, 3), "kinds": list(x.witnesses)}

    cfgs = {m.config.name: m.config for m in d.members}
    name = d.suite.name

    def witnesses(ws, rules) -> list[dict]:
        return [witness_data(w, name, cfgs[w.member], rules) for w in ws.values()]

    return {
        "a": d.a.name,
        "b": d.b.name,
        "config": d.suite.name,
        "observed": OBSERVED,
        "different": d.different,
        "seconds": round(d.seconds, 3),
        "robust_seconds": round(getattr(d, "robust_seconds", 0.0), 3),
        "members": [
            {"name": m.config.name, "bounds": bounds(m.config), "a_not_b": direction(m.a_not_b),
             "b_not_a": direction(m.b_not_a)}
            for m in d.members
        ],
        "only_a": witnesses(d.only_a, d.a),
        "only_b": witnesses(d.only_b, d.b),
    }


def witness_lines(w, runs: bool = False) -> list[str]:
    """A witness for people: each observed message with the step that sent it, the distinguishing one marked."""
    from acp_lifecycle.sims.diff import observed_lines
    from acp_lifecycle.sims.diff.report import answer_text, entry_text, explanations, robust_text
    from acp_lifecycle.sims.render import action_text, trace_lines

    obs = observed_lines(w)
    n, k = len(w.events), len(w.run)
    lines = [f"    member {w.member}: {n} message{'s' * (n != 1)}, {k} step{'s' * (k != 1)}; "
             f"{w.refused} allows all but !"]
    for i, o in enumerate(obs):
        mark = "!" if i == len(obs) - 1 else " "
        action = w.run[o["step"] - 1][1].action[0]
        text = entry_text(o)
        lines.append(f"    {mark} {text:<47} {o['step']:>2} {action}")
    for extra in [f"step {n} {action_text(w.run[n - 1][1].action)}: {why}" for n, why in explanations(w).items()] + [
            answer_text(w), robust_text(w)]:
        if extra:
            lines += textwrap.wrap(extra, 80, initial_indent="    ", subsequent_indent="      ")
    if runs:
        lines.append(f"    the run of {w.allowed}, every step:")
        lines += ["    " + line for line in trace_lines(w.run, compact=True)]
    return lines


def _kinds(groups: dict) -> str:
    return f"{len(groups)} kind{'s' * (len(groups) != 1)} of message"


def diff_lines(d, runs: bool = False) -> list[str]:
    from acp_lifecycle.sims.diff.bounds import OBSERVED, bounds_text

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
        lines += textwrap.wrap(bounds_text(m.config), 80, initial_indent=f"  {m.config.name:<{width}}  ",
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
    from acp_lifecycle.sims.diff.report import chart_notes

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for groups in (d.only_a, d.only_b):
        for i, (k, w) in enumerate(groups.items(), 1):
            title = f"Only {w.allowed} allows (member {w.member}): {k}"
            notes, note = chart_notes(w)
            stem = f"only-{_slug(w.allowed)}-{i:02d}"
            for suffix in (".mmd", ".png"):
                written.append(write_sequence(w.run, out / (stem + suffix), title, note, violation=False, notes=notes))
    return written
