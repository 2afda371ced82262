"""The command line: exit statuses, one-line errors, JSON output."""

import json

import pytest

from acp_lifecycle.model.properties import PROPERTIES
from acp_lifecycle.sims.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_on_tiny_passes_and_prints_the_table(capsys):
    code, out, err = run(capsys, "check", "--config", "tiny")
    assert code == 0
    assert "success_only_after_insertion" in out and f"All {len(PROPERTIES)} verdicts match" in out


def test_check_json_is_data(capsys):
    code, out, _ = run(capsys, "check", "--config", "failures", "--json")
    data = json.loads(out)
    assert code == 0 and data["ok"] is True
    assert data["members"][0]["states"] == 1112  # tests/test_explore.py pins it (and why it changed)
    by_id = {p["id"]: p for p in data["properties"]}
    race = by_id["inserted_prompt_never_rejected"]
    assert race["status"] == "holds" and race["clauses"]
    witness = by_id["sometimes_failure_before_response"]["trace"]
    assert witness[0]["messages"][0]["message"]["method"] == "session/prompt"


def test_a_seeded_bug_fails_the_check_with_its_counterexample(capsys):
    code, out, _ = run(capsys, "check", "--config", "tiny", "--bug", "answer-at-receipt")
    assert code == 1
    # (the JSON-RPC message may be wrapped to the 80 columns of a pipe)
    assert "VIOLATED" in out and '"result":{"messageId":"msg_1"}' in "".join(out.split())


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["check", "--config", "nope"], "unknown configuration 'nope'"),
        (["check", "--bug", "nope"], "unknown bug 'nope'"),
        (["check", "--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["check", "--config", "tiny", "--max-states", "0"], "--max-states: must be positive"),
        (["check", "--config", "multi-client", "--max-states", "50"], "passed 50 states"),
        (["nonsense"], "invalid choice"),
        (["check", "--config", "fuzz"], "too large for exhaustive search"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert needle in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_bugs_list_names_every_bug(capsys):
    from acp_lifecycle.model.bugs import BUGS

    code, out, _ = run(capsys, "bugs", "--json")
    assert code == 0 and [json.loads(line)["name"] for line in out.splitlines()] == list(BUGS)  # one record per line


def test_configs_lists_the_suites(capsys):
    code, out, _ = run(capsys, "configs")
    assert code == 0 and "default" in out and "multi-client" in out


def test_scenario_runs_by_name_and_lists(capsys):
    code, out, _ = run(capsys, "scenario", "cancel-request-wins")
    assert code == 0 and "ok" in out.splitlines()[-1] and "$/cancel_request" in out
    code, out, _ = run(capsys, "scenario", "--list")
    assert code == 0 and "failure-before-response" in out
    code, out, _ = run(capsys, "scenario", "--all")
    assert code == 0 and "FAIL" not in out


def test_an_unknown_scenario_is_a_usage_error(capsys):
    code, _, err = run(capsys, "scenario", "nope")
    assert code == 2 and "unknown scenario 'nope'" in err


def test_check_bridge_checks_every_bridged_run_and_catches_a_seeded_bridge_bug(capsys):
    code, out, _ = run(capsys, "check", "--bridge", "to-v2")
    assert code == 0 and "0 bridge properties violated" in out and "open question confirmed" in out
    code, out, _ = run(capsys, "check", "--bridge", "to-v2", "--bridge-bug", "v2-answer-before-insertion")
    assert code == 1 and "VIOLATED v2-response-at-insertion-point" in out
    code, _, err = run(capsys, "check", "--bridge-bug", "v2-answer-before-insertion")
    assert code == 2 and "--bridge-bug needs --bridge" in err


def test_the_readme_tour_runs_as_it_says(capsys):
    """The five-line tour at the top of README.md: its commands exist and the sample transcripts say what it says."""
    import re
    import shlex
    from pathlib import Path

    from acp_lifecycle.sims.cli import subcommands

    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text()
    tour = readme.split("A five-minute tour", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    lines = [line.split("#")[0].strip() for line in tour.strip().splitlines()]
    assert len(lines) == 5 and all(line.startswith("acp-lifecycle ") for line in lines)
    for line in lines:
        argv = shlex.split(line)[1:]
        assert argv[0] in subcommands()
        for arg in argv:
            if arg.startswith("examples/"):
                assert (root / arg).is_file(), arg
    assert main(["trace", str(root / "examples" / "session.jsonl")]) == 0
    assert "no findings" in capsys.readouterr().out
    assert main(["trace", str(root / "examples" / "never-echoed.jsonl")]) == 1
    out = capsys.readouterr().out
    assert re.search(r"never-echoed\.jsonl:7: violation every_inserted_message_echoed", out) and "RFD" in out
    for link in ("https://agentclientprotocol.com", "https://www.npmjs.com/package/@agentclientprotocol/sdk",
                 "docs/rfds/v2/prompt.mdx"):
        assert link in readme.split("```sh", 1)[0]  # in the first paragraph, before the set-up commands


def test_every_readme_command_names_a_real_file_or_an_obvious_placeholder():
    """A file in a README command either exists in the checkout or reads as a placeholder (YOUR-...)."""
    import shlex
    from pathlib import Path

    from acp_lifecycle.sims.cli import subcommands

    root = Path(__file__).resolve().parents[1]
    lines = [line.split("  #")[0].strip() for line in (root / "README.md").read_text().splitlines()]
    commands = [shlex.split(line)[1:] for line in lines if line.startswith("acp-lifecycle ")]
    assert len(commands) > 30
    for argv in commands:
        assert argv[0] in subcommands(), argv
        for arg in argv:
            if arg.endswith((".jsonl", ".js", ".json", ".py")):
                assert arg.startswith("YOUR-") or (root / arg).is_file(), f"{arg}: not a file here, and not a placeholder"


def test_tables_at_80_columns_show_every_column_and_full_names(capsys, monkeypatch):
    """check, variants, bugs --list and configs rendered at width 80: nothing cut, every column there."""
    from rich.cells import cell_len

    from acp_lifecycle.model.bugs import BUGS
    from acp_lifecycle.model.properties import PROPERTIES
    from acp_lifecycle.model.variants import VARIANTS
    from acp_lifecycle.sims.configs import SUITES

    monkeypatch.setenv("COLUMNS", "80")

    def render(*argv):
        assert main(list(argv)) in (0, 1)
        out = capsys.readouterr().out
        assert "…" not in out
        long = [line for line in out.splitlines() if cell_len(line) > 80 and not line.lstrip()[:1].isdigit()
                and "->" not in line and "=>" not in line]
        assert not long, long[:3]
        return out

    out = render("check", "--config", "tiny", "--no-traces")
    for p in PROPERTIES:
        assert f"\n{p.id}\n" in out  # the full name, on its own line
    for column in ("kind", "expect", "verdict"):
        assert column in out
    assert "steps" in out and "member tiny" in out
    out = render("bugs", "--list")
    for b in BUGS.values():
        assert f"\n{b.name}\n" in f"\n{out}" and b.breaks in out and f"member {b.member}" in out
        if b.source:
            assert b.source in out
    out = render("configs")
    for name, s in SUITES.items():
        assert name in out and all(m.name in out for m in s.members)
    out = render("variants", "--config", "tiny")
    for p in PROPERTIES:
        if p.kind != "sometimes":
            assert f"\n{p.id}\n" in out
    for letter, name in zip("ABCDEFGHIJKL", VARIANTS):
        assert f"{letter} = {name}" in out


def test_a_long_check_logs_progress_lines_when_stderr_is_not_a_terminal(capsys):
    """In a log (CI, a pipe) there is no progress bar: a long search prints a line every
    PROGRESS_EVERY seconds instead, and a short one prints nothing."""
    from acp_lifecycle.sims.cli.check import _progress_lines

    _progress_lines("huge-lost-response (2/3)")(1_234_567, 5_000_000, 18)
    assert capsys.readouterr().err == ""
    _progress_lines("huge-lost-response (2/3)", every=0.0)(1_234_567, 5_000_000, 18)
    line = capsys.readouterr().err
    assert line.startswith("acp-lifecycle check: huge-lost-response (2/3): 1,234,567 states, depth 18, ")
    assert line.endswith(" s\n") and line.count("\n") == 1


def test_the_table_of_commands_names_the_module_that_registers_each():
    """``main`` loads only the module its subcommand names (``COMMANDS``): the table must say
    exactly what each module registers, or a command would be missing from its own parser."""
    import subprocess
    import sys

    from acp_lifecycle.sims import cli
    from acp_lifecycle.sims.cli.common import Parser

    registered = {}
    for name in cli._MODULES:
        sub = Parser(prog="acp-lifecycle").add_subparsers(dest="command", parser_class=Parser)
        cli._module(name).register(sub)
        registered.update(dict.fromkeys(sub.choices, name))
    assert registered == cli.COMMANDS
    # a trace loads none of the searches (numpy, the explorer): a third of a second of every start
    code = ("import sys\nfrom acp_lifecycle.sims.cli import main\ntry:\n    main(['trace', '--help'])\n"
            "except SystemExit:\n    pass\nprint('loaded:', sorted(sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert "loaded:" in loaded and "acp_lifecycle.sims.cli.trace" in loaded
    assert "'numpy'" not in loaded and "acp_lifecycle.sims.search" not in loaded
