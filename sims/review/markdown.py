"""The review as Markdown (GitHub-flavoured: tables, Mermaid blocks)."""

from __future__ import annotations

from acp_lifecycle.sims.diff import observed_lines
from acp_lifecycle.sims.diff.links import explore_link
from acp_lifecycle.sims.diff.report import answer_text, compact, explanations, robust_text, witness_mermaid
from acp_lifecycle.sims.render import action_text

from . import RULE_CLAUSES, Review, clauses_of, responsible, rule_changes
from .addition import addition_markdown

__all__ = ["markdown"]



def _code(text) -> str:
    text = str(text).replace("|", "\\|")
    return f"`{text}`" if "`" not in text else f"``{text}``"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _summary(r: Review) -> list[str]:
    base, new = r.names
    forbids, allows = list(r.diff.only_a.values()), list(r.diff.only_b.values())  # the diff is BASE against NEW

    def split(ws) -> str:
        robust = sum(1 for w in ws if w.robustness is None or w.robustness.robust)
        return f"{robust} robust, {len(ws) - robust} artefact{'s' * (len(ws) - robust != 1)}" if ws else "none"

    flips = [c for c in r.changes if c.flip and c.flip != "violated"]
    broken = [c for c in r.changes if c.flip == "violated"]
    unforeseen = [c for c in flips + broken if not c.foreseen]
    changed = [c for c in r.changes if not c.scope]
    text = (f"**Summary.** On the wire, `{new}` forbids {_plural(len(forbids), 'kind')} of message `{base}` allows "
            f"({split(forbids)}) and allows {_plural(len(allows), 'kind')} `{base}` forbids ({split(allows)}). "
            f"{_plural(len(changed), 'verdict')} of rules of both change{'s' * (len(changed) == 1)}: "
            f"{_plural(len(flips), 'class flip')}, {_plural(len(broken), 'rule')} of `{base}` broken")
    if flips or broken:
        text += (f"; {len(unforeseen)} of them not foreseen by `{new}` (⚠ below)." if unforeseen
                 else f"; `{new}` foresees each.")
    else:
        text += "."
    if not r.different:
        text = f"**Summary.** No difference between `{base}` and `{new}` on the wire or in the verdicts within the bounds."
    return [text, ""]


def _rules(r: Review) -> list[str]:
    rows = rule_changes(r.base, r.new)
    if not rows:
        return []
    out = ["## Rules that change", "", f"| rule (`model/config.py` `Rules`) | `{r.names[0]}` | `{r.names[1]}` |",
           "|---|---|---|"]
    out += [f"| `{name}` | {_code(repr(a))} | {_code(repr(b))} |" for name, a, b in rows]
    return out + [""]


def _table(w) -> list[str]:
    out = ["| | step | conn | | message |", "|---|---:|---|---|---|"]
    obs = observed_lines(w)
    for i, o in enumerate(obs):
        last = i == len(obs) - 1
        mark = "**!**" if last else ""
        if o.get("event") == "end":
            text, conn, arrow = "(the run ends: no step is left)", "", ""
        elif o.get("event") == "closed":
            text, conn, arrow = "connection closes", o["conn"], ""
        else:
            text, conn, arrow = compact(o["msg"]), o["conn"], ("→" if o["from"] == "client" else "←")
        cell = f"**{_code(text)}**" if last else _code(text)
        out.append(f"| {mark} | {o['step']} | {conn} | {arrow} | {cell} |")
    return out


def _clauses(r: Review, w, cfg) -> list[str]:
    """What the run goes against: the rules of the refused side that make the difference, the clauses
    they encode, and the properties of the refused side the run breaks."""
    from acp_lifecycle.model.clauses import CLAUSES

    refused, allowed = (r.new, r.base) if w.refused == r.new.name else (r.base, r.new)
    rules = responsible(w, cfg, allowed, refused)
    out = ["**Clauses involved:**"]
    if rules:
        out.append(f"- the rule{'s' * (len(rules) > 1)} of `{w.refused}` that make{'s' * (len(rules) == 1)} the "
                   "difference (set back alone, the run is allowed): " + ", ".join(f"`{x}`" for x in rules))
    for cid in [c for x in rules for c in RULE_CLAUSES.get(x, ())]:
        c = CLAUSES[cid]
        out.append(f"- {c.source} {c.level} (`{cid}`): \"{' '.join(c.text.split())}\"")
    for p in clauses_of(w, cfg, refused):
        out.append(f"- property `{p.id}` of `{w.refused}` breaks on this run: {' '.join((p.quote or p.summary).split())}")
    if len(out) == 1:
        out.append(f"- no single rule or property of `{w.refused}` accounts for it alone: the rules that "
                   "change (above) together")
    return out


def _run(r: Review, n: int, w) -> list[str]:
    base, new = r.names
    cfgs = {m.config.name: m.config for m in r.diff.members}
    cfg = cfgs[w.member]
    verb = "forbids" if w.refused == r.new.name else "allows"
    title = f"`{new}` {verb}: {w.kind}"
    out = [f"#### {n}. {title}", "",
           f"Member `{w.member}`: {_plural(len(w.events), 'message')}, {_plural(len(w.run), 'step')}; "
           f"`{w.refused}` allows every message before **!**, and not **!**.", ""]
    robust = robust_text(w)
    if robust:
        out += [robust[0].upper() + robust[1:] + ".", ""]
    out += _table(w) + [""]
    answer = answer_text(w)
    if answer:
        out += [f"**{answer.split(' instead: ')[0]} instead:** {answer.split(' instead: ', 1)[1]}", ""]
    why = explanations(w)
    if why:
        out += ["**What explains it:** " + "; ".join(
            f"step {k} {_code(action_text(w.run[k - 1][1].action))}: {t}" for k, t in why.items()) + ".", ""]
    out += _clauses(r, w, cfg) + [""]
    chart = witness_mermaid(w, f"{w.allowed} allows, {w.refused} does not: {w.kind}")
    out += ["", "```mermaid", chart.rstrip("\n"), "```", ""]
    cmd = f"acp-lifecycle diff {base} {new} --config {w.member}"
    out.append(f"Reproduce: `{cmd}`")
    link = explore_link(r.config, cfg, r.new if w.allowed == r.new.name else r.base, w.run)
    if link:
        out[-1] += f" · step through it: `{link['command']}`"
    return out + [""]


def _wire(r: Review) -> list[str]:
    runs = r.runs()
    out = ["## What changes on the wire", ""]
    if not runs:
        return out + ["No observable difference within the bounds: every run of either rule set is one the "
                      "other allows, message for message.", ""]
    robust = [w for w in runs if w.robustness is None or w.robustness.robust]
    other = [w for w in runs if w not in robust]
    out += ["Each kind of message one rule set allows and the other does not, shown by its shortest run. "
            "A run is **robust** when the difference remains with each bound one higher and under each "
            "reading the model has (`sims/diff/robust.py`); otherwise it is an **artefact** of the bound "
            "or reading named.", ""]
    n = 0
    for heading, ws in (("### Robust differences", robust), ("### Artefacts of the bounds or of a reading", other)):
        out += [heading, ""]
        if not ws:
            out += ["None.", ""]
        for w in ws:
            n += 1
            out += _run(r, n, w)
    return out


def _verdicts(r: Review) -> list[str]:
    base, new = r.names
    out = ["## Verdicts", ""]
    changed = [c for c in r.changes if not c.scope]
    if not changed:
        out += [f"Every property that is a rule of both has the same verdict under `{base}` and `{new}`.", ""]
    else:
        out += [f"| property | `{base}` | `{new}` | flag |", "|---|---|---|---|"]
        for c in changed:
            flag = ""
            if c.flip:
                what = "breaks" if c.flip == "violated" else f"class flip: {c.flip}"  # variants' own words
                flag = (f"{what} (foreseen: `{new}` {c.foreseen_by})" if c.foreseen
                        else f"⚠ **{what}**, against the expectation {c.base_expectation}")
            out.append(f"| `{c.property}` | {c.base} | {c.new} | {flag} |")
        out.append("")
    for side, other, which in ((new, base, "base"), (base, new, "new")):
        only = [c for c in r.changes if c.scope and getattr(c, which) == "n/a"]
        if only:
            verdicts = [f"`{c.property}` ({c.new if which == 'base' else c.base})" for c in only]
            out += [f"Rules of `{side}` only (n/a under `{other}`): " + ", ".join(verdicts) + ".", ""]
    return out


def _bounds(r: Review) -> list[str]:
    from acp_lifecycle.sims.diff.bounds import OBSERVED, bounds_text

    out = ["## Bounds", "", f"Configuration `{r.config}`; each member explored exhaustively, nothing beyond.", "",
           "| member | bounds |", "|---|---|"]
    for m in r.diff.members:
        out.append(f"| `{m.config.name}` | {bounds_text(m.config)} |")
    from acp_lifecycle.sims.diff.robust import READINGS, SWITCHES

    out += ["", f"Observed: {OBSERVED}.", "",
            "Each run was checked again, one variation at a time, with each budget of its member one higher "
            "(past `model/config.py` `LIMITS` too), each exploration switch it leaves off turned on ("
            + ", ".join(f"`{s}`" for s in SWITCHES) + "), and under each reading the model has: "
            + "; ".join(f"`{name[len('reading '):]}` ({what})" for name, what, _ in READINGS) + "."]
    return out + [""]


def markdown(r: Review) -> str:
    base, new = r.names
    out = [f"# Review: `{new}` against `{base}`", "",
           f"`acp-lifecycle review {base} {new} --config {r.config}` "
           f"({_plural(len(r.diff.members), 'member')}).", ""]
    if r.addition is not None:  # NEW composes proposals BASE does not: what they bring (sims/review/addition.py)
        out += addition_markdown(r, _wire, _verdicts, _bounds)
    else:
        out += _summary(r) + _rules(r) + _wire(r) + _verdicts(r) + _bounds(r)
    out += ["## Reproduce", "", "```sh", f"acp-lifecycle review {base} {new} --config {r.config}",
            f"acp-lifecycle diff {base} {new} --config {r.config} --json   # every run, robust or not, as data"]
    if not any(n.startswith("bug:") for n in r.names):
        out.append(f"acp-lifecycle variants --variant {base} --variant {new} --config {r.config}")
    out += ["```", ""]
    return "\n".join(out)
