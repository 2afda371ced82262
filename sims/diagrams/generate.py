"""What ``acp-lifecycle diagrams`` writes: every diagram into ``diagrams/``, ``docs/diagrams.md``, counterexamples."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping, Sequence

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.model.machines import MACHINES
from acp_lifecycle.model.properties import BY_ID
from acp_lifecycle.model.system import Step, System

from .base import FORMATS, SHOWCASE_BUG, TEXT_FORMATS
from .drawing import draw_lifecycle, draw_machine
from .lifecycle import Lifecycle, lifecycle, lifecycle_dot, lifecycle_mermaid
from .machines import doc_line, machine_dot, machine_mermaid, machine_name
from .sequence import sequence_mermaid, write_sequence

# ---------------------------------------------------------------------------
# Counterexamples of the seeded bugs, and of a check
# ---------------------------------------------------------------------------


def bug_counterexample(name: str) -> tuple[list[tuple[System, Step]], str, str]:
    """(trace, title, note) of a seeded bug's shortest counterexample on its member.

    Explores only the property the bug breaks: the BFS trace is the same as
    with every property, in a fraction of the time.
    """
    from acp_lifecycle.sims.configs import get_suite
    from acp_lifecycle.sims.search.explore import explore

    bug = BUGS[name]
    cfg = get_suite(bug.member).members[0]
    v = explore(cfg, bug.rules, properties=[BY_ID[bug.breaks]]).verdicts[bug.breaks]
    if v.status != "violated":
        raise RuntimeError(f"bug {name!r} does not violate {bug.breaks} on member {bug.member}")
    title = f"Seeded bug {bug.name} (member {bug.member}): {bug.summary}"
    note = f"violated: {bug.breaks}\n{v.message}"
    return list(v.trace), title, note


def write_counterexamples(verdicts: Mapping, out_dir: str | Path, formats: Iterable[str] = ("mermaid", "png"),
                          found_in: Mapping[str, str] | None = None) -> list[Path]:
    """Write ``counterexample-<property>.<ext>`` for every violated verdict (``check --diagrams DIR``).

    ``verdicts`` is ``SuiteResult.verdicts`` or ``Result.verdicts``; pass
    ``found_in`` (``SuiteResult.found_in``) to name the member in the title.
    """
    out = _out_dir(out_dir)
    formats = _formats(formats, allowed=("mermaid", "svg", "png"))
    written = []
    for pid, v in verdicts.items():
        if v.status != "violated" or not v.trace:
            continue
        where = f" (member {found_in[pid]})" if found_in and found_in.get(pid) else ""
        title = f"{pid}{where}: {v.outcome}"
        note = f"{v.outcome}: {pid}\n{v.message}"
        for fmt in formats:
            written.append(write_sequence(v.trace, out / f"counterexample-{pid}{FORMATS[fmt]}", title, note,
                                          violation=v.prop.expect == "must_hold"))
    return written


# ---------------------------------------------------------------------------
# Everything in diagrams/
# ---------------------------------------------------------------------------


def _formats(formats: Iterable[str], allowed: Sequence[str] = tuple(FORMATS)) -> list[str]:
    formats = list(dict.fromkeys(formats))
    bad = [f for f in formats if f not in allowed]
    if bad:
        raise ValueError(f"unknown format {bad[0]!r}; choose from {', '.join(allowed)}")
    return formats


def _out_dir(out_dir: str | Path) -> Path:
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    return out


def _artifacts() -> list[tuple[str, dict]]:
    """(file stem, {format: writer(path)}) for everything ``write_all`` makes."""
    items: list[tuple[str, dict]] = []
    for m in MACHINES:
        items.append((f"machine-{machine_name(m)}", {
            "mermaid": lambda p, m=m: p.write_text(machine_mermaid(m)),
            "dot": lambda p, m=m: p.write_text(machine_dot(m)),
            "svg": lambda p, m=m: draw_machine(m, p),
            "png": lambda p, m=m: draw_machine(m, p),
        }))
    cache: dict[str, Lifecycle] = {}

    def lc(key: str) -> Lifecycle:
        if key not in cache:
            if key == "tiny":
                cache[key] = lifecycle("tiny")
            else:
                bug = BUGS[key]
                cache[key] = lifecycle(bug.member, bug.rules)
        return cache[key]

    for key, stem in (("tiny", "lifecycle-tiny"), (SHOWCASE_BUG, f"lifecycle-{BUGS[SHOWCASE_BUG].member}-{SHOWCASE_BUG}")):
        items.append((stem, {
            "mermaid": lambda p, k=key: p.write_text(lifecycle_mermaid(lc(k))),
            "dot": lambda p, k=key: p.write_text(lifecycle_dot(lc(k))),
            "svg": lambda p, k=key: draw_lifecycle(lc(k), p),
            "png": lambda p, k=key: draw_lifecycle(lc(k), p),
        }))
    ce: dict[str, tuple] = {}

    def seq(path: Path) -> Path:
        if "t" not in ce:
            ce["t"] = bug_counterexample(SHOWCASE_BUG)
        trace, title, note = ce["t"]
        return write_sequence(trace, path, title, note)

    items.append((f"counterexample-{SHOWCASE_BUG}", {"mermaid": seq, "svg": seq, "png": seq}))
    return items


def generated_names(formats: Iterable[str] = tuple(FORMATS)) -> list[str]:
    """The file names ``write_all`` writes for ``formats``, in order."""
    formats = _formats(formats)
    return [stem + FORMATS[f] for stem, writers in _artifacts() for f in formats if f in writers]


def write_all(out_dir: str | Path = "diagrams", formats: Iterable[str] = ("mermaid", "dot", "svg", "png")) -> list[Path]:
    """Write every diagram into ``out_dir``; returns the paths written.

    Files: ``machine-<name>.*`` for the four machines, ``lifecycle-tiny.*``,
    ``lifecycle-tiny-answer-at-receipt.*`` (the projection under a seeded bug,
    its failing node in red) and ``counterexample-answer-at-receipt.*`` (a
    sequence chart; no DOT). Text is byte-stable; SVG is too (fixed hash salt,
    no date); PNG need not be. Only these names are ever written.
    """
    out = _out_dir(out_dir)
    formats = _formats(formats)
    written = []
    for stem, writers in _artifacts():
        for fmt in formats:
            if fmt in writers:
                path = out / (stem + FORMATS[fmt])
                if path.is_dir():
                    raise ValueError(f"{path} is a directory")
                writers[fmt](path)
                written.append(path)
    return written


def stale(out_dir: str | Path = "diagrams") -> list[Path]:
    """The text diagrams (Mermaid, DOT) in ``out_dir`` that are missing or differ from a fresh generation."""
    import tempfile

    out = Path(out_dir)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = write_all(tmp, TEXT_FORMATS)
        return [out / p.name for p in fresh if not (out / p.name).is_file() or (out / p.name).read_bytes() != p.read_bytes()]


# ---------------------------------------------------------------------------
# docs/diagrams.md
# ---------------------------------------------------------------------------


def _files(link: str, stem: str, dot: bool = True) -> str:
    """The line linking one diagram's files (``link``: the path from the page to diagrams/)."""
    names = [("PNG", ".png"), ("SVG", ".svg"), ("Mermaid", ".mmd")] + ([("DOT", ".dot")] if dot else [])
    return "Files: " + ", ".join(f"[{k}]({link}{stem}{ext})" for k, ext in names) + "."


def _block(text: str) -> list[str]:
    return ["```mermaid", text.rstrip("\n"), "```"]


def diagrams_markdown(link: str = "../diagrams/") -> str:
    """The text of ``docs/diagrams.md``: every Mermaid diagram inline, links to the drawings.

    ``link`` is the path from the document to the diagrams directory.
    """
    out = _intro_section()
    for m in MACHINES:
        stem = f"machine-{machine_name(m)}"
        out += [f"### {m.__name__}", "", doc_line(m), "", *_block(machine_mermaid(m)), "", _files(link, stem), ""]
    bug = BUGS[SHOWCASE_BUG]
    return "\n".join(out + _lifecycle_section(link, bug) + _sequence_section(link, bug))


def _intro_section() -> list[str]:
    return [
        "<!-- Generated by `acp-lifecycle diagrams` (sims/diagrams.py); do not edit by hand. -->",
        "",
        "# Diagrams",
        "",
        "Every diagram here and in [`diagrams/`](../diagrams/) is generated from the model: the component",
        "machines from `model/machines.py`, the lifecycle by exploring `model/system.py`, the sequence",
        "chart from a counterexample the explorer finds. Regenerate them after changing a machine or the",
        "composed model:",
        "",
        "```sh",
        "acp-lifecycle diagrams              # writes diagrams/ (Mermaid, DOT, SVG, PNG) and this page",
        "# or, from Python:",
        "python -c 'from acp_lifecycle.sims.diagrams import write_all, write_docs; write_all(\"diagrams\"); write_docs(\"docs/diagrams.md\")'",
        "```",
        "",
        "`tests/test_diagrams.py` fails when the Mermaid or DOT files in `diagrams/`, or this page, differ",
        "from what the code generates now. The pictures (PNG, SVG) are drawn with matplotlib on a layered",
        "layout (no Graphviz needed), left to right, or top to bottom where left to right would be a strip",
        "too long to read at page width (the lifecycles); the DOT files are there for Graphviz users.",
        "",
        "## Component machines",
        "",
        "Each component of the lifecycle is one small python-statemachine class; the composed model moves",
        "a request's phase, the foreground state, a tool call and a submission only through their tables.",
        "In the drawings, the black dot marks the initial state and a double border a final state.",
        "",
    ]


def _lifecycle_section(link: str, bug) -> list[str]:
    """The composed lifecycle of ``tiny``, then the same projection under the showcase bug."""
    tiny = lifecycle("tiny")
    buggy = lifecycle(bug.member, bug.rules)
    bad = ", ".join(f"`{fg}` / `{phase}` ({', '.join(f'`{p}`' for p in props)})"
                    for (fg, phase), props in buggy.violations.items())
    return [
        "## The composed lifecycle (configuration `tiny`)",
        "",
        f"Configuration `tiny` (one client, one prompt, no faults, FIFO channels both ways) has {tiny.states}",
        "reachable states. Projected onto what a reader follows, the agent's foreground state and the",
        "first prompt's phase (`not sent`, then `sent` until the agent has received it), they become the nodes below;",
        "an edge carries every action that moves from one node to another. Actions that do not change",
        "the projection (deliveries to the client, echoes) are not drawn. No `always` property fails in",
        "any state of the correct model, so no node is marked.",
        "",
        *_block(lifecycle_mermaid(tiny)),
        "",
        _files(link, "lifecycle-tiny"),
        "",
        f"### The same projection under the seeded bug `{bug.name}`",
        "",
        f"With the bug ({bug.summary}), the projection changes and the nodes where an `always` property",
        f"fails are marked in red: {bad}.",
        "",
        *_block(lifecycle_mermaid(buggy)),
        "",
        _files(link, f"lifecycle-{bug.member}-{bug.name}"),
        "",
    ]


def _sequence_section(link: str, bug) -> list[str]:
    """The showcase bug's shortest counterexample as a sequence chart, and how to read one."""
    trace, title, note = bug_counterexample(bug.name)
    return [
        "## Counterexample sequence charts",
        "",
        f"The shortest counterexample of the seeded bug `{bug.name}` (property `{bug.breaks}`, member",
        f"`{bug.member}`), as `acp-lifecycle check --config {bug.member} --bug {bug.name}` finds it:",
        "",
        *_block(sequence_mermaid(trace, title, note)),
        "",
        _files(link, f"counterexample-{bug.name}", dot=False),
        "",
        "How to read a sequence chart:",
        "",
        "* one lane per client and one for the agent; every JSON-RPC message is an arrow, numbered by the",
        "  step of the trace that sends it (the numbers of `acp-lifecycle check`'s trace), dashed for a",
        "  response;",
        "* an arrow is drawn when its message is sent; over a FIFO channel it reaches the other side later,",
        "  in order. The agent handling a message (`AgentReceive`, `AgentResume`) is a note over the agent;",
        "  a client receiving one is not drawn;",
        "* steps that send nothing (`AgentInsert`, `AgentReserveId`, ...) are notes over the agent; faults",
        "  (`AgentFail...`, `ConnectionLost`, `AgentRestart`) are amber notes, listing what a lost",
        "  connection dropped in transit;",
        "* the last note, in red, names the property violated and why.",
        "",
    ]


def write_docs(path: str | Path = "docs/diagrams.md") -> Path:
    """Write ``diagrams_markdown()`` to ``path`` (links computed relative to ``diagrams/`` beside ``docs/``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(diagrams_markdown())
    return path
