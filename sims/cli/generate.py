"""`acp-lifecycle diagrams` and `docs`: the generated artifacts.

Both write into the project's checkout by default (``diagrams/``,
``docs/``) and refuse to run elsewhere without ``--out``: outside the
checkout there is no ``docs/diagrams.md`` to keep in step.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .common import UsageError, add_force, add_json, checkout, output_dir, path_argument, print_json, refuse_options
from .options import add_model_options, model_rules, parse_sets, with_sets

DIAGRAM_FORMATS = ("mermaid", "dot", "svg", "png")


def register(sub) -> None:
    p = sub.add_parser("diagrams", help="regenerate the diagrams from the model (diagrams/, docs/diagrams.md)")
    path_argument(p, "--out", kind="out-dir",
                  help="directory to write (default: diagrams/ of the checkout, and docs/diagrams.md with it)")
    p.add_argument("--format", default=",".join(DIAGRAM_FORMATS), help="comma-separated: mermaid,dot,svg,png")
    p.add_argument("--check", action="store_true", help="exit 1 if the committed text diagrams are stale; write nothing")
    add_force(p, "files in a non-empty --out directory")
    add_json(p, "print what was written (or what is stale) as JSON")
    p.add_argument("--config", default=None, help="with --rules, --variant or --set: the member projected (default: tiny)")
    add_model_options(p)

    p.set_defaults(run=_diagrams)

    p = sub.add_parser("docs", help="regenerate docs/clauses.md and docs/bugs.md")
    path_argument(p, "--out", kind="out-dir", help="directory to write (default: docs/ of the checkout)")
    p.add_argument("--check", action="store_true", help="exit 1 if the files there are stale, write nothing")
    add_force(p, "files in a non-empty --out directory")
    add_json(p, "print what was written (or what is stale) as JSON")
    p.set_defaults(run=_docs)


def _where(args, default: str) -> tuple[Path, bool]:
    """(the directory to write or check, whether it is the checkout's own)."""
    root = checkout()
    own = root / default if root else None
    if args.out is None:
        if own is None:
            raise UsageError("not in the acp-lifecycle checkout (no pyproject.toml of acp-lifecycle here): "
                             "run from it, or pass --out DIR")
        return own, True
    out = Path(args.out)
    return out, own is not None and out.resolve() == own.resolve()


def _report(args, written: list[Path] | None = None, stale: list[Path] | None = None) -> int:
    if stale is not None:
        if args.json:
            print_json({"ok": not stale, "stale": [str(p) for p in stale]})
        else:
            for p in stale:
                print(f"stale: {p}")
        return 1 if stale else 0
    if args.json:
        print_json({"wrote": [str(p) for p in written]})
    else:
        for p in written:
            print(f"wrote {p}")
    return 0


def _diagrams(args) -> int:
    from acp_lifecycle.sims.diagrams import stale, write_all, write_docs

    out, own = _where(args, "diagrams")
    if args.rules is not None or args.variant is not None or args.sets or args.config is not None:
        return _projection(args, out, own)
    if args.check:
        refuse_options(args, "with --check (it compares the text diagrams, mermaid and dot)", "--format", "--force")
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {out}: is a file, not a directory")
        return _report(args, stale=stale(out))
    formats = [f.strip() for f in args.format.split(",") if f.strip()]
    if not formats:
        raise UsageError(f"--format: give at least one of {', '.join(DIAGRAM_FORMATS)}")
    bad = [f for f in formats if f not in DIAGRAM_FORMATS]
    if bad:
        raise UsageError(f"--format: unknown format {bad[0]!r}; choose from {', '.join(DIAGRAM_FORMATS)}")
    output_dir(out, option="--out", force=args.force, generated=own)
    docs = out.parent / "docs" / "diagrams.md" if own else None
    if docs is not None:
        output_dir(docs.parent, option="docs/", generated=True)
    written = write_all(out, formats)
    if docs is not None:
        written.append(write_docs(docs))
    elif not args.json:
        print("docs/diagrams.md not written: --out is not the checkout's diagrams/", file=sys.stderr)
    return _report(args, written)


def _projection(args, out: Path, own: bool) -> int:
    """The lifecycle projection of one member under other rules or bounds, beside the RFD's
    (never over the checkout's diagrams/, which docs/diagrams.md shows)."""
    from acp_lifecycle.sims.configs import get_suite
    from acp_lifecycle.sims.diagrams.drawing import draw_lifecycle
    from acp_lifecycle.sims.diagrams.lifecycle import lifecycle, lifecycle_dot, lifecycle_mermaid

    refuse_options(args, "with --rules, --variant, --set or --config (they draw one projection)", "--check")
    if own:
        raise UsageError("with --rules, --variant, --set or --config, pass --out DIR: the checkout's diagrams/ "
                         "holds the RFD's")
    rules = model_rules(args)
    cfg = with_sets(get_suite(args.config or "tiny").members[0], parse_sets(args.sets))
    formats = [f.strip() for f in args.format.split(",") if f.strip()]
    bad = [f for f in formats if f not in DIAGRAM_FORMATS] or ([] if formats else [""])
    if bad:
        raise UsageError(f"--format: unknown format {bad[0]!r}; choose from {', '.join(DIAGRAM_FORMATS)}")
    output_dir(out, option="--out", force=args.force).mkdir(parents=True, exist_ok=True)
    lc = lifecycle(cfg, rules)
    stem = f"lifecycle-{cfg.name}-{rules.name}"
    writers = {"mermaid": (".mmd", lambda p: p.write_text(lifecycle_mermaid(lc))),
               "dot": (".dot", lambda p: p.write_text(lifecycle_dot(lc))),
               "svg": (".svg", lambda p: draw_lifecycle(lc, p)), "png": (".png", lambda p: draw_lifecycle(lc, p))}
    written = []
    for f in formats:
        suffix, write = writers[f]
        path = out / (stem + suffix)
        write(path)
        written.append(path)
    return _report(args, written)


def _docs(args) -> int:
    from acp_lifecycle.sims.docsgen import GENERATED, write

    out, own = _where(args, "docs")
    if args.check:
        refuse_options(args, "with --check", "--force")
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {out}: is a file, not a directory")
        return _report(args, stale=[out / n for n, make in GENERATED.items()
                                    if not (out / n).is_file() or (out / n).read_text() != make()])
    output_dir(out, option="--out", force=args.force, generated=own)
    return _report(args, write(out))
