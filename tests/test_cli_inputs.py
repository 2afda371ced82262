"""Every subcommand and option, driven with bad values: exit 2, one line on stderr, no traceback.

The subcommands and their options are discovered from the parser, so that
commands added later are covered without editing this file. What a value is
(a file to read, a JSON file, a file or a directory to write) is told by the
``path_kind`` tag of ``common.path_argument``; every option whose metavar is
FILE, DIR or PATH must carry one. An option that takes a free string gets the
empty string, a number option a word (and 0 when it must be positive), a
choice an unknown choice.

Each bad value must be refused before any work: nothing on stdout, nothing
created or changed in the temporary directory.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from acp_lifecycle.sims.cli import main, subcommands
from acp_lifecycle.sims.cli.common import PATH_KINDS, positive_int

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = str(ROOT / "examples" / "session.jsonl")

#: Arguments that make each subcommand do its cheapest real work, so that the
#: bad value is the only thing wrong. Positionals by dest; a command not listed
#: gets a sample transcript for a file positional and the first choice of a
#: choice positional.
BASE: dict[str, list[str]] = {
    "check": ["--config", "tiny"],
    "fuzz": ["--config", "tiny", "--examples", "1", "--steps", "5"],
    "variants": ["--config", "tiny"],
    "regress": ["--verdicts", str(ROOT / "docs" / "verdicts.json"), "--variant", "rfd"],
    "schema": ["--config", "tiny"],
    "diff": ["--config", "restart"],
    "find": ["--config", "tiny"],
    "review": ["--config", "restart"],
    "bridge": ["--to", "v2"],
}
POSITIONALS: dict[tuple[str, str], str] = {
    ("scenario", "name"): "cancel-request-wins",
    ("schema", "action"): "validate",
    ("diff", "a"): "rfd",
    ("diff", "b"): "rfd+2.4.0",
    ("find", "pattern"): "AgentInsert",
    ("review", "base"): "rfd",
    ("review", "new"): "rfd+2.4.0",
    ("record", "out"): "recording.jsonl",  # and no agent command: only the bad value can be at fault first
}

#: Options that take a free string for which the empty string is a valid value (none yet).
EMPTY_OK: set[tuple[str, str]] = set()

#: Subcommands that print no result and so need no --json (record relays an agent's stdout; agent speaks JSON-RPC on it).
NO_JSON: set[str] = {"record", "agent"}

#: A directory no one may create files in, even root (sysfs), when there is one.
UNWRITABLE = Path("/sys")
HAVE_UNWRITABLE = UNWRITABLE.is_dir() and not os.access(UNWRITABLE, os.W_OK) or (
    UNWRITABLE.is_dir() and os.geteuid() == 0)
#: A path that exists and cannot be read (EIO on its first byte).
UNREADABLE = Path("/proc/self/mem")

COMMANDS = subcommands()


def _options(parser: argparse.ArgumentParser):
    for a in parser._actions:
        if isinstance(a, (argparse._HelpAction, argparse._VersionAction)):
            continue
        yield a


def _positionals(name: str, parser) -> list[tuple[argparse.Action, str]]:
    out = []
    for a in _options(parser):
        if a.option_strings:
            continue
        if (name, a.dest) in POSITIONALS:
            out.append((a, POSITIONALS[(name, a.dest)]))
        elif getattr(a, "path_kind", None) == "in-file":
            out.append((a, SAMPLE))
        elif a.choices:
            out.append((a, list(a.choices)[0]))
        elif a.nargs not in ("?", "*"):
            pytest.fail(f"{name}: add a base value for its positional {a.dest} to POSITIONALS")
    return out


# --- the bad values -------------------------------------------------------------------


def _out_file(t: Path, suffix: str) -> dict[str, str]:
    cases = {
        "missing parent": f"{t}/missing/x{suffix}",
        "existing file": f"{t}/existing{suffix}",
        "directory": f"{t}/adir{suffix}",
        "file as parent": f"{t}/afile/x{suffix}",
        "empty name": "",
    }
    if HAVE_UNWRITABLE:
        cases["unwritable"] = f"{UNWRITABLE}/x{suffix}"
    return cases


def _out_dir(t: Path) -> dict[str, str]:
    cases = {
        "missing parent": f"{t}/missing/sub",
        "a file": f"{t}/afile",
        "file as parent": f"{t}/afile/sub",
        "not empty": f"{t}/full",
        "empty name": "",
    }
    if HAVE_UNWRITABLE:
        cases["unwritable"] = f"{UNWRITABLE}/sub"
    return cases


def _in_file(t: Path) -> dict[str, str]:
    cases = {
        "missing": f"{t}/nope.json",
        "directory": f"{t}/adir",
        "empty name": "",
        "binary": f"{t}/binary",
    }
    if UNREADABLE.exists():
        cases["unreadable"] = str(UNREADABLE)
    return cases


JSON_SHAPES = {
    "array": "[1, 2, 3]",
    "empty object": "{}",
    "null": "null",
    "string": '"x"',
    "number": "7",
    "not json": "{not json",
    "deep": "[" * 100_000,
    "object of arrays": '{"config": "default", "variants": [], "$defs": []}',
    "object of non-objects": '{"config": "default", "variants": {"rfd": 3}, "$defs": {"ClientRequest": 1}}',
}


def _in_json(t: Path) -> dict[str, str]:
    cases = _in_file(t)
    cases["empty file"] = f"{t}/empty"
    for label in JSON_SHAPES:
        cases[label] = f"{t}/{label.replace(' ', '-')}.json"
    return cases


def _fixtures(t: Path, suffix: str) -> None:
    (t / f"existing{suffix}").write_text("mine")
    (t / f"adir{suffix}").mkdir(exist_ok=True)
    (t / "adir").mkdir(exist_ok=True)
    (t / "afile").write_text("mine")
    (t / "full").mkdir()
    (t / "full" / "mine.txt").write_text("mine")
    (t / "binary").write_bytes(b"\xff\xfe\x00\x01\x80garbage\n")
    (t / "empty").write_bytes(b"")
    for label, text in JSON_SHAPES.items():
        (t / f"{label.replace(' ', '-')}.json").write_text(text)


def _snapshot(t: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(t)): (p.read_bytes() if p.is_file() else None) for p in sorted(t.rglob("*"))}


def _cases():
    """(id, subcommand, option or positional dest, bad-value kind, label)."""
    for name, parser in COMMANDS.items():
        for a in _options(parser):
            flag = a.option_strings[-1] if a.option_strings else a.dest
            kind = getattr(a, "path_kind", None)
            if kind == "in-json":
                labels = list(_in_json(Path("/t")))
            elif kind == "in-file":
                labels = list(_in_file(Path("/t")))
            elif kind == "out-file":
                labels = list(_out_file(Path("/t"), ".x"))
            elif kind == "out-dir":
                labels = list(_out_dir(Path("/t")))
            elif a.choices:
                kind, labels = "choice", ["unknown choice"]
            elif a.type is positive_int:
                kind, labels = "positive", ["zero", "negative", "a word"]
            elif a.type is int:
                kind, labels = "int", ["a word"]
            elif a.nargs == 0 or (name, flag) in EMPTY_OK:
                continue
            else:
                kind, labels = "string", ["empty string"]
            for label in labels:
                yield pytest.param(name, a.dest, kind, label, id=f"{name} {flag} {label}")


def _value(kind: str, label: str, a: argparse.Action, t: Path) -> str:
    suffix = a.suffixes[0] if getattr(a, "suffixes", ()) else ".txt"
    if kind == "in-json":
        return _in_json(t)[label]
    if kind == "in-file":
        return _in_file(t)[label]
    if kind == "out-file":
        return _out_file(t, suffix)[label]
    if kind == "out-dir":
        return _out_dir(t)[label]
    return {"unknown choice": "no-such-choice", "zero": "0", "negative": "-3", "a word": "many",
            "empty string": ""}[label]


@pytest.mark.parametrize("name, dest, kind, label", list(_cases()))
def test_a_bad_value_is_one_line_exit_2_before_any_work(name, dest, kind, label, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may land in the current directory either
    work = tmp_path / "t"
    work.mkdir()
    parser = COMMANDS[name]
    action = next(a for a in _options(parser) if a.dest == dest)
    suffix = action.suffixes[0] if getattr(action, "suffixes", ()) else ".txt"
    _fixtures(work, suffix)
    before = _snapshot(tmp_path)
    bad = _value(kind, label, action, work)
    argv = [name]
    for a, value in _positionals(name, parser):
        argv.append(bad if a is action else value)
    argv += BASE.get(name, [])
    if action.option_strings:
        argv += [action.option_strings[-1], bad]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, f"{argv}: exit {code}\n{out}{err}"
    assert err.startswith("acp-lifecycle: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and out == "", out
    assert _snapshot(tmp_path) == before, "a bad value must not create or change anything"


def test_every_path_option_is_tagged_with_what_it_is():
    untagged = []
    for name, parser in COMMANDS.items():
        for a in _options(parser):
            kind = getattr(a, "path_kind", None)
            if kind is not None:
                assert kind in PATH_KINDS
            elif a.metavar in ("FILE", "DIR", "PATH") or a.dest in ("file", "files", "out", "path"):
                untagged.append(f"{name} {a.option_strings or a.dest}")
    assert not untagged, f"declare these with common.path_argument(kind=...): {untagged}"


def test_every_subcommand_that_prints_a_result_has_json():
    missing = [n for n, p in COMMANDS.items() if n not in NO_JSON and "--json" not in p._option_string_actions]
    assert not missing, f"add common.add_json(p) to: {missing}"


def test_every_subcommand_has_a_base_that_runs():
    for name, parser in COMMANDS.items():
        _positionals(name, parser)  # fails when a positional has no base value


@pytest.mark.parametrize("argv", [["--version"], *[[n, "--help"] for n in COMMANDS]], ids=lambda a: " ".join(a))
def test_version_and_help_exit_0(argv, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    out, _ = capsys.readouterr()
    assert e.value.code == 0 and out.strip()


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["check", "--bridge", "to-v1", "--config", "tiny"], "--config does not apply with --bridge"),
        (["check", "--bridge", "to-v1", "--bug", "never-echo"], "--bug does not apply with --bridge"),
        (["check", "--config", "tiny", "--force"], "--force applies only with --diagrams or --export-traces"),
        (["check", "--bug", ""], "unknown bug ''"),
        (["schema", "pull", "--schema", SAMPLE], "--schema does not apply to pull"),
        (["schema", "path", "--config", "tiny"], "--config does not apply to path"),
        (["diagrams", "--format", ""], "--format: give at least one of"),
        (["diagrams", "--format", "gif"], "unknown format 'gif'"),
        (["diagrams", "--check", "--format", "png"], "--format does not apply with --check"),
        (["scenario", "--all", "cancel-request-wins"], "give no NAME with it"),
        (["scenario", "--all", "--diagram", "x.svg"], "--diagram does not apply with --all"),
        (["scenario", "--list", "--all"], "--all does not apply with --list"),
        (["scenario"], "name a scenario, or pass --all or --list"),
        (["scenario", "cancel-request-wins", "--force"], "--force applies only with --diagram"),
        (["variants", "--list", "--config", "tiny"], "--config does not apply with --list"),
        (["variants", "--json", "--markdown"], "choose one of --json and --markdown"),
        (["regress", "--yes"], "--yes does not apply without --accept"),
        (["trace", "--max-nodes", "5", SAMPLE], "--max-nodes does not apply without --model"),
        (["trace", "--no-schema", "--schema", SAMPLE, SAMPLE], "--schema does not apply with --no-schema"),
    ],
)
def test_options_that_do_not_apply_are_refused(argv, needle, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and needle in err and err.count("\n") == 1 and out == "", err


def test_generated_files_are_not_written_outside_the_checkout(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv in (["diagrams"], ["docs"], ["diagrams", "--check"], ["docs", "--check"]):
        assert main(argv) == 2
        assert "not in the acp-lifecycle checkout" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_diagrams_out_elsewhere_writes_only_there(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["diagrams", "--out", "d", "--format", "mermaid", "--json"]) == 0
    import json

    wrote = json.loads(capsys.readouterr().out)["wrote"]
    assert wrote and all(p.startswith("d/") for p in wrote)
    assert [p.name for p in tmp_path.iterdir()] == ["d"]
