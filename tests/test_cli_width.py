"""Output for people fits 80 columns on a pipe: a shrunk fuzz run, find's command to open a run
(broken between its arguments only), probe's usage line (and it names every option)."""

from __future__ import annotations

import shlex

import pytest

from acp_lifecycle.sims.cli import main, subcommands
from acp_lifecycle.sims.cli.common import command_lines


@pytest.fixture(autouse=True)
def _a_pipe(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # capsys is not a terminal: the pipe's width, 80


def test_a_shrunk_fuzz_run_fits_80_columns(capsys):
    """`fuzz --bug never-echo | cat` printed its messages whole: lines up to 182 columns."""
    assert main(["fuzz", "--bug", "never-echo"]) == 1
    out = capsys.readouterr().out
    assert "minimal failing run" in out and '"jsonrpc"' in out
    assert max(map(len, out.splitlines())) <= 80


def test_finds_command_is_broken_between_arguments_not_inside_one(capsys):
    """`--run 1,0,1,6,` then `4` on the next line: the command could not be copied."""
    assert main(["find", "--config", "default", "c0 <- result id=2 then c0 <- user_message msg_1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 80
    at = lines.index("Open it:")
    command = " ".join(ln.strip().removesuffix("\\").strip() for ln in lines[at + 1:])
    assert shlex.split(command)[:2] == ["acp-lifecycle", "explore"] and "--run" in command
    run = shlex.split(command)[shlex.split(command).index("--run") + 1]
    assert all(part.isdigit() for part in run.split(","))  # whole
    assert all(ln.endswith(" \\") for ln in lines[at + 1:-1])


def test_command_lines_keep_an_option_with_its_value_and_never_cut_an_argument():
    cmd = "acp-lifecycle explore --config default --member lost-response --set cancels=1 --run " + ",".join(["10"] * 40)
    lines = command_lines(cmd, 40)
    assert shlex.split(" ".join(ln.removesuffix(" \\") for ln in lines)) == shlex.split(cmd)
    assert any(ln.strip() == "--member lost-response \\" for ln in lines)
    assert all(len(ln) <= 40 for ln in lines if "10,10" not in ln)


def test_probes_usage_fits_80_columns_and_names_every_option():
    """probe's usage line was 126 columns, said [--timeout S] where the options said TIMEOUT, and
    left out --force, --budget and --script."""
    parser = subcommands()["probe"]
    usage = parser.format_usage()
    assert max(map(len, usage.splitlines())) <= 80
    options = {a.option_strings[-1]: a.metavar for a in parser._actions if a.option_strings and a.dest != "help"}
    for option, metavar in options.items():
        shown = f"[{option} {metavar}" if metavar and option != "--scenario" else f"[{option}"
        assert shown in usage, shown
    assert "[--timeout S]" in usage and "--timeout S" in parser.format_help()
