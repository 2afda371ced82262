"""`acp-lifecycle diagrams` and `docs`: the generated artifacts."""

from __future__ import annotations

from .common import UsageError


def register(sub) -> None:
    p = sub.add_parser("diagrams", help="regenerate the diagrams from the model (diagrams/, docs/diagrams.md)")
    p.add_argument("--out", default="diagrams", help="directory to write (default: diagrams)")
    p.add_argument("--format", default="mermaid,dot,svg,png", help="comma-separated: mermaid,dot,svg,png")
    p.add_argument("--check", action="store_true", help="exit 1 if the committed text diagrams are stale; write nothing")

    p.set_defaults(run=_diagrams)

    p = sub.add_parser("docs", help="regenerate docs/clauses.md and docs/bugs.md")
    p.add_argument("--out", default="docs", help="directory to write (default: docs)")
    p.add_argument("--check", action="store_true", help="exit 1 if the files there are stale, write nothing")
    p.set_defaults(run=_docs)


def _diagrams(args) -> int:
    from pathlib import Path

    from acp_lifecycle.sims.diagrams import stale, write_all, write_docs

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

    from acp_lifecycle.sims.docsgen import GENERATED, write

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
