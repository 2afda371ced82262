"""`trace --model` on the official-SDK corpus (tests/corpus/): the model allows what an
SDK-built agent does within the spec, and not what the violating transcripts do.

Every transcript is explained as the CLI does it (``complete=True``: the log is the
whole run so far), with a node budget instead of a timed assertion: the whole corpus
takes about 3.5 s (bench/modeltrace.py times the long ones).

Also: each choice the model agent gained for the corpus is a choice the spec
allows (``check`` passes with it explored), and is actually made.
"""

from pathlib import Path

import pytest

from acp_lifecycle.model.config import RULE_SETS, S240_RULES, Config
from acp_lifecycle.model.state import NOT_INSERTED
from acp_lifecycle.model.system import initial_state, successors
from acp_lifecycle.sims.search.explore import explore
from acp_lifecycle.sims.wire.modeltrace import explain
from acp_lifecycle.sims.wire.transcript import parse_text

CORPUS = Path(__file__).parent / "corpus"
CONFORMING = sorted(p.stem for p in (CORPUS / "conforming").glob("*.jsonl"))
VIOLATING = sorted(p.stem for p in (CORPUS / "violating").glob("*.jsonl"))

#: Nodes per transcript: the largest conforming one (long-multi-connection, 234
#: lines, three connections) needs about 1,700, the largest violating one
#: (unprefixed-stop-reason, 316 lines, searched twice) about 4,700.
MAX_NODES = 20_000

#: Violating transcripts the model explains, and why: each breaks a rule about
#: something outside the model's vocabulary (the model is one session's prompt
#: lifecycle: docs/transcripts.md, "trace --model"). The rule-based checker
#: (`trace` without --model) reports each of them.
INVISIBLE = {
    "background-list-dropped": "background work is outside the model: a tool call listed in `background` is set aside",
    "background-not-announced": "background work is outside the model: a tool call listed in `background` is set aside",
    "background-removed-unfinished": "background work is outside the model: a tool call listed in `background` is set aside",
    "proceeds-on-unknown-option": "a permission answer carries no approval in the model: which option was chosen, "
                                  "and whether the tool call runs after it, is the monitor's (not_approved_not_proceeded)",
    "tool-cancel-final-accepted": "tool_call/cancel is outside the model's vocabulary",
    "tool-cancel-not-advertised": "tool_call/cancel is outside the model's vocabulary",
}
#: Explained under `rfd` only: the RFD leaves the resume snapshot open
#: ("current-state synchronization on resume" is a follow-up), 2.4.0 requires it.
RFD_ONLY = {"resume-without-snapshot"}
#: Under `rfd` too: an empty prompt is a 2.4.0 rule ("Clients MUST NOT send an empty
#: array."), and content is one symbol in the model, so the RFD's model explains it.
RFD_ONLY |= {"empty-prompt"}


def _explain(folder: str, name: str, rules: str):
    path = CORPUS / folder / f"{name}.jsonl"
    r = explain(parse_text(path.read_text(), str(path)), rules=RULE_SETS[rules], max_nodes=MAX_NODES, complete=True)
    assert not r.exhausted, (name, r.nodes)
    return r


def test_the_corpus_is_the_one_described():
    assert len(CONFORMING) == 45 and len(VIOLATING) == 50
    assert set(INVISIBLE) | RFD_ONLY <= set(VIOLATING)


@pytest.mark.parametrize("rules", ["rfd+2.4.0", "rfd"])
@pytest.mark.parametrize("name", CONFORMING)
def test_every_conforming_transcript_is_explained(name, rules):
    r = _explain("conforming", name, rules)
    assert r.explained, r.text()
    assert r.matched > 0 and r.nodes < MAX_NODES


@pytest.mark.parametrize("name", VIOLATING)
def test_violating_transcripts_are_not_explained_unless_invisible(name):
    r = _explain("violating", name, "rfd+2.4.0")
    assert r.explained == (name in INVISIBLE), r.text()
    if not r.explained:
        assert r.first_unexplained_line is not None
        assert r.text().startswith(("line ", "end of transcript"))


@pytest.mark.parametrize("name", sorted(RFD_ONLY))
def test_what_only_2_4_0_forbids_is_explained_under_rfd(name):
    assert _explain("violating", name, "rfd").explained
    assert not _explain("violating", name, "rfd+2.4.0").explained


def test_the_violation_is_found_where_the_manifest_says():
    import json

    manifest = json.loads((CORPUS / "violating" / "manifest.json").read_text())
    for name in ("second-response", "unprefixed-stop-reason", "update-after-close", "no-message-id"):
        r = _explain("violating", name, "rfd+2.4.0")
        assert r.first_unexplained_line <= manifest[name]["line"] + 1, (name, r.text())


# ---------------------------------------------------------------------------
# The choices the corpus showed the model agent lacked
# ---------------------------------------------------------------------------


def _made(cfg: Config, rules, made, limit: int = 200_000) -> bool:
    """Does some run under cfg make the choice (made(pre, step) is true for one of its steps)?"""
    s0 = initial_state(cfg)
    seen, todo = {s0}, [s0]
    while todo and len(seen) < limit:
        s = todo.pop()
        for step in successors(s, cfg, rules):
            if made(s, step):
                return True
            if step.state not in seen:
                seen.add(step.state)
                todo.append(step.state)
    return False


def _cut_waiting(pre) -> bool:
    return any(r.session_cancel_before_insertion and r.phase in NOT_INSERTED for r in pre.agent.reqs)


LENIENT = S240_RULES.with_(lenient=True)
CHOICES = {
    # "Pending permissions or elicitations alone do not imply this state ...
    # Responding to one request does not itself imply `running`": no order.
    "a permission request before the requires_action that reports it": (
        Config(permissions=1, request_first=True), LENIENT,
        lambda pre, step: "request-first" in step.action),
    # `failed` is for a call that did not complete: a rejected permission.
    "a pending tool call that fails while the work runs": (
        Config(tool_calls=1), LENIENT,
        lambda pre, step: step.action[0] == "AgentToolCall" and step.action[2] == "fail"
        and pre.agent.work is not None and not pre.agent.work.cancelling
        and dict(pre.agent.work.tools).get(step.action[1]) == "pending"),
    # "The Agent MAY send content or tool call updates after receiving session/cancel"
    "a tool call started by cancelled work before its idle": (
        Config(tool_calls=1, cancels=1, down_latency=False), LENIENT,
        lambda pre, step: step.action[0] == "AgentToolCall" and step.action[2].startswith("start")
        and pre.agent.work is not None and pre.agent.work.cancelling),
    # "Cancels a session's foreground work and its prompts not yet inserted":
    # the -32800 may follow the cancelled work's last updates.
    "the prompts a cancel covers rejected after the cancelled idle": (
        Config(prompts=2, cancels=1, reserve=False, hook=False, live_only=False, chunks=False, down_latency=False),
        LENIENT.with_(cancel_rejects_held="later"),
        lambda pre, step: _cut_waiting(pre) and step.action[:2] == ("AgentEndWork", "cancelled")),
    # A resume replays each retained message as it first sent it.
    "a replay that mixes whole and chunked messages": (
        Config(prompts=2, resumes=1, losses=1, reserve=False, hook=False, live_only=False, chunks=False,
               down_latency=False),
        LENIENT.with_(replay_mixed=True),
        lambda pre, step: step.action[0] == "AgentResume" and isinstance(step.action[2], tuple)),
}


@pytest.mark.parametrize("choice", CHOICES)
def test_each_choice_for_the_corpus_is_made_and_check_passes(choice):
    cfg, rules, made = CHOICES[choice]
    assert _made(cfg, rules, made), choice
    result = explore(cfg, rules)
    # (a small configuration need not reach every witness or confirm every
    # limitation: what matters is that no rule is broken)
    bad = {k: v.outcome for k, v in result.verdicts.items() if v.outcome == "VIOLATED"}
    assert not bad, (choice, bad)
    assert result.verdicts["every_prompt_answered"].outcome == "holds"


def test_trace_model_explains_under_the_rule_set_it_is_given(capsys):
    import json

    from acp_lifecycle.sims.cli import main

    path = str(CORPUS / "violating" / "resume-without-snapshot.jsonl")
    seen = {}
    for rules in ("rfd+2.4.0", "rfd"):
        main(["trace", "--model", "--no-schema", "--json", "--rules", rules, path])
        records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]  # --json is JSON Lines
        seen[rules] = next(r["model"]["explained"] for r in records if r["record"] == "model")
    assert seen == {"rfd+2.4.0": False, "rfd": True}
