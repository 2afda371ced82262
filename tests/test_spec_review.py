"""docs/spec-review.md quotes the real output of every command it shows.

Every fenced block that starts with ``$ acp-lifecycle ARGS`` is the output of that command, run
here again and compared (the seconds of diff's member table aside). Blocks on a whole named
configuration (``default``: a diff and two checks each) are ``slow``; the rest run in the fast
suite. ``python tests/test_spec_review.py --write`` rewrites the blocks from the commands.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "spec-review.md"

#: a fence of three or more backticks, the command line, the output, the same fence
BLOCK = re.compile(r"^(?P<fence>`{3,})(?P<lang>\w*)\n\$ acp-lifecycle (?P<cmd>[^\n]*)\n(?P<out>.*?)^(?P=fence)$",
                   re.M | re.S)


def blocks(text: str) -> list[re.Match]:
    return list(BLOCK.finditer(text))


def slow(cmd: str) -> bool:
    """A command on a whole named suite (no --config member): a diff or review of `default`."""
    args = shlex.split(cmd)
    if args[0] == "find":
        return False
    config = args[args.index("--config") + 1] if "--config" in args else "default"
    return config in ("default", "wide")


def run(cmd: str) -> str:
    """The command's stdout, as the doc shows it (80 columns)."""
    from acp_lifecycle.sims.cli import main

    out = io.StringIO()
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            main(shlex.split(cmd))
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return out.getvalue()


def no_seconds(text: str) -> str:
    """Figures that vary between runs: the seconds column of diff's member table."""
    return re.sub(r"(?m)^(\S+\s+[\d,]+/[\d,]+)\s+\d+\.\d\d", r"\1 <s>", text)


def _cases(fast: bool) -> list[str]:
    return [m["cmd"] for m in blocks(DOC.read_text()) if slow(m["cmd"]) != fast]


def test_the_doc_quotes_commands():
    cmds = [m["cmd"] for m in blocks(DOC.read_text())]
    assert any(c.startswith("review ") for c in cmds) and any(c.startswith("find ") for c in cmds)
    assert any(not slow(c) for c in cmds), "keep one fast block"


def _check(cmd: str) -> None:
    (m,) = [m for m in blocks(DOC.read_text()) if m["cmd"] == cmd][:1]
    assert no_seconds(m["out"]) == no_seconds(run(cmd)), f"docs/spec-review.md: `{cmd}` output drifted"


@pytest.mark.parametrize("cmd", _cases(fast=True))
def test_a_quoted_output_is_the_real_one(cmd):
    _check(cmd)


@pytest.mark.slow
@pytest.mark.parametrize("cmd", _cases(fast=False))
def test_a_quoted_output_on_a_whole_configuration_is_the_real_one(cmd):
    _check(cmd)


def test_the_ack_at_receipt_excerpt_is_in_the_real_output():
    """The excerpt in "What `diff` observes" (a witness of the multi-client member, where it is shortest)."""
    text = DOC.read_text()
    excerpt = text.split("for the same request (the agent rejected the prompt it had acknowledged and never "
                         "inserted):\n\n```\n", 1)[1].split("```", 1)[0]
    assert excerpt.strip("\n") in run("diff rfd ack-at-receipt --config multi-client")


def write() -> None:
    """Rewrite every quoted block from its command."""
    text = DOC.read_text()
    out, last = [], 0
    for m in blocks(text):
        out += [text[last:m.start("out")], run(m["cmd"])]
        last = m.end("out")
        print(f"ran: acp-lifecycle {m['cmd']}", file=sys.stderr)
    DOC.write_text("".join(out) + text[last:])


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_spec_review.py --write")
    write()
