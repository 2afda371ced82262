"""The review of an addition as Markdown: what a proposal brings, and whether it is a conservative extension.

``markdown.py`` writes a review of two rule sets; when NEW composes proposals BASE does not
(``sims.diff.addition``), its document is this one: the proposal's clauses and flags, each
situation it brings as its shortest run (a table of messages and a Mermaid chart, with the
clauses of the rules that name it), its rules' verdicts, whether restricted to the runs without
its messages NEW is BASE (and the runs where not), what each flag's other value changes, and the
verdicts of BASE's rules.
"""

from __future__ import annotations

from acp_lifecycle.model.clauses import lookup
from acp_lifecycle.model.proposals import get_proposal
from acp_lifecycle.sims.diff.observe import observe, observed_lines, render_message
from acp_lifecycle.sims.diff.report import compact

__all__ = ["addition_markdown", "run_rows"]


def _code(text) -> str:
    text = str(text).replace("|", "\\|")
    return f"`{text}`" if "`" not in text else f"``{text}``"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def run_rows(run) -> list[tuple[int, str, str, str]]:
    """(step, connection, arrow, message) for every message a run puts on the wire, in order (connections
    labelled as ``trace`` labels them: ``c0``, then ``c0.1`` after client 0's connection closed)."""
    rows, epoch = [], {}
    for n, (pre, step) in enumerate(run, 1):
        for raw in observe(pre, step):
            c = raw[1]
            label = f"c{c}" + (f".{epoch[c]}" if epoch.get(c) else "")
            if raw[0] == "closed":
                rows.append((n, label, "", "connection closes"))
                epoch[c] = epoch.get(c, 0) + 1
                continue
            sender, msg = raw[2], raw[3]
            rows.append((n, label, "→" if sender == "client" else "←", compact(render_message(sender, msg))))
    return rows


def _value(v) -> str:
    """A flag's value as a variant file writes it."""
    return str(v).lower() if isinstance(v, bool) else str(v)


def _clause_lines(cids) -> list[str]:
    out = []
    for cid in cids:
        c = lookup(cid)
        if c is not None:
            out.append(f"- {c.source} {c.level} (`{cid}`): \"{' '.join(c.text.split())}\"")
    return out


def _summary(r) -> list[str]:
    a = r.addition
    base, new = r.names
    props = ", ".join(f"`{p}`" for p in a.proposals)
    methods = ", ".join(f"`{m}`" for m in a.methods) or "none"
    reached = sum(1 for b in a.behaviours if b.run)
    broken = [p.id for p, v in a.rules if v is not None and v.status == "violated"]
    if a.conservative:
        cons = (f"Restricted to the runs that send none of its messages ({methods}), `{new}` is a **conservative "
                f"extension** of `{base}`: it allows and forbids exactly what `{base}` does, within the bounds "
                f"({_plural(len(a.restricted.members), 'member')}).")
    else:
        n = len(a.restricted.only_a) + len(a.restricted.only_b)
        cons = (f"Restricted to the runs that send none of its messages ({methods}), `{new}` is **not** a "
                f"conservative extension of `{base}`: {_plural(n, 'kind')} of message differ (below).")
    rules = (f"{_plural(len(a.rules), 'rule')} of it: " + ("every one holds." if not broken else
             f"⚠ {', '.join(f'`{b}`' for b in broken)} violated."))
    return [f"**Summary.** `{new}` composes the proposal{'s' * (len(a.proposals) > 1)} {props} with `{base}`. "
            f"{cons} It brings {_plural(len(a.behaviours), 'situation')} `{base}` cannot reach ({reached} reached, "
            f"each shown below by its shortest run); {rules}", ""]


def _proposal(name: str, new) -> list[str]:
    p = get_proposal(name)
    d = p.document
    out = [f"## The proposal `{p.name}`", "", f"{p.title}: {p.summary}.", "",
           f"From *{d.title}* ({d.where}), revision {d.revision}. Its sentences, quoted:", ""]
    for c in p.clauses:
        scope = f" *(not modelled: {c.out_of_scope})*" if c.out_of_scope else ""
        out.append(f"- `{c.id}` {c.level}: \"{' '.join(c.text.split())}\"{scope}")
    if p.flags:
        out += ["", "Its flags (where it leaves a question open, or where two texts differ):", ""]
        for f in p.flags:
            out.append(f"- `{f.name}` = `{_value(new.flag(f.name, f.default))}` here (values: "
                       + ", ".join(f"`{_value(v)}`" for v in f.values) + f"; default `{_value(f.default)}`): {f.doc}.")
    return out + [""]


def _behaviour(r, n: int, b) -> list[str]:
    from acp_lifecycle.sims.diagrams.sequence import sequence_mermaid

    _, new = r.names
    out = [f"### {n}. {b.prop.summary.rstrip('.')}", "", f"Witness `{b.prop.id}` of `{b.proposal}`."]
    if not b.run:
        return out + ["", "⚠ **Not reached** within the bounds: nothing below shows it.", ""]
    out[-1] += f" Member `{b.member}`: {_plural(len(b.run), 'step')}, the shortest run `{new}`'s check found."
    out += ["", "| step | conn | | message |", "|---:|---|---|---|"]
    out += [f"| {s} | {c} | {arrow} | {_code(text)} |" for s, c, arrow, text in run_rows(b.run)]
    lines = _clause_lines(b.clauses)
    if lines:
        out += ["", "**Clauses of the rules that need it:**"] + lines
    chart = sequence_mermaid(b.run, f"{b.proposal}: {b.prop.summary.rstrip('.')}",
                             f"{b.prop.id}: {b.prop.summary}", violation=False, notes={})
    out += ["", "```mermaid", chart.rstrip("\n"), "```", "",
            f"Reproduce: `acp-lifecycle check --variant {new} --config {b.member}` (witness `{b.prop.id}`)", ""]
    return out


def _rules(r) -> list[str]:
    a = r.addition
    out = ["## Its rules", "", "| rule | level | verdict | clause |", "|---|---|---|---|"]
    for p, v in a.rules:
        verdict = "not checked" if v is None else (f"⚠ violated ({len(v.trace)} steps)" if v.status == "violated"
                                                   else v.status if v.outcome != "not applicable" else "n/a")
        out.append(f"| `{p.id}` | {p.level} | {verdict} | `{p.clauses[0] if p.clauses else ''}` |")
    return out + [""]


def _flags(r) -> list[str]:
    a = r.addition
    if not a.flags:
        return []
    out = ["## What each flag's other value changes", ""]
    for fd in a.flags:
        d = fd.diff
        members = ", ".join(f"`{m.config.name}`" for m in d.members)
        head = f"`{fd.flag.name}` = `{_value(fd.value)}` (on {members})"
        if not d.different:
            out += [f"- {head}: no difference on the wire within the bounds.", ""]
            continue
        out += [f"- {head}: {_plural(len(d.only_a), 'kind')} of message only the value here allows, "
                f"{_plural(len(d.only_b), 'kind')} only `{_value(fd.value)}` allows. The shortest run of each "
                "(**!**: the message the other value does not allow after the same ones):", ""]
        for ws, who in ((d.only_a, "here"), (d.only_b, f"with `{_value(fd.value)}`")):
            for k, w in ws.items():
                out += [f"  Only {who}: {k} (member `{w.member}`)", "",
                        "  | | step | conn | | message |", "  |---|---:|---|---|---|"]
                obs = observed_lines(w)
                for i, o in enumerate(obs):
                    mark = "**!**" if i == len(obs) - 1 else ""
                    if o.get("event") == "end":
                        out.append(f"  | {mark} | {o['step']} | | | (the run ends) |")
                    elif o.get("event") == "closed":
                        out.append(f"  | {mark} | {o['step']} | {o['conn']} | | connection closes |")
                    else:
                        arrow = "→" if o["from"] == "client" else "←"
                        out.append(f"  | {mark} | {o['step']} | {o['conn']} | {arrow} | {_code(compact(o['msg']))} |")
                out.append("")
    return out


def _restricted(r, run_section) -> list[str]:
    a = r.addition
    base, new = r.names
    out = ["## Restricted to the runs without its messages", ""]
    if a.conservative:
        return out + [f"No difference: every run of `{base}` is a run of `{new}` that sends none of "
                      f"{', '.join(f'`{m}`' for m in a.methods)}, message for message, and the other way round: "
                      "the proposal changes nothing of what the core does without its messages.", ""]
    return out + ["Each kind of message one allows and the other does not, as a plain review shows it.", ""] + \
        run_section(r)[2:]


def addition_markdown(r, run_section, verdicts, bounds) -> list[str]:
    """The body of a review of an addition (``run_section``, ``verdicts``, ``bounds``: markdown.py's sections)."""
    out = _summary(r)
    for name in r.addition.proposals:
        out += _proposal(name, r.new)
    out += ["## What it brings", "",
            "Each situation the proposal names (its witnesses: each outcome of its races), by the shortest run "
            f"`{r.names[1]}`'s check found.", ""]
    for n, b in enumerate(r.addition.behaviours, 1):
        out += _behaviour(r, n, b)
    out += _rules(r) + _restricted(r, run_section) + _flags(r) + verdicts(r) + bounds(r)
    return out
