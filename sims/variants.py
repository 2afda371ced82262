"""The verdict matrix (properties x spec variants) and its regression check.

``matrix()`` checks every variant on a configuration and returns, per variant
and property, ``holds``, ``violated`` (with the length of the shortest
counterexample) or ``n/a``; ``sometimes`` properties read ``reached`` or
``unreached``. The agreed matrix is committed in docs/verdicts.json (and
rendered in docs/verdicts.md); ``compare()`` lists every cell that differs,
the way the TLA+ Examples pin their results. A variant with no column there
yet is *unpinned* (``pins``: not a difference; ``acp-lifecycle regress --accept
--yes --variant NAME`` adds its column), and a column whose variant is gone is
*stale* (``regress --accept`` drops it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from acp_lifecycle.model.properties import PROPERTIES, properties_of, property_by_id
from acp_lifecycle.model.variants import VARIANTS

from acp_lifecycle.sims.search.check import SuiteResult, check_suites
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.render import trace_lines

__all__ = ["Matrix", "matrix", "compare", "pins", "to_json", "to_markdown", "surprises", "also_breaks", "class_flips",
           "flip_line", "VERDICTS_JSON"]

VERDICTS_JSON = Path("docs/verdicts.json")


@dataclass
class Matrix:
    config: str
    results: dict[str, SuiteResult]  # variant name -> result

    def cell(self, variant: str, pid: str) -> dict:
        v = VARIANTS[variant]
        r = self.results[variant]
        verdict = r.verdicts[pid]
        if pid in v.not_applicable:
            return {"verdict": "n/a"}
        if verdict.outcome == "not applicable":
            return {"verdict": "n/a"}
        cell = {"verdict": verdict.status}
        if verdict.status == "violated":
            cell["steps"] = len(verdict.trace)
        return cell


def matrix(config: str = "default", variants: list[str] | None = None, on_variant: Callable | None = None,
           workers: int = 1) -> Matrix:
    """Check each variant (all by default) on the named configuration, every member of every variant side
    by side in ``workers`` processes. ``on_variant(name)``: that variant is checked."""
    names = variants or list(VARIANTS)
    # each with the members its proposals add
    jobs = [(get_suite(config, VARIANTS[n].rules), VARIANTS[n].rules) for n in names]
    done = check_suites(jobs, workers=workers, on_done=(lambda k: on_variant(names[k])) if on_variant else None)
    return Matrix(config, dict(zip(names, done)))


def _properties(name: str) -> list:
    """The rows of a variant's column: the core's properties and those of the proposals it composes."""
    return properties_of(VARIANTS[name].rules)


def _rows(data: dict) -> list:
    """Every property of some column of ``data``, in order: the core's, then each proposal's."""
    out, seen = list(PROPERTIES), {p.id for p in PROPERTIES}
    for name in data["variants"]:
        for p in (_properties(name) if name in VARIANTS else ()):
            if p.id not in seen:
                seen.add(p.id)
                out.append(p)
    return out


def to_json(m: Matrix) -> dict:
    return {
        "config": m.config,
        "variants": {
            name: {pid.id: m.cell(name, pid.id) for pid in _properties(name)} for name in m.results
        },
    }


def surprises(m: Matrix) -> dict[str, list[str]]:
    """What a variant's definition promises and the matrix does not show.

    Each variant promises that the properties in ``worse_on`` are violated (the
    FAQ's argument, shown as a trace) and that every property whose expectation
    it overrides to ``must_hold`` holds. Other violations are consequences,
    listed by ``also_breaks``, not failures.
    """
    out = {}
    for name in m.results:
        v = VARIANTS[name]
        bad = []
        for p in _properties(name):
            cell = m.cell(name, p.id)["verdict"]
            exp = v.expectation(p)
            if p.id in v.worse_on and cell != "violated":
                bad.append(f"{p.id} should be violated, is {cell}")
            elif exp == "must_hold" and p.expect != "must_hold" and cell != "holds":
                bad.append(f"{p.id} should hold under this variant, is {cell}")
            elif name in ("rfd", "rfd+2.4.0") and exp and cell != {"must_hold": "holds", "reachable": "reached"}.get(exp, "violated"):
                bad.append(f"{p.id}: {cell}, not as the rule set expects")
            elif p.proposal and exp and cell != {"must_hold": "holds", "reachable": "reached"}.get(exp, cell):
                bad.append(f"{p.id}: {cell}, not as its proposal expects")  # a proposal's rules hold, its witnesses happen
        out[name] = bad
    return out


def also_breaks(m: Matrix) -> dict[str, list[str]]:
    """Must-hold properties a variant violates beyond the ones it is expected to break."""
    out = {}
    for name in m.results:
        v = VARIANTS[name]
        out[name] = [
            p.id
            for p in _properties(name)
            if v.expectation(p) == "must_hold" and p.id not in v.worse_on and m.cell(name, p.id)["verdict"] == "violated"
        ]
    return out


#: (the base's expectation, its verdict, the variant's verdict) -> what the change of class means
FLIPS = {
    ("known_limitation", "violated", "holds"): "a known limitation now holds",
    ("open_question", "violated", "holds"): "an open question closes",
    ("reachable", "reached", "unreached"): "a sometimes is never reached",
}


def _base_expectation(v, prop) -> str:
    """The property's class under the variant's base: the base variant's, or its rule set's."""
    from acp_lifecycle.model.config import RULE_SETS

    base = VARIANTS.get(v.base)
    return base.expectation(prop) if base is not None else prop.expectation(RULE_SETS[v.base])


def class_flips(data: dict, reference: dict | None = None) -> dict[str, list[dict]]:
    """Per variant of ``data`` (a matrix as ``to_json`` writes it), every verdict whose class changes
    relative to the variant's base (a rule set or another variant): a known limitation that holds, an
    open question that closes, a sometimes never reached. The base's cells come from ``data``, else
    from ``reference`` (the agreed matrix). ``expected``: the variant's file declares the new
    expectation. A stale column (no variant of that name) has none."""
    out = {}
    for name, cells in data["variants"].items():
        v = VARIANTS.get(name)
        if v is None:
            continue
        base = data["variants"].get(v.base) or (reference or {}).get("variants", {}).get(v.base)
        if v.base == name or base is None:
            continue
        flips = []
        for pid, cell in cells.items():
            exp = _base_expectation(v, property_by_id(pid))
            was = base.get(pid, {}).get("verdict")
            what = FLIPS.get((exp, was, cell["verdict"]))
            if what:
                flips.append({"property": pid, "class": exp, "base": v.base, "was": was, "now": cell["verdict"],
                              "flip": what, "expected": pid in dict(v.expect)})
        out[name] = flips
    return out


def flip_line(name: str, f: dict) -> str:
    """One flagged flip, for people."""
    why = " (as the variant's file expects)" if f["expected"] else ""
    return (f"CLASS FLIP {name} / {f['property']}: {f['flip']}: {f['class'].replace('_', ' ')} under "
            f"{f['base']} ({f['was']}), {f['now']} under {name}{why}")


def to_markdown(data: dict) -> str:
    names = list(data["variants"])
    lines = [
        "<!-- Generated by `acp-lifecycle variants --markdown`; the agreed matrix is docs/verdicts.json. "
        "`acp-lifecycle regress --accept` rewrites both (without a terminal to ask on, add --yes). -->",
        "",
        f"# Verdict matrix (configuration `{data['config']}`)",
        "",
        "Each column is a spec variant (a file in `model/variants/`), each row a property. "
        "`holds`; `✗ N`: violated, with the length of the shortest counterexample; "
        "`n/a`: cannot be stated for the variant. *Known limitations* and *open questions* "
        "of the RFD read ✗ under `rfd` by design; every other ✗ is where a variant is worse "
        "than the RFD. Rows of `sometimes` witnesses are summarised at the end.",
        "",
        "| property | " + " | ".join(f"`{n}`" for n in names) + " |",
        "|---|" + "---|" * len(names),
    ]

    def show(cell: dict) -> str:
        if cell["verdict"] == "violated":
            return f"✗ {cell['steps']}"
        return cell["verdict"]

    rows = _rows(data)
    for p in rows:
        if p.kind == "sometimes":
            continue
        # a property of a proposal a variant does not compose is no row of its column: "—"
        row = [show(data["variants"][n][p.id]) if p.id in data["variants"][n] else "—" for n in names]
        lines.append(f"| `{p.id}` ({p.expect.replace('_', ' ')}) | " + " | ".join(row) + " |")
    reached = []
    for n in names:
        cells = [data["variants"][n][p.id]["verdict"] for p in rows if p.kind == "sometimes" and p.id in data["variants"][n]]
        reached.append(f"{cells.count('reached')}/{len(cells)}")
    lines.append("| *sometimes reached* | " + " | ".join(reached) + " |")
    flips = [(n, f) for n, fs in class_flips(data).items() for f in fs]
    if flips:
        lines += ["", "## Class flips", "",
                  "A verdict whose class changes under a variant relative to its base (a rule set or a variant): "
                  "read it first "
                  "(a limitation that holds is a red flag unless the change is meant to fix it).", ""]
        lines += [f"- `{n}` / `{f['property']}`: {f['flip']} ({f['class'].replace('_', ' ')} under `{f['base']}`: "
                  f"{f['was']}; here {f['now']}){' as the variant expects' if f['expected'] else ''}." for n, f in flips]
    lines += ["", "## Variants", ""]
    for n in names:
        v = VARIANTS.get(n)
        if v is None:
            lines.append(f"- `{n}`: no variant file any more (`acp-lifecycle regress --accept` drops the column).")
            continue
        worse = ", ".join(f"`{w}`" for w in v.worse_on) or "nothing the RFD keeps"
        same = " Its rules equal its base's: it changes nothing." if v.unchanged else ""
        lines.append(f"- `{n}` (on `{v.base}`): {v.summary}. Source: {v.source}. Expected to break: {worse}.{same}")
    return "\n".join(lines) + "\n"


def pins(agreed: dict, names: list[str]) -> tuple[list[str], list[str]]:
    """(the variants of ``names`` the agreed matrix has no column for, the columns of the agreed matrix
    that name no variant): neither is a difference of verdicts."""
    columns = agreed.get("variants", {})
    return [n for n in names if n not in columns], [n for n in columns if n not in VARIANTS]


def compare(agreed: dict, new: Matrix) -> list[tuple[str, str, dict, dict]]:
    """Every (variant, property, agreed cell, new cell) that differs, for the variants the agreed matrix
    has a column for (an unpinned variant is no difference: ``pins``)."""
    fresh = to_json(new)
    diffs = []
    if agreed.get("config") != fresh["config"]:
        return [("*", "config", {"verdict": agreed.get("config")}, {"verdict": fresh["config"]})]
    for name, cells in fresh["variants"].items():
        if name not in agreed.get("variants", {}):
            continue
        old_cells = agreed["variants"][name]
        for pid, cell in cells.items():
            if old_cells.get(pid) != cell:
                diffs.append((name, pid, old_cells.get(pid, {"verdict": "absent"}), cell))
    return diffs


def describe_diff(new: Matrix, diff: tuple) -> list[str]:
    """A readable line for one difference, with the new counterexample if there is one."""
    name, pid, old, cell = diff

    def show(c: dict) -> str:
        return f"violated ({c['steps']} steps)" if c.get("verdict") == "violated" else str(c.get("verdict"))

    lines = [f"{name} / {pid}: was {show(old)}, now {show(cell)}"]
    if name in new.results and pid in new.results[name].verdicts:
        v = new.results[name].verdicts[pid]
        if v.status == "violated" and v.trace:
            lines += ["  " + line for line in trace_lines(v.trace, v.message)]
    return lines


def load(path: Path = VERDICTS_JSON) -> dict:
    return json.loads(path.read_text())
