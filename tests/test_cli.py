"""The command line: exit statuses, one-line errors, JSON output."""

import json

import pytest

from acp_lifecycle.sims.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_on_tiny_passes_and_prints_the_table(capsys):
    code, out, err = run(capsys, "check", "--config", "tiny")
    assert code == 0
    assert "success_only_after_insertion" in out and "All 62 verdicts match" in out


def test_check_json_is_data(capsys):
    code, out, _ = run(capsys, "check", "--config", "failures", "--json")
    data = json.loads(out)
    assert code == 0 and data["ok"] is True
    assert data["members"][0]["states"] == 860
    by_id = {p["id"]: p for p in data["properties"]}
    race = by_id["inserted_prompt_never_rejected"]
    assert race["status"] == "holds" and race["clauses"]
    witness = by_id["sometimes_failure_before_response"]["trace"]
    assert witness[0]["messages"][0]["message"]["method"] == "session/prompt"


def test_a_seeded_bug_fails_the_check_with_its_counterexample(capsys):
    code, out, _ = run(capsys, "check", "--config", "tiny", "--bug", "answer-at-receipt")
    assert code == 1
    assert "VIOLATED" in out and '"result":{"messageId":"msg_1"}' in out


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
    assert code == 0 and [b["name"] for b in json.loads(out)] == list(BUGS)


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
