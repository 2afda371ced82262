"""The scripted provider and `acp-lifecycle probe`, offline: each API's answers, and the probe on a small v1 agent."""

from __future__ import annotations

import http.client
import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from acp_lifecycle.sims.cli import main
from acp_lifecycle.sims.probe.observe import observe
from acp_lifecycle.sims.provider import Provider, Script, ScriptError
from acp_lifecycle.sims.wire.transcript import parse_text

FAKE = Path(__file__).resolve().parent / "agents" / "fake_v1_agent.py"
BASH = {"name": "Bash", "input_schema": {"type": "object", "required": ["command"],
                                         "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}}}}


@pytest.fixture
def provider():
    p = Provider(idle_timeout=30).start()
    yield p
    p.stop()


def _post(p: Provider, path: str, body: dict) -> tuple[int, str]:
    req = urllib.request.Request(p.url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _noted(p: Provider, n: int) -> list:
    """The provider's request log once it holds ``n`` records: a streamed answer is logged by the
    handler after its last byte, which the client may read first."""
    deadline = time.monotonic() + 10
    while len(p.requests) < n and time.monotonic() < deadline:
        time.sleep(0.01)
    return list(p.requests)


def _events(text: str) -> list:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]


def test_anthropic_stream_calls_the_shell_tool_and_then_answers_the_result(provider):
    status, text = _post(provider, "/v1/messages", {"model": "m", "stream": True, "tools": [BASH],
                                                     "messages": [{"role": "user", "content": "[tool] go"}]})
    events = _events(text)
    assert status == 200 and events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    tool = next(e["content_block"] for e in events if e.get("content_block", {}).get("type") == "tool_use")
    args = json.loads(next(e["delta"]["partial_json"] for e in events if e.get("delta", {}).get("type") == "input_json_delta"))
    assert tool["name"] == "Bash" and args == {"command": "touch acp-probe.txt"}
    assert any(e.get("delta", {}).get("stop_reason") == "tool_use" for e in events)
    result = [{"role": "user", "content": "[tool] go"}, {"role": "assistant", "content": [dict(tool, input=args)]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool["id"], "content": "ok"}]}]
    _, text = _post(provider, "/v1/messages", {"model": "m", "stream": True, "tools": [BASH], "messages": result})
    assert "".join(e["delta"]["text"] for e in _events(text) if e.get("delta", {}).get("type") == "text_delta") == "The command ran."
    assert [r["turn"] for r in _noted(provider, 2)] == ["tool", "after-tool"]


def test_anthropic_count_tokens_and_a_401_before_any_output(provider):
    assert _post(provider, "/v1/messages/count_tokens", {"model": "m", "messages": []}) == (200, '{"input_tokens": 12}')
    status, text = _post(provider, "/v1/messages", {"model": "m", "messages": [{"role": "user", "content": "[fail-401] hi"}]})
    assert status == 401 and json.loads(text)["error"]["type"] == "authentication_error"
    status, text = _post(provider, "/v1/messages", {"model": "m", "messages": [{"role": "user", "content": "[overloaded]"}]})
    assert status == 529 and json.loads(text)["error"]["type"] == "overloaded_error"


def test_openai_chat_streams_chunks_and_ends_with_done(provider):
    status, text = _post(provider, "/v1/chat/completions", {"model": "m", "stream": True,
                                                             "messages": [{"role": "user", "content": "hi"}]})
    assert status == 200 and text.rstrip().endswith("data: [DONE]")
    chunks = _events(text)
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == "Hello from the scripted provider."
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_openai_chat_answers_a_forced_schema_function_with_arguments_that_fit(provider):
    schema = {"type": "object", "required": ["next_speaker"], "properties": {"next_speaker": {"enum": ["model", "user"]}}}
    body = {"model": "m", "messages": [{"role": "user", "content": "who next?"}],
            "tools": [{"type": "function", "function": {"name": "respond_in_schema", "parameters": schema}}]}
    _, text = _post(provider, "/v1/chat/completions", body)
    call = json.loads(text)["choices"][0]["message"]["tool_calls"][0]["function"]
    assert call["name"] == "respond_in_schema" and json.loads(call["arguments"]) == {"next_speaker": "user"}


def test_openai_responses_stream_completes(provider):
    _, text = _post(provider, "/v1/responses", {"model": "m", "stream": True, "input": "hi"})
    events = _events(text)
    assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"
    assert "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta") == "Hello from the scripted provider."


def test_gemini_stream_and_a_json_helper_call(provider):
    _, text = _post(provider, "/v1beta/models/g:streamGenerateContent?alt=sse",
                    {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    parts = [e["candidates"][0]["content"]["parts"][0]["text"] for e in _events(text)]
    assert "".join(parts) == "Hello from the scripted provider."
    schema = {"type": "OBJECT", "properties": {"reasoning": {"type": "STRING"}, "next_speaker": {"type": "STRING", "enum": ["user", "model"]},
                                                "score": {"type": "INTEGER"}}}
    _, text = _post(provider, "/v1beta/models/g:generateContent", {"contents": [{"role": "user", "parts": [{"text": "x"}]}],
                                                                   "generationConfig": {"responseMimeType": "application/json",
                                                                                        "responseJsonSchema": schema}})
    answer = json.loads(json.loads(text)["candidates"][0]["content"]["parts"][0]["text"])
    assert answer == {"reasoning": "scripted", "next_speaker": "user", "score": 1}
    assert _noted(provider, 2)[-1]["turn"] == "json"


def test_a_midstream_failure_cuts_the_connection_after_two_chunks(provider):
    conn = http.client.HTTPConnection("127.0.0.1", provider.port, timeout=10)
    conn.request("POST", "/v1/messages", json.dumps({"model": "m", "stream": True, "messages": [
        {"role": "user", "content": "[fail-midstream]"}]}), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200
    with pytest.raises(http.client.IncompleteRead) as e:
        resp.read()
    deltas = [ev["delta"]["text"] for ev in _events(e.value.partial.decode()) if ev.get("delta", {}).get("type") == "text_delta"]
    assert deltas == ["Partial", " answer"]
    assert _noted(provider, 1)[-1]["status"] == "cut"


def test_the_provider_stops_by_itself_when_idle_and_after_its_budget():
    p = Provider(idle_timeout=0.5).start()
    assert p.stopped.wait(5)
    p.stop()
    p = Provider(max_requests=1).start()
    try:
        _post(p, "/v1/messages", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        assert p.stopped.wait(5)
    finally:
        p.stop()


def test_a_script_file_adds_turns_and_bad_ones_are_refused(tmp_path, provider):
    good = tmp_path / "s.json"
    good.write_text(json.dumps({"turns": [{"name": "long", "match": "[long]", "chunks": ["a", "b", "c"]}]}))
    script = Script.load(good)
    assert script.choose("please [long]", False).text == "abc" and script.choose("[tool]", False).tool
    for text, needle in (('{"turns": [{"name": "x", "colour": 1}]}', "unknown field 'colour'"),
                         ('{"turns": [{"name": "x", "status": 200}]}', "HTTP error status"), ("[]", '{"turns"')):
        good.write_text(text)
        with pytest.raises(ScriptError, match=needle):
            Script.load(good)


def test_each_request_is_one_json_log_line(tmp_path):
    log = (tmp_path / "log.jsonl").open("w")
    with Provider(log=log) as p:
        _post(p, "/v1/chat/completions", {"model": "qm", "messages": [{"role": "user", "content": "[fail-500]"}]})
        _post(p, "/nope", {})
    log.close()
    lines = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [(r["path"], r.get("model"), r.get("turn"), r["status"]) for r in lines] == [
        ("/v1/chat/completions", "qm", "fail-500", 500), ("/nope", None, None, 404)]


# --- the probe on a small v1 agent ------------------------------------------------------


def test_probe_drives_a_v1_agent_through_scenarios_and_reports_each(tmp_path, capsys):
    out = tmp_path / "runs"
    code = main(["probe", "--json", "--provider", "anthropic", "--timeout", "20", "--out", str(out), "--scenario",
                 "plain", "tool-deny", "cancel", "fail-401", "--", sys.executable, str(FAKE)])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    runs = {r["scenario"]: r for r in records if r["kind"] == "run"}
    assert code == 0 and {n: r["status"] for n, r in runs.items()} == dict.fromkeys(
        ["plain", "tool-deny", "cancel", "fail-401"], "ran")
    assert runs["tool-deny"]["turns"] == ["after-tool", "tool"] and runs["fail-401"]["turns"] == ["fail-401"]
    notes = {(r["scenario"], r["rule"], r["line"]) for r in records if r["kind"] == "finding" and r["level"] == "note"}
    assert ("plain", "no-user-echo", 5) in notes  # the prompt (line 5) is never echoed
    cancel = [json.loads(x)["msg"] for x in (out / "cancel.jsonl").read_text().splitlines()[:-1]]
    assert any(m.get("method") == "session/cancel" for m in cancel)
    assert cancel[-1] == {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "cancelled"}}
    deny = (out / "tool-deny.jsonl").read_text()
    assert '"optionId":"no"' in deny and '"status": "failed"' in deny
    assert (out / "fail-401.v2.jsonl").is_file() and (out / "fail-401.provider.jsonl").is_file()
    assert (out / "plain.jsonl").read_text().endswith('{"conn":"stdio","event":"closed"}\n')


def test_probe_bad_input_is_one_line(tmp_path, capsys):
    for argv, needle in ((["probe"], "give the agent command after --"),
                         (["probe", "--", "no-such-agent-xyz"], "no such command"),
                         (["probe", "--force", "--", "true"], "--force applies only with --out"),
                         (["probe", "--", sys.executable, "-c", "pass"], "pass --profile NAME|FILE")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1, err


def test_a_timed_out_agent_is_reported_and_stopped(tmp_path, capsys):
    start = time.monotonic()
    code = main(["probe", "--json", "--provider", "openai", "--timeout", "2", "--out", str(tmp_path / "o"),
                 "--scenario", "plain", "--", sys.executable, "-c", "import time; time.sleep(60)"])
    run = json.loads(capsys.readouterr().out.splitlines()[0])
    assert code == 1 and run["status"] == "timeout" and "no answer to initialize" in run["note"]
    assert time.monotonic() - start < 15


def test_observations_on_a_hand_written_v1_transcript():
    text = "\n".join(json.dumps(line) for line in [
        {"conn": "c", "from": "client", "msg": {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}},
        {"conn": "c", "from": "agent", "msg": {"jsonrpc": "2.0", "id": 0, "method": "session/request_permission",
                                              "params": {"sessionId": "s", "toolCall": {"toolCallId": "t1", "status": "pending"}, "options": []}}},
        {"conn": "c", "from": "client", "msg": {"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "cancelled"}}}},
        {"conn": "c", "from": "client", "msg": {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}},
        {"conn": "c", "from": "agent", "msg": {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "cancelled"}}},
        {"conn": "c", "from": "agent", "msg": {"jsonrpc": "2.0", "id": 2, "error": {"code": 401, "message": "no"}}},
    ])
    got = {(f.rule, f.line) for f in observe(parse_text(text))}
    assert got == {("permission-for-unannounced-tool-call", 2), ("prompt-ended-by-next-prompt", 5),
                   ("no-user-echo", 1), ("no-user-echo", 4), ("tool-call-left-unfinished", 2),
                   ("http-status-as-error-code", 6)}



def test_docs_probe_md_lists_every_scenario_and_note():
    import re

    from acp_lifecycle.sims.probe import SCENARIOS
    from acp_lifecycle.sims.probe import observe as observe_module

    text = (Path(__file__).resolve().parents[1] / "docs" / "probe.md").read_text()
    rows = re.findall(r"^\| (`[a-z0-9-]+`(?:, `[a-z0-9-]+`)*) \|", text, re.M)
    documented = {n for row in rows for n in re.findall(r"`([a-z0-9-]+)`", row)}
    assert set(SCENARIOS) <= documented
    notes = set(re.findall(r"``([a-z-]+)``", observe_module.__doc__))
    assert notes and all(f"`{n}`" in text for n in notes)
