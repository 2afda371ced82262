"""`acp-lifecycle review BASE NEW` (sims/review) and the robustness of diff's runs (sims/diff/robust.py)."""

from __future__ import annotations

import json

import pytest

from acp_lifecycle.model.config import RFD_RULES, S240_RULES
from acp_lifecycle.sims.cli import main
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.diff import diff_suite
from acp_lifecycle.sims.diff.report import annotate
from acp_lifecycle.sims.diff.robust import variations


@pytest.fixture(scope="module")
def cancel_race():
    d = diff_suite(get_suite("cancel-race"), RFD_RULES, S240_RULES)
    annotate(d)
    return d


def test_the_two_runs_that_vanish_with_one_more_piece_of_agent_work(cancel_race):
    """The issue's measurement: of diff rfd rfd+2.4.0, the new work after a cancel vanishes with agent_work=2."""
    got = {k: w.robustness for k, w in cancel_race.only_a.items()}
    assert got["state_update running"].artefact_of == "agent_work=2"
    assert got["state_update idle stopReason=end_turn"].artefact_of == "agent_work=2"
    # -32800 after the cancelled idle: only under the model's "must" reading, not trace --model's "later"
    assert got["response to session/prompt: error -32800"].artefact_of == "reading cancel_rejects_held=later"
    assert got["response to session/prompt: error -32602"].robust


def test_the_other_rule_set_answers_and_what_explains_the_run(cancel_race):
    from acp_lifecycle.sims.diff.report import explanations

    w = cancel_race.only_a["response to session/prompt: error -32602"]
    assert "state_update running" in w.other_answers
    assert "a foreground hook" in explanations(w)[3]


def test_variations_cover_each_budget_switch_and_reading():
    cfg = get_suite("cancel-race").members[0]
    names = [v.name for v in variations(cfg, RFD_RULES, S240_RULES)]
    assert "agent_work=2" in names and "cancels=2" in names and "down_latency=True" in names
    assert "reading cancel_rejects_held=later" in names
    assert "hook=True" not in names  # cancel-race explores hooks already
    assert "reading cancel_rejects_held=later" not in [v.name for v in variations(cfg, RFD_RULES)]


def test_diff_json_marks_robust_and_artefact_runs(capsys):
    assert main(["diff", "rfd", "rfd+2.4.0", "--config", "cancel-race", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    runs = {w["kind"]: w for w in data["only_a"]}
    assert runs["state_update running"]["robust"] is False
    assert runs["state_update running"]["artefact_of"] == "agent_work=2"
    assert runs["response to session/prompt: error -32602"]["robust"] is True
    assert "artefact_of" not in runs["response to session/prompt: error -32602"]
    link = runs["state_update running"]["explore"]
    assert link["command"].startswith("acp-lifecycle explore --config cancel-race --run ")
    assert link["query"] == "config=cancel-race&path=" + ",".join(map(str, link["path"]))
    assert data["robust_seconds"] >= 0


def test_diff_no_robust_skips_the_check(capsys):
    assert main(["diff", "rfd", "rfd+2.4.0", "--config", "restart", "--json", "--no-robust"]) == 1
    (w,) = json.loads(capsys.readouterr().out)["only_a"]
    assert "robust" not in w and w["refused_answers"] == ["state_update idle"]


def test_diff_charts_show_the_explanation_and_the_other_answer(tmp_path):
    assert main(["diff", "rfd", "rfd+2.4.0", "--config", "cancel-race", "--diagrams", str(tmp_path / "c")]) == 1
    text = "\n".join(p.read_text() for p in sorted((tmp_path / "c").glob("*.mmd")))
    assert "a foreground hook: `running` before insertion" in text
    assert "rfd+2.4.0 instead: " in text and "artefact of agent_work=2" in text


def test_compact_lines_keep_meta():
    from acp_lifecycle.model.wire import agent_message
    from acp_lifecycle.sims.diff.report import compact

    text = compact(agent_message(("user_message", 1, ("a",), False, (0, 1))))
    assert text.endswith('_meta={"correlationToken":"tok_0_1"}')


def test_review_markdown(tmp_path, capsys):
    out = tmp_path / "review.md"
    assert main(["review", "rfd", "rfd+2.4.0", "--config", "cancel-race", "--out", str(out)]) == 1
    assert capsys.readouterr().err == f"wrote {out}\n"
    text = out.read_text()
    assert text.startswith("# Review: `rfd+2.4.0` against `rfd`")
    robust, artefacts = text.split("### Robust differences")[1].split("### Artefacts of the bounds or of a reading")
    assert "error -32602" in robust and "artefact of" not in robust.lower()
    assert "Artefact of agent_work=2" in artefacts
    assert "```mermaid" in robust and "| **!** |" in robust
    assert '"Cancels a session\'s foreground work and its prompts not yet inserted."' in robust
    assert "acp-lifecycle explore --config cancel-race --run" in robust
    # an existing file is refused without --force: one line, exit 2, the file untouched
    assert main(["review", "rfd", "rfd+2.4.0", "--config", "cancel-race", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "exists" in err and err.count("\n") == 1
    assert out.read_text() == text


def test_review_of_a_rule_set_with_itself_exits_0(capsys):
    assert main(["review", "rfd", "rfd", "--config", "restart"]) == 0
    assert "No difference between `rfd` and `rfd`: their rules are equal" in capsys.readouterr().out


def test_review_flags_a_class_flip(capsys):
    assert main(["review", "rfd", "rfd+2.4.0", "--config", "lost-response", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    (c,) = [c for c in data["verdict_changes"] if c["class_flip"]]
    assert c["property"] == "resumed_client_sees_current_state" and c["class_flip"] == "an open question closes" and c["foreseen"]


def test_a_property_new_cannot_state_is_a_change_of_scope_not_a_break(capsys):
    assert main(["review", "rfd", "empty-prompt-response", "--config", "multi-client", "--json"]) == 1
    changes = {c["property"]: c for c in json.loads(capsys.readouterr().out)["verdict_changes"]}
    assert changes["success_carries_message_id"]["new"] == "n/a"
    assert changes["success_carries_message_id"]["class_flip"] == ""
