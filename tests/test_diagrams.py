"""Diagrams: generated from the model, byte-stable, stale when the model moves on, drawable."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from statemachine import State, StateMachine

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.model.config import RFD_RULES, Config
from acp_lifecycle.model.machines import MACHINES, ForegroundMachine, ToolCallMachine
from acp_lifecycle.model.system import initial_state, successors
from acp_lifecycle.model.wire import step_messages
from acp_lifecycle.sims.diagrams import (
    bug_counterexample,
    diagrams_markdown,
    draw_lifecycle,
    draw_machine,
    draw_sequence,
    generated_names,
    lifecycle,
    lifecycle_dot,
    lifecycle_mermaid,
    machine_dot,
    machine_mermaid,
    machine_name,
    message_summary,
    sequence_mermaid,
    stale,
    write_all,
    write_counterexamples,
    write_sequence,
)

ROOT = Path(__file__).resolve().parent.parent
DIAGRAMS = ROOT / "diagrams"
PNG = b"\x89PNG\r\n\x1a\n"
REGENERATE = "run `acp-lifecycle diagrams` (or sims.diagrams.write_all('diagrams'))"


# --- staleness -------------------------------------------------------------------


def test_regenerating_the_text_diagrams_reproduces_the_committed_files_byte_for_byte(tmp_path):
    written = write_all(tmp_path, ("mermaid", "dot"))
    assert len(written) == 4 * 2 + 2 * 2 + 1
    for path in written:
        committed = DIAGRAMS / path.name
        assert committed.is_file(), f"diagrams/{path.name} is missing: {REGENERATE}"
        assert committed.read_bytes() == path.read_bytes(), f"diagrams/{path.name} is stale: {REGENERATE}"


def test_the_committed_pictures_exist_for_every_generated_name():
    for name in generated_names(("png", "svg")):
        assert (DIAGRAMS / name).stat().st_size > 1000, f"diagrams/{name} is missing: {REGENERATE}"


def test_the_diagrams_page_is_up_to_date():
    assert (ROOT / "docs" / "diagrams.md").read_text() == diagrams_markdown(), f"docs/diagrams.md is stale: {REGENERATE}"


class _ToolCallPlusOne(StateMachine):
    """ToolCallMachine with one transition more: a running call can go back to pending."""

    pending = State(initial=True)
    in_progress = State()
    completed = State(final=True)
    failed = State(final=True)

    run = pending.to(in_progress)
    complete = in_progress.to(completed)
    fail = pending.to(failed) | in_progress.to(failed)
    pause = in_progress.to(pending)


_ToolCallPlusOne.__name__ = "ToolCallMachine"


def test_a_machine_that_gains_a_transition_no_longer_matches_its_committed_diagrams():
    name = machine_name(ToolCallMachine)
    mmd = (DIAGRAMS / f"machine-{name}.mmd").read_text()
    dot = (DIAGRAMS / f"machine-{name}.dot").read_text()
    assert machine_mermaid(ToolCallMachine) == mmd and machine_dot(ToolCallMachine) == dot
    assert machine_name(_ToolCallPlusOne) == name
    assert machine_mermaid(_ToolCallPlusOne) != mmd
    assert "in_progress --> pending : Pause" in machine_mermaid(_ToolCallPlusOne)
    assert machine_dot(_ToolCallPlusOne) != dot
    assert '"in_progress" -> "pending" [label="pause"];' in machine_dot(_ToolCallPlusOne)


def test_stale_names_a_changed_text_diagram_and_write_all_leaves_other_files_alone(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "machine-other.mmd").write_text("mine too")
    written = write_all(tmp_path, ("mermaid", "dot"))
    assert [p.name for p in written] == generated_names(("mermaid", "dot"))
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert (tmp_path / "machine-other.mmd").read_text() == "mine too"
    assert stale(tmp_path) == []
    target = tmp_path / "machine-tool-call.mmd"
    target.write_text(machine_mermaid(_ToolCallPlusOne))
    assert stale(tmp_path) == [target]


def test_write_all_refuses_an_unknown_format_and_a_file_as_directory(tmp_path):
    with pytest.raises(ValueError, match="unknown format"):
        write_all(tmp_path, ("pdf",))
    (tmp_path / "f").write_text("")
    with pytest.raises(ValueError, match="not a directory"):
        write_all(tmp_path / "f", ("mermaid",))


# --- text output -----------------------------------------------------------------------


def test_dot_output_has_no_object_ids_and_is_the_same_on_every_call():
    lc = lifecycle("tiny")
    texts = [machine_dot(m) for m in MACHINES] + [lifecycle_dot(lc)]
    again = [machine_dot(m) for m in MACHINES] + [lifecycle_dot(lifecycle("tiny"))]
    assert texts == again
    for text in texts:
        assert "0x" not in text
        assert text.startswith("// Generated") and text.rstrip().endswith("}")


def test_machine_dot_lists_every_transition_once_sorted_with_final_states_doubled():
    text = machine_dot(ForegroundMachine)
    edges = re.findall(r'^  "(\w+)" -> "(\w+)" \[label="(\w+)"\];$', text, re.M)
    assert edges == sorted(edges) and len(edges) == 6
    assert ("requires_action", "idle", "end") in edges
    assert '"__start__" -> "idle";' in text
    assert text.count("peripheries=2") == 0
    assert machine_dot(ToolCallMachine).count("peripheries=2") == 2


def test_the_lifecycle_of_tiny_has_no_failing_node_and_moves_from_not_sent_to_answered():
    lc = lifecycle("tiny")
    assert lc.initial == ("idle", "not sent")
    assert lc.violations == {}
    # it starts with the client's send, then the agent's receipt
    assert lc.edges[(("idle", "not sent"), ("idle", "sent"))] == ("ClientSubmitPrompt",)
    assert lc.edges[(("idle", "sent"), ("idle", "received"))] == ("AgentReceive",)
    assert [v for u, v in lc.edges if u == ("idle", "not sent")] == [("idle", "sent")]
    assert lc.edges[(("running", "inserted"), ("running", "answered"))] == ("AgentRespond",)
    assert all(u != v for u, v in lc.edges)
    assert "classDef violated" in lifecycle_mermaid(lc) and "\n    class " not in lifecycle_mermaid(lc)


def test_the_lifecycle_under_answer_at_receipt_marks_the_node_answered_before_insertion():
    bug = BUGS["answer-at-receipt"]
    lc = lifecycle(bug.member, bug.rules)
    assert bug.breaks in lc.violations[("idle", "reserved")]
    mmd, dot = lifecycle_mermaid(lc), lifecycle_dot(lc)
    node = re.search(r'^    (n\d+)\["idle<br/>reserved<br/>violates:', mmd, re.M).group(1)
    assert re.search(rf"^    class (\w+,)*{node}(,\w+)* violated$", mmd, re.M)
    assert f'{node} [label="idle\\nreserved\\nviolates:\\n{bug.breaks}"' in dot and "fillcolor" in dot


# --- sequence charts ---------------------------------------------------------------------


def _lanes_used(trace) -> set[int]:
    used = set()
    for pre, step in trace:
        used |= {c for _, c, _ in step_messages(pre, step)}
        if step.action[0].startswith("Client") or step.action[0] == "ConnectionLost":
            used.add(step.action[1])
    return used


@pytest.mark.parametrize("name", list(BUGS))
def test_every_seeded_bug_counterexample_is_a_mermaid_sequence_chart(name):
    bug = BUGS[name]
    trace, title, note = bug_counterexample(name)
    text = sequence_mermaid(trace, title, note)
    assert text.startswith("---\ntitle: ") and "\nsequenceDiagram\n" in text
    assert "    participant A as Agent\n" in text
    for c in _lanes_used(trace):
        assert f"    participant C{c} as Client {c}\n" in text
        assert re.search(rf"^    (C{c}-+>>A|A-+>>C{c}|Note over C{c}\b)", text, re.M), f"lane Client {c} is empty"
    last = "C1" if len(trace[0][0].clients) > 1 else "A"
    assert re.search(rf"^        Note over C0,{last}: violated: {bug.breaks}<br/>", text, re.M)
    # notes speak the protocol, not the model's action names
    assert not re.search(r"^\s*Note over [^:]*: \d+\. (Agent|Client)[A-Z]\w*\(", text, re.M)
    # Every message sent is on an arrow, numbered by its step.
    sent = sum(1 for pre, step in trace for d, _, _ in step_messages(pre, step) if d in ("client->agent", "agent->client")
               and not (step.action[0] in ("AgentReceive", "AgentResume") and d == "client->agent"))
    assert len(re.findall(r"^    (C\d+|A)-+>>(C\d+|A): \d+\. ", text, re.M)) == sent
    assert ";" not in text.replace("#59;", "").replace("#35;", "")


def test_message_summaries_name_the_method_ids_and_error():
    assert message_summary({"jsonrpc": "2.0", "id": 1, "method": "session/prompt",
                            "params": {"prompt": [{"type": "text", "text": "a"}]}}) == 'session/prompt id=1 "a"'
    assert message_summary({"jsonrpc": "2.0", "id": 1, "result": {"messageId": "msg_1"}}) == "result id=1 messageId=msg_1"
    update = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error", "error": {"code": -32000}}
    assert message_summary({"method": "session/update", "params": {"update": update}}) == \
        "session/update state_update idle error (error -32000)"
    assert message_summary({"id": 2, "error": {"code": -32800, "message": "Request cancelled"}}) == \
        "error id=2 -32800 Request cancelled"


def _walk(cfg: Config, labels: list[tuple]) -> list:
    s, trace = initial_state(cfg), []
    for label in labels:
        (step,) = [st for st in successors(s, cfg, RFD_RULES) if st.action == label]
        trace.append((s, step))
        s = step.state
    return trace


def test_a_lost_connection_note_lists_the_response_it_dropped_in_transit():
    cfg = Config(name="t", losses=1, down_latency=True, hook=False, reserve=False, chunks=False, live_only=False)
    trace = _walk(cfg, [("ClientSubmitPrompt", 0, "a"), ("AgentReceive", 0, "prompt"),
                        ("AgentInsert", 0, "retained"), ("AgentRespond", 0), ("ConnectionLost", 0)])
    text = sequence_mermaid(trace, "lost", "the response never arrived", violation=False)
    assert "    A-->>C0: 4. result id=1 messageId=msg_1\n" in text
    assert "5. client 0's connection is lost#59; dropped in transit: result id=1 messageId=msg_1" in text
    assert "Note over A: 3. the agent inserts client 0's session/prompt id=1 into the conversation as msg_1\n" in text
    assert "rect rgb(253, 224, 224)" not in text  # not a violation: no red box


def test_the_agent_stands_between_two_clients_and_a_received_error_response_is_drawn():
    from acp_lifecycle.sims.scenarios import run

    text = sequence_mermaid(run("two-clients-one-session").trace, "two")
    assert text.index("participant C0") < text.index("participant A as Agent") < text.index("participant C1")
    text = sequence_mermaid(run("cancel-request-wins").trace, "cancel")
    assert "    A-->>C0: 4. error id=1 -32800 Request cancelled\n" in text
    assert "    Note over C0: 5. client 0 receives error id=1 -32800 Request cancelled\n" in text


# --- pictures ---------------------------------------------------------------------------------


def test_drawing_a_machine_and_a_sequence_chart_writes_png_files(tmp_path):
    draw_machine(ForegroundMachine, tmp_path / "m.png")
    trace, title, note = bug_counterexample("answer-at-receipt")
    draw_sequence(trace, tmp_path / "s.png", title, note)
    for name in ("m.png", "s.png"):
        data = (tmp_path / name).read_bytes()
        assert data.startswith(PNG) and len(data) > 5000


def test_svg_drawings_are_byte_stable(tmp_path):
    draw_machine(ToolCallMachine, tmp_path / "a.svg")
    draw_machine(ToolCallMachine, tmp_path / "b.svg")
    a = (tmp_path / "a.svg").read_bytes()
    assert a == (tmp_path / "b.svg").read_bytes()
    assert a.startswith(b"<?xml") and b"<dc:date>" not in a


def test_a_drawing_needs_a_png_or_svg_name(tmp_path):
    with pytest.raises(ValueError, match=r"\.png or \.svg"):
        draw_lifecycle(lifecycle("tiny"), tmp_path / "x.pdf")


def test_write_sequence_picks_text_or_picture_by_suffix_and_check_results_write_counterexamples(tmp_path):
    from acp_lifecycle.sims.configs import get_suite
    from acp_lifecycle.sims.search.explore import explore

    trace, title, note = bug_counterexample("answer-at-receipt")
    assert write_sequence(trace, tmp_path / "c.mmd", title, note).read_text() == sequence_mermaid(trace, title, note)
    assert write_sequence(trace, tmp_path / "c.md", title, note).read_text().startswith("```mermaid\n---\n")
    bug = BUGS["answer-at-receipt"]
    result = explore(get_suite(bug.member).members[0], bug.rules)
    paths = write_counterexamples(result.verdicts, tmp_path / "ce", ("mermaid",))
    assert tmp_path / "ce" / f"counterexample-{bug.breaks}.mmd" in paths
    assert all(p.read_text().startswith("---\ntitle: ") for p in paths)


def test_every_scenario_is_a_mermaid_sequence_chart():
    from acp_lifecycle.sims.scenarios import SCENARIOS, run

    for name, sc in SCENARIOS.items():
        r = run(name)
        text = sequence_mermaid(r.trace, f"{name}: {sc.title}", f"expected: {sc.summary}", violation=False)
        assert "\nsequenceDiagram\n" in text and "    participant A as Agent\n" in text, name
        assert "violated:" not in text, name


def _edge_ends(g, curves) -> list[tuple[str, tuple[float, float]]]:
    ends = []
    for (u, v, _), segs in zip(g.edges, curves):
        if u != v:
            ends += [(u, segs[0][0]), (v, segs[-1][3])]
    return ends


@pytest.mark.parametrize("which", ["tiny", "answer-at-receipt"])
def test_the_lifecycle_drawing_reads_at_page_width_and_no_two_arrowheads_meet(which):
    """A strip 5.6 times wider than tall (3202x571 px) shrank its labels to nothing at page width:
    the layout turns top to bottom; and edge ends meeting one point of a box are spread apart."""
    from acp_lifecycle.model.bugs import BUGS
    from acp_lifecycle.sims.diagrams import drawing
    from acp_lifecycle.sims.diagrams.lifecycle import lifecycle

    lc = lifecycle("tiny") if which == "tiny" else lifecycle(BUGS[which].member, BUGS[which].rules)
    g = drawing._lifecycle_graph(lc)
    lay = drawing._choose_layout(g)
    w, h = drawing._extent(lay, g)
    wide_w, wide_h = drawing._extent(drawing._layout(g), g)
    assert lay.vertical and wide_w / wide_h > drawing._MAX_ASPECT and max(w / h, h / w) < wide_w / wide_h
    assert w <= 8.5  # inches: at most 1,275 px at 150 dpi, so labels keep their size at page width
    pairs = {(u, v) for u, v, _ in g.edges}
    curves = [list(drawing._edge_curve(g, lay, k, pairs, True)) for k in range(len(g.edges))]
    drawing._spread_ends(curves, g, lay)
    ends = _edge_ends(g, curves)
    for i, (n, p) in enumerate(ends):
        for m, q in ends[i + 1:]:
            if n == m:
                assert math.dist(p, q) >= drawing._MIN_PORT - 1e-9, (n, p, q)


def test_the_committed_lifecycle_picture_is_not_a_strip():
    import matplotlib.image

    height, width = matplotlib.image.imread(ROOT / "diagrams" / "lifecycle-tiny.png").shape[:2]
    assert width <= 1600 and max(width / height, height / width) <= 2.6, (width, height)
