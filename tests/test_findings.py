"""Every finding of docs/findings.md reproduces: each **Reproduce:** line is run and shows what it says.

A line reads ``Reproduce: `acp-lifecycle ARGS` → WHAT``, WHAT one of: ``the run below`` (a scenario
that runs), ```PROPERTY` violated, N steps`` / ```PROPERTY` holds`` / ```PROPERTY` reached, N steps``
(a check, judged on its JSON), ``no difference`` (a diff that exits 0), ``open questions `KIND` N, ...
(lines)`` (a bridged check's open questions and the length of each shortest transcript).
"""

import contextlib
import io
import json
import re
import shlex
from pathlib import Path

import pytest

from acp_lifecycle.sims.cli import main

FINDINGS = Path(__file__).resolve().parent.parent / "docs" / "findings.md"
LINE = re.compile(r"Reproduce: `acp-lifecycle ([^`]+)` → (.+)$", re.M)
VERDICT = re.compile(r"`(\w+)` (violated|reached), (\d+) steps\.$|`(\w+)` holds\.$")
#: the reproductions that explore more than a member or bridge every run (about 30 s each)
SLOW = ("--bridge",)


def _lines() -> list[tuple[str, str]]:
    return LINE.findall(FINDINGS.read_text())


def _params():
    for args, what in _lines():
        marks = [pytest.mark.slow] if any(s in args for s in SLOW) else []
        yield pytest.param(args, what, id=f"{args} {what[:40]}", marks=marks)


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def test_every_finding_carries_a_command_that_reproduces_it():
    text = FINDINGS.read_text()
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    assert len(sections) >= 10
    for section in sections:
        assert "Reproduce: `acp-lifecycle " in section, section.splitlines()[0]
    for _, what in _lines():  # each says what it shows, in a form the test reads
        assert what in ("the run below.", "no difference.") or VERDICT.search(what) or what.startswith("open questions"), what


@pytest.mark.parametrize("args, what", list(_params()))
def test_the_finding_reproduces(args, what):
    argv = shlex.split(args)
    if what == "the run below.":
        assert argv[0] == "scenario"
        assert _run(argv)[0] == 0
        return
    if what == "no difference.":
        assert argv[0] == "diff" and _run(argv)[0] == 0
        return
    code, out = _run(argv + ["--json"])
    assert code in (0, 1), out
    data = json.loads(out)
    if what.startswith("open questions"):
        shortest = {q["kind"]: len(q["transcript"]) for q in data["open_questions"]}
        for kind, n in re.findall(r"`([\w-]+)` (\d+)", what):
            assert shortest.get(kind) == int(n), (kind, shortest.get(kind))
        return
    m = VERDICT.search(what)
    pid = m.group(1) or m.group(4)
    verdict = {p["id"]: p for p in data["properties"]}[pid]
    if m.group(4):
        assert verdict["status"] == "holds", verdict["message"]
    else:
        assert verdict["status"] == m.group(2) and len(verdict["trace"]) == int(m.group(3)), (
            verdict["status"], len(verdict["trace"] or ()))
