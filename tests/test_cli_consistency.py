"""One wording, one name, one place to look across the commands: a bad --port, the processes
option, the default --rules in each help, an action's own --help (`bridge serve`, `schema pull`)."""

from __future__ import annotations

import pytest

from acp_lifecycle.sims.cli import main, subcommands


@pytest.mark.parametrize("value, said", [("x", "not a port number: 'x'"), ("99999", "a port is between")])
def test_a_bad_port_has_one_wording(value, said, capsys):
    """explore said "--port must be 0..65535, not 99999" and "invalid int value"; provider otherwise."""
    errors = []
    for command in (["explore"], ["provider"]):
        assert main([*command, "--port", value]) == 2
        errors.append(capsys.readouterr().err)
    assert all(e.startswith(f"acp-lifecycle: error: argument --port: {said}") and e.count("\n") == 1 for e in errors)
    assert errors[0].replace("between 0", "between 1") == errors[1]  # (explore takes 0: a free port)


def test_the_processes_option_is_workers_and_mutates_jobs_still_works():
    parser = subcommands()["mutate"]
    assert parser.parse_args(["--workers", "3"]).workers == parser.parse_args(["--jobs", "3"]).workers == 3
    assert "--workers" in subcommands()["check"]._option_string_actions


def test_each_commands_help_says_its_default_rules():
    """Some commands default to rfd, others to rfd+2.4.0: each help says which."""
    shown = {}
    for name, parser in subcommands().items():
        action = parser._option_string_actions.get("--rules")
        if action is not None:
            assert "default: " in action.help, name
            shown[name] = action.help.split("default: ", 1)[1]
    assert shown["check"].startswith("rfd") and shown["trace"] == "rfd+2.4.0" and shown["agent"].startswith("rfd+2.4.0")
    assert {"check", "fuzz", "find", "explore", "scenario", "diagrams", "trace", "agent", "mutate"} <= set(shown)


@pytest.mark.parametrize("argv, usage, not_in", [
    (["bridge", "serve", "--help"], "usage: acp-lifecycle bridge serve [-h] --to {v1,v2}", "FILE|serve"),
    (["bridge", "serve", "--to", "v2", "-h"], "usage: acp-lifecycle bridge serve", "--partial"),
    (["schema", "pull", "--help"], "usage: acp-lifecycle schema pull [-h] [--json]", "--config"),
    (["schema", "validate", "--help"], "usage: acp-lifecycle schema validate", "{pull,path,validate}"),
    (["schema", "path", "--help"], "usage: acp-lifecycle schema path", "--bug"),
])
def test_an_actions_help_is_its_own(argv, usage, not_in, capsys, monkeypatch):
    """`bridge serve --help` and `schema pull --help` printed the parent command's help."""
    monkeypatch.setenv("COLUMNS", "80")  # argparse's width
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and out.startswith(usage) and not_in not in out
    assert max(map(len, out.splitlines())) <= 80


def test_the_commands_own_help_is_unchanged(capsys):
    with pytest.raises(SystemExit):
        main(["bridge", "--help"])
    assert capsys.readouterr().out.startswith("usage: acp-lifecycle bridge [-h] --to {v1,v2}")
