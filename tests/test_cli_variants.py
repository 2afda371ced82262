"""--rules, --variant and --set on every command that explores, parsed in one place (sims/cli/options.py)."""

import json
from pathlib import Path

import pytest

from acp_lifecycle.model.config import LIMITS
from acp_lifecycle.sims.cli import main, subcommands

EXPLORING = ("check", "fuzz", "scenario", "diff", "diagrams", "explore")


@pytest.mark.parametrize("command", EXPLORING)
def test_every_exploring_command_takes_the_options(command):
    options = subcommands()[command]._option_string_actions
    assert "--set" in options
    if command != "diff":  # diff's A and B name the rules
        assert "--rules" in options and "--variant" in options
    assert "--variant" in subcommands()["trace"]._option_string_actions


BAD = [
    (["--set", "nope=1"], "unknown bound 'nope'"),
    (["--set", "failures"], "--set failures: failures needs a value (give failures=VALUE, in 0..3)"),
    (["--set", "failures="], "--set failures=: failures needs a value"),
    (["--set", "failures=two"], "'two' is not an integer"),
    (["--set", "failures=9"], "failures must be in 0..3"),
    (["--variant", "nope"], "unknown variant 'nope'"),
    (["--variant", "rfd", "--rules", "rfd"], "choose one of --rules and --variant"),
]
RUNS = {
    "check": ["check", "--config", "tiny"],
    "fuzz": ["fuzz", "--config", "tiny", "--examples", "1"],
    "scenario": ["scenario", "cancel-request-wins"],
    "diff": ["diff", "rfd", "rfd", "--config", "tiny"],
    "diagrams": ["diagrams", "--out", "OUT"],
    "explore": ["explore", "--screenshots", "OUT"],
}


@pytest.mark.parametrize("command", EXPLORING)
@pytest.mark.parametrize("extra, error", BAD)
def test_a_bad_set_or_variant_is_one_line_and_exit_2(command, extra, error, capsys, tmp_path):
    if command == "diff" and "--set" not in extra:
        return  # diff takes its rules as A and B
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in RUNS[command]] + extra
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and error in err, err
    if "unknown bound" in error:
        assert all(name in err for name in LIMITS)  # the valid names


def test_check_under_a_variant_judges_by_the_variants_expectations(capsys):
    assert main(["check", "--config", "failures", "--variant", "client-correlation-token", "--json", "--no-traces"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rules"] == "client-correlation-token"
    props = {p["id"]: p for p in data["properties"]}
    assert props["lost_response_recoverable"]["expect"] == "must_hold"  # the variant's file says so
    assert props["lost_response_recoverable"]["outcome"] == "holds"


def test_check_set_raises_a_bound_on_every_member(capsys):
    assert main(["check", "--config", "tiny", "--json", "--no-traces"]) == 0
    small = json.loads(capsys.readouterr().out)
    assert main(["check", "--config", "tiny", "--set", "failures=1", "--json", "--no-traces"]) in (0, 1)
    larger = json.loads(capsys.readouterr().out)
    assert larger["members"][0]["states"] > small["members"][0]["states"]


def test_scenario_under_another_rule_set_runs_its_steps_there(capsys):
    assert main(["scenario", "cancel-request-wins", "--variant", "empty-prompt-response"]) == 0
    assert main(["scenario", "resume-without-replay", "--rules", "rfd+2.4.0"]) == 1  # 2.4.0 must send a snapshot
    assert "is not enabled" in capsys.readouterr().out


def test_fuzz_and_diff_take_a_variant_and_bounds(capsys):
    assert main(["fuzz", "--config", "tiny", "--examples", "3", "--variant", "inject-survives-cancel", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rules"] == "inject-survives-cancel"
    assert main(["diff", "rfd", "empty-prompt-response", "--config", "tiny", "--set", "prompts=1", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["b"] == "empty-prompt-response"


def test_diagrams_draw_a_variant_beside_the_rfds(tmp_path, capsys):
    assert main(["diagrams", "--out", str(tmp_path), "--variant", "empty-prompt-response", "--format", "mermaid"]) == 0
    assert (tmp_path / "lifecycle-tiny-empty-prompt-response.mmd").is_file()


def test_explore_names_a_variant_and_bounds_in_its_query():
    from acp_lifecycle.sims.explore.model_access import model_for

    m = model_for("tiny", "", "empty-prompt-response", "", "failures=1")
    assert m.rules.name == "empty-prompt-response" and m.cfg.failures == 1
    assert "rules=empty-prompt-response" in m.query() and "set=failures%3D1" in m.query()


def test_trace_explains_by_a_variants_runs(capsys):
    session = str(Path(__file__).resolve().parent.parent / "examples" / "session.jsonl")
    argv = ["trace", session, "--no-schema", "--model"]
    assert main(argv + ["--variant", "inject-survives-cancel"]) == 0
    assert main(argv + ["--variant", "empty-prompt-response"]) == 1  # its results carry no messageId
    assert "no run of the model explains this" in capsys.readouterr().out
    assert main(["trace", session, "--variant", "rfd"]) == 2
