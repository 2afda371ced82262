"""`acp-lifecycle variants` and `regress`: the verdict matrix of the spec variants, and guarding it."""

from __future__ import annotations

import json
import sys

from pathlib import Path

from rich.console import Console

from acp_lifecycle.sims.configs import get_suite

from .common import (
    Column,
    MapOf,
    UsageError,
    add_json,
    add_workers,
    check_shape,
    screen,
    load_json,
    output_file,
    path_argument,
    print_json,
    print_lines,
    print_table,
    refuse_options,
    variant_names,
    variant_progress,
    workers_of,
)

DEFAULT_VERDICTS = "docs/verdicts.json"


def register(sub) -> None:
    p = sub.add_parser("variants", help="check every spec variant and print the verdict matrix")
    p.add_argument("--config", default="default", help="named configuration (default: default)")
    p.add_argument("--variant", action="append", help="only this variant (repeatable)")
    add_json(p, "print the matrix as JSON")
    p.add_argument("--markdown", action="store_true", help="print the matrix as Markdown")
    p.add_argument("--list", action="store_true", help="list the variants and exit")
    add_workers(p, "the variants' members")

    p.set_defaults(run=_variants)

    p = sub.add_parser("regress", help="re-run the verdict matrix and compare it with the agreed one")
    path_argument(p, "--verdicts", kind="in-json", default=DEFAULT_VERDICTS,
                  help=f"the agreed matrix (default: {DEFAULT_VERDICTS})")
    p.add_argument("--variant", action="append", help="only this variant (repeatable)")
    p.add_argument("--accept", action="store_true", help="rewrite the agreed matrix (and its .md) with the new verdicts")
    p.add_argument("--yes", action="store_true", help="with --accept: do not ask")
    add_json(p, "print the comparison as JSON")
    add_workers(p, "the variants' members")

    p.set_defaults(run=_regress)


def _variants(args) -> int:
    from acp_lifecycle.model.variants import VARIANTS, lineage
    from acp_lifecycle.sims.variants import (
        also_breaks,
        class_flips,
        flip_line,
        matrix,
        surprises,
        to_json,
        to_markdown,
    )

    if args.json and args.markdown:
        raise UsageError("choose one of --json and --markdown")
    if args.list:
        refuse_options(args, "with --list", "--config", "--variant", "--markdown", "--workers")
        return _list(VARIANTS, args.json)
    names = variant_names(args) or list(VARIANTS)
    # each variant is judged against its base: check its bases too, bases first
    names = list(dict.fromkeys(b for n in names for b in lineage(n)))
    suite = get_suite(args.config)
    if not suite.exhaustive:
        raise UsageError(f"configuration {suite.name!r} is too large for exhaustive search")
    _say_unchanged(names)
    bar, on_variant = variant_progress(Console(stderr=True), names)
    with bar:
        m = matrix(args.config, names, on_variant, workers=workers_of(args))
    data = to_json(m)
    bad = {k: v for k, v in surprises(m).items() if v}
    flips = class_flips(data)
    if args.json:
        print_json({**data, "flips": flips, "unchanged": [n for n in names if VARIANTS[n].unchanged]})
    elif args.markdown:
        print(to_markdown(data), end="")
    else:
        _print_matrix(data)
        out = screen()
        for name, extra in also_breaks(m).items():
            if extra and name in data["variants"]:
                out.print(f"{name} also breaks: {', '.join(extra)}", markup=False)
        for name, lines in bad.items():
            out.print(f"{name}: NOT AS DEFINED: " + "; ".join(lines), markup=False)
        for name, fs in flips.items():
            for f in fs:
                out.print(flip_line(name, f), markup=False)
    return 1 if bad else 0


def _say_unchanged(names: list[str]) -> None:
    """One line on stderr, at once, for each variant whose rules equal its base's."""
    from acp_lifecycle.model.variants import VARIANTS

    for n in names:
        if VARIANTS[n].unchanged:
            print(f"acp-lifecycle: {VARIANTS[n].unchanged_line()}", file=sys.stderr, flush=True)


def _list(variants: dict, as_json: bool) -> int:
    """``variants --list``: each variant, its base, what it changes and what it is expected to break."""
    if as_json:
        print_json([{"name": v.name, "base": v.base, "summary": v.summary, "source": v.source,
                     "changes": dict(v.changes), "proposals": list(v.proposals), "flags": dict(v.flags),
                     "worse_on": list(v.worse_on), "unchanged": v.unchanged}
                    for v in variants.values()])
        return 0
    rows = [[v.name, v.base, ("(unchanged: its rules equal its base's) " if v.unchanged else "") + v.summary,
             ", ".join(v.worse_on)] for v in variants.values()]
    print_table(screen(), [Column("variant", key=True), Column("on"), Column("summary"), Column("expected to break")],
                rows)
    return 0


def _print_matrix(data: dict) -> None:
    from acp_lifecycle.model.properties import PROPERTIES

    names = list(data["variants"])
    letters = [*"ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    letters += [a + b for a in letters for b in letters]  # past 26 variants: AA, AB, ...
    rows = []
    for p in PROPERTIES:
        if p.kind == "sometimes":
            continue
        row = [p.id]
        for n in names:
            c = data["variants"][n][p.id]
            if c["verdict"] == "violated":
                row.append(f"[red]✗ {c['steps']}[/]")
            elif c["verdict"] == "holds":
                row.append("[green]holds[/]")
            else:
                row.append(f"[dim]{c['verdict']}[/]")
        rows.append(row)
    print_table(screen(), [Column("property", key=True)] + [Column(letters[i]) for i in range(len(names))], rows,
                title=f"verdicts on configuration {data['config']} (✗ N: violated, N steps)",
                legend=[f"{letters[i]} = {n}" for i, n in enumerate(names)], group=True)


def _known(lookup, pid: str) -> bool:
    """Whether ``pid`` is a property: the core's or a registered proposal's."""
    try:
        lookup(pid)
    except KeyError:
        return False
    return True


def _verdict_matrix_shape(data) -> None:
    from acp_lifecycle.model.properties import property_by_id
    from acp_lifecycle.sims.configs import SUITES

    check_shape(data, {"config": str, "variants": MapOf(MapOf({"verdict": str}), min=1)})
    if data["config"] not in SUITES:
        raise ValueError(f"'config' is {data['config']!r}, not a named configuration ({', '.join(SUITES)})")
    for name, cells in data["variants"].items():  # a column of no variant is stale: regress says so
        for pid in cells:
            if not _known(property_by_id, pid):
                raise ValueError(f"variant {name!r} has an unknown property {pid!r}")


def _regress(args) -> int:
    from acp_lifecycle.model.variants import VARIANTS
    from acp_lifecycle.sims.variants import class_flips, compare, describe_diff, flip_line, matrix, pins, to_json

    if not args.accept:
        refuse_options(args, "without --accept", "--yes")
    if args.accept and args.json and not args.yes:
        raise UsageError("--accept with --json needs --yes (there is no one to ask)")
    path = Path(args.verdicts)
    if not path.exists() and not path.is_symlink():
        raise UsageError(f"no agreed matrix at {path}; run from the project's checkout or pass --verdicts PATH")
    agreed = load_json(path, option="--verdicts", what="a verdict matrix", shape=_verdict_matrix_shape)
    md = path.with_suffix(".md")
    if args.accept:  # both files it may rewrite, checked before the work
        output_file(path, option="--verdicts", force=True)
        output_file(md, option="--accept", force=True)
    names = variant_names(args) or list(VARIANTS)
    unpinned, stale = pins(agreed, names)
    _say_unchanged(names)
    bar, on_variant = variant_progress(Console(stderr=True), names)
    with bar:
        m = matrix(agreed["config"], names, on_variant, workers=workers_of(args))
    diffs = compare(agreed, m)
    fresh = to_json(m)
    properties = len(fresh["variants"][names[0]])
    flips = class_flips(fresh, agreed)
    flipped = {(n, f["property"]): f for n, fs in flips.items() for f in fs}
    result = {"verdicts": str(path), "config": agreed["config"], "variants": names, "properties": properties,
              "ok": not diffs, "differences": [{"variant": d[0], "property": d[1], "agreed": d[2], "now": d[3],
                                                "flip": flipped.get(d[:2])} for d in diffs],
              "flips": flips, "unpinned": unpinned, "stale": stale,
              "unchanged": [n for n in names if VARIANTS[n].unchanged], "wrote": []}
    if not args.json:
        for d in diffs:
            print_lines(screen(), describe_diff(m, d))
        for name, fs in flips.items():
            for f in fs:
                print_lines(screen(), [flip_line(name, f)])
    _say_pins(args, path, unpinned, stale)
    drop = stale if not args.variant else []  # --variant NAME touches NAME's column only
    if not diffs and not (args.accept and (unpinned or drop)):
        if args.json:
            print_json(result)
        else:
            print(f"regress: {len(names) - len(unpinned)} variant(s) x {properties} properties match {path}")
        return 0
    if diffs and not args.json:
        print(f"regress: {len(diffs)} verdict(s) differ from {path}")
    if not args.accept:
        if args.json:
            print_json(result)
        return 1
    return _accept(args, path, md, agreed, fresh, result, len(diffs), unpinned, drop)


def _say_pins(args, path: Path, unpinned: list[str], stale: list[str]) -> None:
    """What the agreed matrix lacks (a variant's column) and what it has too much (a gone variant's),
    with the command that pins or drops it; on stderr under --json. Neither is a failure."""
    out = (lambda line: print(line, file=sys.stderr)) if args.json else print
    where = "" if str(path) == DEFAULT_VERDICTS else f" --verdicts {path}"
    for n in unpinned:
        out(f"regress: {n} has no column in {path} (not pinned); pin it with:")
        out(f"  acp-lifecycle regress --accept --yes --variant {n}{where}")
    for n in stale:
        out(f"regress: {path} has a column for {n}, which is no variant any more; drop it with:")
        out(f"  acp-lifecycle regress --accept --yes{where}")


def _accept(args, path: Path, md: Path, agreed: dict, fresh: dict, result: dict, changes: int,
            unpinned: list[str], drop: list[str]) -> int:
    """Write the agreed matrix with the new verdicts of the variants checked, the columns of ``unpinned``
    added and those of ``drop`` dropped; every other column as it was. Asks first unless --yes."""
    from acp_lifecycle.model.variants import VARIANTS
    from acp_lifecycle.sims.variants import to_markdown

    say = (lambda *a: print(*a, file=sys.stderr)) if args.json else print
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError("--accept needs --yes when there is no terminal to ask on")
        what = ", ".join(f"{n} {w}" for n, w in ((changes, "change(s)"), (len(unpinned), "new column(s)"),
                                                 (len(drop), "column(s) dropped")) if n)
        answer = input(f"Rewrite {path} with {what}? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("regress: nothing written")
            return 1
    columns = {**agreed["variants"], **fresh["variants"]}
    gone = [n for n in agreed["variants"] if n not in VARIANTS and n not in drop]
    order = [n for n in VARIANTS if n in columns] + gone
    merged = {"config": fresh["config"], "variants": {n: columns[n] for n in order}}
    path.write_text(json.dumps(merged, indent=2) + "\n")
    md.write_text(to_markdown(merged))
    say(f"regress: wrote {path} and {md}")
    if args.json:
        result["wrote"] = [str(path), str(md)]
        print_json(result)
    return 0
