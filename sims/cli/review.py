"""`acp-lifecycle review BASE NEW`: one Markdown document for a pull request (sims/review).

Exit status: 0 when nothing differs (on the wire or in the verdicts), 1 when something does,
2 for bad usage (an existing --out file without --force among them).
"""

from __future__ import annotations

import sys

from .common import add_force, add_json, add_workers, output_file, path_argument, print_json, workers_of
from .options import add_model_options


def register(sub) -> None:
    p = sub.add_parser(
        "review",
        help="a Markdown review of a spec change for a pull request: wire differences, verdicts, charts",
        description="Compare rule set NEW with BASE on a configuration and write one Markdown document: what "
        "NEW allows and forbids on the wire (robust differences first, artefacts of the bounds or readings "
        "apart), verdict changes with class flips flagged, each distinguishing run as a table and a Mermaid "
        "chart with both rule sets' answers, the clauses involved, the bounds, and the commands that "
        "reproduce it. Exit 0: nothing differs; 1: something does; 2: bad usage.",
    )
    p.add_argument("base", metavar="BASE", help="the rule set before the change: a spec variant or bug:NAME")
    p.add_argument("new", metavar="NEW", help="the rule set after the change, as BASE")
    p.add_argument("--config", default="default", help="named configuration or member (default: default)")
    path_argument(p, "--out", kind="out-file", suffixes=(".md",), help="write the document to FILE (default: stdout)")
    add_force(p, "an existing --out file")
    p.add_argument("--max-states", type=int, default=3_000_000,
                   help="stop with an error past this many product states per member and direction")
    add_json(p, "print a summary as one JSON line (the document goes to --out, or is left out)")
    add_model_options(p, rules=False)  # BASE and NEW name the rules; --set the bounds
    add_workers(p, "the members and both rule sets' checks")
    p.set_defaults(run=_review)


def _review(args) -> int:
    from rich.console import Console

    from acp_lifecycle.sims.review import build
    from acp_lifecycle.sims.review.markdown import markdown

    from .common import refuse_options
    from .diff import DiffProgress, equal_rules, exhaustive

    suite, base, new = exhaustive(args.config, args.sets, args.base, args.new)
    if args.out is None:
        refuse_options(args, "without --out", "--force")
    out = output_file(args.out, option="--out", force=args.force) if args.out is not None else None
    err = Console(stderr=True)
    if equal_rules(base, new):  # at once: no exploration can find what equal rules cannot have
        return _equal(args, suite.name, out, err)
    with DiffProgress(suite, err) as progress:
        r = build(args.config, base, new, max_nodes=args.max_states, on_member=progress.member, workers=workers_of(args),
                  progress=progress.runs, names=(args.base, args.new))
    text = markdown(r)
    if out is not None:
        out.write_text(text)
        err.print(f"wrote {out}", highlight=False)
    if args.json:
        print_json(review_data(r, str(out) if out else None))
    elif out is None:
        sys.stdout.write(text)
    return 1 if r.different else 0


def _equal(args, config: str, out, err) -> int:
    """The review of two rule sets whose rules are equal: it says so, in Markdown and JSON, exit 0."""
    from .diff import equal_rules_text

    why = equal_rules_text(args.base, args.new)
    text = "\n".join([
        f"# Review: `{args.new}` against `{args.base}`", "",
        f"`acp-lifecycle review {args.base} {args.new} --config {config}`.", "",
        f"**Summary.** {equal_rules_text(args.base, args.new, code=lambda n: f'`{n}`')}", ""])
    if out is not None:
        out.write_text(text)
        err.print(f"wrote {out}", highlight=False)
    if args.json:
        print_json({"base": args.base, "new": args.new, "config": config, "different": False, "equal_rules": True,
                    "why": why, "out": str(out) if out else None, "runs": [], "verdict_changes": []})
    elif out is None:
        sys.stdout.write(text)
    return 0


def review_data(r, out: str | None) -> dict:
    runs = r.runs()
    return {
        "base": r.names[0], "new": r.names[1], "config": r.config, "different": r.different, "out": out,
        "runs": [{"kind": w.kind, "allowed_by": w.allowed, "refused_by": w.refused, "member": w.member,
                  **(w.robustness.data() if w.robustness else {})} for w in runs],
        "verdict_changes": [c.data() for c in r.changes],
    }
