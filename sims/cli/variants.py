"""`acp-lifecycle variants` and `regress`: the verdict matrix of the spec variants, and guarding it."""

from __future__ import annotations

import json
import sys

from rich.console import Console
from rich.table import Table

from acp_lifecycle.sims.configs import get_suite

from .common import UsageError, console, variant_names, variant_progress


def register(sub) -> None:
    p = sub.add_parser("variants", help="check every spec variant and print the verdict matrix")
    p.add_argument("--config", default="default", help="named configuration (default: default)")
    p.add_argument("--variant", action="append", help="only this variant (repeatable)")
    p.add_argument("--json", action="store_true", help="print the matrix as JSON")
    p.add_argument("--markdown", action="store_true", help="print the matrix as Markdown")
    p.add_argument("--list", action="store_true", help="list the variants and exit")

    p.set_defaults(run=_variants)

    p = sub.add_parser("regress", help="re-run the verdict matrix and compare it with the agreed one")
    p.add_argument("--verdicts", default="docs/verdicts.json", help="the agreed matrix (default: docs/verdicts.json)")
    p.add_argument("--variant", action="append", help="only this variant (repeatable)")
    p.add_argument("--accept", action="store_true", help="rewrite the agreed matrix (and its .md) with the new verdicts")
    p.add_argument("--yes", action="store_true", help="with --accept: do not ask")

    p.set_defaults(run=_regress)


def _variants(args) -> int:
    from acp_lifecycle.model.variants import VARIANTS
    from acp_lifecycle.sims.variants import (
        also_breaks,
        matrix,
        surprises,
        to_json,
        to_markdown,
    )

    if args.list:
        t = Table(show_edge=False, pad_edge=False)
        for col in ("variant", "summary", "expected to break"):
            t.add_column(col)
        for v in VARIANTS.values():
            t.add_row(v.name, v.summary, ", ".join(v.worse_on))
        console().print(t)
        return 0
    names = variant_names(args) or list(VARIANTS)
    suite = get_suite(args.config)
    if not suite.exhaustive:
        raise UsageError(f"configuration {suite.name!r} is too large for exhaustive search")
    bar, on_variant = variant_progress(Console(stderr=True), names)
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
    out = console()
    out.print(t)
    out.print("  ".join(f"{letters[i]} = {n}" for i, n in enumerate(names)))


def _regress(args) -> int:
    from pathlib import Path

    from acp_lifecycle.model.variants import VARIANTS
    from acp_lifecycle.sims.variants import (
        compare,
        describe_diff,
        load,
        matrix,
        to_json,
        to_markdown,
    )

    path = Path(args.verdicts)
    if not path.is_file():
        raise UsageError(f"no agreed matrix at {path}; run from the project's checkout or pass --verdicts PATH")
    try:
        agreed = load(path)
    except ValueError as e:
        raise UsageError(f"{path} is not a verdict matrix: {e}") from None
    names = variant_names(args) or list(VARIANTS)
    bar, on_variant = variant_progress(Console(stderr=True), names)
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
