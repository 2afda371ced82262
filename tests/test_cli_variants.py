"""--rules, --variant and --set on every command that explores, parsed in one place (sims/cli/options.py)."""

import json
from pathlib import Path

import pytest

from acp_lifecycle.model.config import LIMITS
from acp_lifecycle.model.variants import VARIANTS
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
    # 0: the token makes the lost response recoverable, which its file expects; rfd's expectation
    # (a known limitation) is not the one judged
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
    # 0: the prompt is rejected with -32800 before insertion, so it has no success result whose
    # messageId the variant drops
    assert main(["scenario", "cancel-request-wins", "--variant", "empty-prompt-response"]) == 0
    assert main(["scenario", "resume-without-replay", "--rules", "rfd+2.4.0"]) == 1  # 2.4.0 must send a snapshot
    assert "is not enabled" in capsys.readouterr().out


def test_fuzz_and_diff_take_a_variant_and_bounds(capsys):
    # 0: tiny has no cancel, the one thing the variant changes; 1: empty-prompt-response's results
    # carry no messageId, which rfd's do, on the wire of one prompt
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
    # without --model, a variant's rules judge the log (its proposals' rules are violations, not warnings)
    assert main(["trace", session, "--no-schema", "--variant", "empty-prompt-response"]) == 0
    assert "(rules empty-prompt-response)" in capsys.readouterr().out


# --- a malformed variant file: every command refuses it with one line ------------------------------

#: the least each subcommand parses (the variants are read after parsing, before the command runs)
ARGS = {"diff": ["rfd", "v1"], "find": ["x"], "review": ["rfd", "v1"], "trace": ["SESSION"], "record": ["OUT.jsonl", "--", "true"],
        "bridge": ["SESSION", "--to", "v1"], "probe": ["--", "true"], "schema": ["validate"]}


@pytest.fixture
def broken_variants(monkeypatch, tmp_path):
    """The package's variants read from a folder whose one file gives a value no flag has."""
    import acp_lifecycle.model.variants as package

    folder = tmp_path / "variants"
    folder.mkdir()
    (folder / "rfd.toml").write_text('name = "rfd"\nbase = "rfd"\nsummary = "s"\nsource = "t"\n')
    (folder / "never.toml").write_text(
        'name = "never"\nbase = "rfd"\nsummary = "s"\nsource = "t"\n[changes]\ncancel_rejects_held = "never"\n')
    package.variants()  # the package's own, restored after the test
    monkeypatch.delattr(package, "VARIANTS")  # read again on first use
    load = package.load_variants
    monkeypatch.setattr(package, "load_variants", lambda folder_=None: load(folder))
    return folder


def test_every_command_refuses_a_malformed_variant_file_with_one_line(broken_variants, capsys, tmp_path):
    session = str(Path(__file__).resolve().parent.parent / "examples" / "session.jsonl")
    for command in subcommands():
        argv = [command] + [session if a == "SESSION" else str(tmp_path / a) if a == "OUT.jsonl" else a
                            for a in ARGS.get(command, [])]
        assert main(argv) == 2, command
        err = capsys.readouterr().err
        assert err == ('acp-lifecycle: error: never.toml: [changes] cancel_rejects_held = "never" is not allowed; '
                       'choose one of: "may", "must", "later"\n'), (command, err)
    assert not (tmp_path / "OUT.jsonl").exists()


def test_fuzz_under_a_variant_judges_by_the_variants_expectations(capsys):
    # v1 cannot state client_sees_current_state (there is no state_update in v1: its file lists it in
    # not_applicable); judged by its base rfd's expectations, the first runs of seed 0 "violated" it
    assert main(["fuzz", "--config", "failures", "--variant", "v1", "--examples", "10", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rules"] == "v1" and data["ok"] and data["members"][0]["property"] is None


# --- a variant whose rules equal its base's ----------------------------------------------------------


@pytest.fixture
def same(monkeypatch):
    """The package's variants and ``same``: rfd+2.4.0 with a change that is its value already."""
    import acp_lifecycle.model.variants as package

    v = package.load_variant('name = "same"\nbase = "rfd+2.4.0"\nsummary = "s"\nsource = "t"\n'
                             '[changes]\nresume_snapshot = "must"\n', "same.toml", "same")
    assert v.unchanged
    monkeypatch.setitem(package.VARIANTS, "same", v)
    return v


UNCHANGED = ("acp-lifecycle: variant same: its rules equal its base rfd+2.4.0's: the file changes no rule, "
             "so every verdict and run is rfd+2.4.0's\n")


@pytest.mark.parametrize("argv", [
    ["check", "--config", "tiny", "--no-traces"],
    ["fuzz", "--config", "tiny", "--examples", "1"],
    ["scenario", "cancel-request-wins"],
    ["diagrams", "--out", "OUT", "--format", "mermaid"],
    ["explore", "--screenshots", "OUT", "--config", "nope"],  # the note comes before the configuration's error
    ["trace", "SESSION", "--no-schema", "--model"],
    ["find", "AgentInsert"],
])
def test_every_command_says_at_once_that_a_variant_changes_nothing(same, argv, capsys, tmp_path):
    session = str(Path(__file__).resolve().parent.parent / "examples" / "session.jsonl")
    argv = [str(tmp_path / "out") if a == "OUT" else session if a == "SESSION" else a for a in argv]
    main(argv + ["--variant", "same"])
    err = capsys.readouterr().err
    assert err.startswith(UNCHANGED), err
    main(argv)
    assert "its rules equal" not in capsys.readouterr().err  # without the variant: no note


def test_diff_of_equal_rules_answers_at_once_in_text_and_json(same, capsys, monkeypatch):
    import acp_lifecycle.sims.diff as diff

    monkeypatch.setattr(diff, "diff_suite", None)  # explored, it would fail
    assert main(["diff", "rfd+2.4.0", "same"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("No difference between rfd+2.4.0 and same: their rules are equal (same changes no rule of its base "
            "rfd+2.4.0), so each allows exactly the runs of the other and judges them alike; nothing was explored.") in out
    assert main(["diff", "same", "same", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["different"], data["equal_rules"], data["members"], data["only_a"]) == (False, True, [], [])
    from acp_lifecycle.sims.cli.diff import equal_rules

    assert not equal_rules(VARIANTS["rfd"].rules, same.rules)  # rfd's differ: those are explored


def test_review_of_equal_rules_answers_at_once_in_markdown_and_json(same, capsys, monkeypatch, tmp_path):
    import acp_lifecycle.sims.review as review

    monkeypatch.setattr(review, "build", None)  # explored, it would fail
    out = tmp_path / "review.md"
    assert main(["review", "rfd+2.4.0", "same", "--out", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["different"], data["equal_rules"], data["runs"], data["out"]) == (False, True, [], str(out))
    text = out.read_text()
    assert text.startswith("# Review: `same` against `rfd+2.4.0`\n")
    assert ("**Summary.** No difference between `rfd+2.4.0` and `same`: their rules are equal (`same` changes no rule "
            "of its base `rfd+2.4.0`)") in text
    assert main(["review", "same", "rfd+2.4.0"]) == 0
    assert "No difference between `same` and `rfd+2.4.0`" in capsys.readouterr().out


def test_variants_and_regress_mark_a_variant_that_changes_nothing(same, capsys, tmp_path):
    assert main(["variants", "--list", "--json"]) == 0
    listed = {v["name"]: v for v in map(json.loads, capsys.readouterr().out.splitlines())}
    assert (listed["same"]["base"], listed["same"]["unchanged"]) == ("rfd+2.4.0", True)
    assert not listed["rfd"]["unchanged"]
    assert main(["variants", "--list"]) == 0
    assert "(unchanged: its rules equal its base's)" in " ".join(capsys.readouterr().out.split())
    # 1: on tiny, the rule sets' sometimes are unreached, "not as defined" (they are defined on default)
    assert main(["variants", "--config", "tiny", "--variant", "same", "--json"]) in (0, 1)
    captured = capsys.readouterr()
    assert captured.err.startswith(UNCHANGED)
    data = json.loads(captured.out)
    assert list(data["variants"]) == ["rfd+2.4.0", "same"] and data["unchanged"] == ["same"]  # its base beside it
    agreed = tmp_path / "verdicts.json"
    agreed.write_text(json.dumps({"config": "tiny", "variants": {"rfd": {}}}))
    assert main(["regress", "--verdicts", str(agreed), "--variant", "same", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(UNCHANGED) and json.loads(captured.out)["unchanged"] == ["same"]


def test_a_variant_on_a_variant_is_judged_against_its_base_variant(monkeypatch, capsys):
    import acp_lifecycle.model.variants as package
    from acp_lifecycle.sims.variants import class_flips

    v = package.load_variant('name = "token-notice"\nbase = "client-correlation-token"\nsummary = "s"\nsource = "t"\n'
                             '[changes]\nfailure_report = "notice"\n', "token-notice.toml", "token-notice")
    monkeypatch.setitem(package.VARIANTS, v.name, v)
    # the token makes the lost response recoverable (its file expects it to hold): holding under a
    # variant of the token is no known limitation that now holds
    holds = {"lost_response_recoverable": {"verdict": "holds"}}
    assert class_flips({"variants": {"client-correlation-token": holds, v.name: holds}}) == {v.name: []}
    # 1 on tiny: the rule sets' sometimes are unreached there
    assert main(["variants", "--config", "tiny", "--variant", v.name, "--json"]) in (0, 1)
    assert list(json.loads(capsys.readouterr().out)["variants"]) == ["rfd", "client-correlation-token", v.name]
