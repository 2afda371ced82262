"""`acp-lifecycle explore`: its JSON API against the exhaustive search, bad queries, the page offline.

The page in a real browser: tests/test_explorer_browser.py.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections import deque

import pytest

from acp_lifecycle.model.bugs import BUGS
from acp_lifecycle.sims.cli import main
from acp_lifecycle.sims.configs import get_suite
from acp_lifecycle.sims.explore.model_access import model_for
from acp_lifecycle.sims.explore.server import Explorer
from acp_lifecycle.sims.search.explore import explore


@pytest.fixture(scope="module")
def server():
    s = Explorer(0).start()
    yield s
    s.shutdown()
    s.server_close()


def get(server, url: str):
    """(status, body): JSON decoded for 200, text otherwise."""
    try:
        with urllib.request.urlopen(server.url.rstrip("/") + url, timeout=60) as r:
            body = r.read().decode()
            return r.status, json.loads(body) if r.headers["Content-Type"] == "application/json" else body
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_the_api_walks_exactly_the_states_and_transitions_check_explores_on_tiny(server):
    """Breadth-first over the API's own paths: every state once, its enabled actions counted once."""
    seen: dict[str, list[str]] = {}
    queue = deque([[]])
    while queue:
        path = queue.popleft()
        code, d = get(server, "/api/state?config=tiny&path=" + ",".join(map(str, path)))
        assert code == 200
        if d["fingerprint"] in seen:
            continue
        seen[d["fingerprint"]] = [e["action"] for e in d["enabled"]]
        for e in d["enabled"]:
            if e["fingerprint"] not in seen:
                queue.append(path + [e["index"]])
    r = explore(get_suite("tiny").members[0], symmetry=False)
    assert (len(seen), sum(len(a) for a in seen.values())) == (r.states, r.transitions) == (216, 383)
    assert sum(1 for a in seen.values() if not a) == r.terminal_states


def test_a_state_shows_each_participant_the_messages_and_the_path(server):
    code, d = get(server, "/api/state?config=tiny&path=0,0,1")
    assert code == 200
    assert d["path"] == [0, 0, 1] and d["query"] == "config=tiny&path=0,0,1"
    assert [h["action"] for h in d["history"]] == [
        "ClientSubmitPrompt(0, 'a')", "AgentReceive(0, 'prompt')", "AgentInsert(0, 'retained')"]
    sent = d["history"][0]["messages"][0]
    assert sent["direction"] == "client->agent" and sent["message"]["method"] == "session/prompt"
    assert d["participants"]["agent"]["requests"][0]["phase"] == "inserted"
    assert d["participants"]["clients"][0]["submissions"][0]["status"] == "sent"
    respond = next(e for e in d["enabled"] if e["action"] == "AgentRespond(0)")
    assert respond["messages"][0]["message"]["result"] == {"messageId": "msg_1"}
    assert d["chart"].startswith("<svg") and "session/prompt id=1" in d["chart"]
    assert {"property": "every_prompt_answered"}.items() <= d["verdicts"]["openObligations"][0].items()


@pytest.mark.parametrize("rules", ["rfd", "rfd+2.4.0"])
def test_a_prompt_cancelled_after_insertion_is_still_owed_its_answer_under_both_rule_sets(rules):
    """Issue 34: under rfd the prompt below was owed nothing (left to a rule of 2.4.0 alone); JSON-RPC and
    "the agent will respond once the prompt has been accepted" owe it under both."""
    from acp_lifecycle.sims.explore.api import state_answer

    d = state_answer(model_for("default", "cancel-race", rules), [1, 0, 7, 2, 0])
    assert [h["action"] for h in d["history"]][2:] == [
        "ClientCancelRequest(0, 1)", "AgentInsert(0, 'retained')", "AgentReceive(0, 'cancel_req')"]
    owed = {o["property"]: o for o in d["verdicts"]["openObligations"]}
    prompt = owed["every_prompt_answered"]
    assert "session/prompt 1, cancelled with $/cancel_request, is never answered" in prompt["message"]
    assert prompt["clause"] == "JSONRPC-REPLY" and prompt["quote"].startswith("JSON-RPC 2.0: ")  # its case's
    assert ("cancelled_request_still_answered" in owed) == (rules == "rfd+2.4.0")


def test_a_next_step_that_breaks_a_property_is_named(server):
    # answer-at-receipt: the step that receives the prompt answers it before insertion
    code, d = get(server, "/api/state?config=tiny&bug=answer-at-receipt&path=0")
    assert code == 200
    receive = next(e for e in d["enabled"] if e["action"] == "AgentReceive(0, 'prompt')")
    assert [f["property"] for f in receive["breaks"]] == ["success_only_after_insertion"]
    assert "success_only_after_insertion" in d["verdicts"]["nextStepCouldBreak"]


def test_check_links_open_the_counterexample_of_a_seeded_bug(server):
    bug = BUGS["answer-at-receipt"]
    code, d = get(server, f"/api/check?config={bug.member}&bug={bug.name}")
    assert code == 200
    trace = next(t for t in d["traces"] if t["property"] == bug.breaks)
    assert trace["outcome"] == "VIOLATED" and trace["query"] == f"config=tiny&bug={bug.name}&path=0,0"
    code, s = get(server, "/api/state?" + trace["query"])
    assert [f["property"] for f in s["verdicts"]["brokenSoFar"]] == [bug.breaks]


def test_the_sometimes_situations_the_run_reached(server):
    code, d = get(server, "/api/state?config=tiny&path=0,0,1,0")
    reached = {f["property"]: f["step"] for f in d["verdicts"]["reached"]}
    assert reached == {"sometimes_success_response": 4, "sometimes_prompt_answered": 4}


@pytest.mark.parametrize("query, reason", [
    ("config=tiny&path=0,9", "path: step 2 takes action 9, but 1 action(s) are enabled there (0..0)"),
    ("config=tiny&path=0,x", "path: 'x' is not an action index (a path is action indices: 0,3,1)"),
    ("config=nope", "unknown configuration 'nope'"),
    ("config=default&member=tiny", "configuration 'default' has no member 'tiny'"),
    ("config=tiny&rules=v3", "unknown rule set 'v3'"),
    ("config=tiny&bug=nope", "unknown bug 'nope'"),
    ("config=tiny&colour=red", "unknown parameter 'colour'"),
    # digits to str.isdigit() that are not 0-9: '²' made int() fail (the request died), '١' was read as 1
    ("config=tiny&path=%C2%B2", "path: '²' is not an action index"),
    ("config=tiny&path=0,%D9%A1", "path: '١' is not an action index"),
    # the command line's wording for --set, not Python's TypeError
    ("config=tiny&set=foo%3D1", "set=foo=1: unknown bound 'foo' (give NAME=VALUE); bounds: clients,"),
    ("config=tiny&set=failures", "set=failures: failures needs a value (give failures=VALUE, in 0..3)"),
    ("config=tiny&set=failures%3Dx", "set=failures=x: 'x' is not an integer"),
    ("config=tiny&path=" + ",".join(["0"] * 501), "path: 501 steps; at most 500"),
])
def test_a_bad_query_gets_400_and_one_line(server, query, reason):
    code, body = get(server, "/api/state?" + query)
    assert code == 400
    assert body.startswith(reason) and body.count("\n") == 1


def test_a_fault_of_the_servers_own_is_500_and_one_line(server, monkeypatch):
    """A request the server failed on died without an answer (the browser saw the connection close)."""
    from acp_lifecycle.sims.explore import server as explore_server

    def broken(model, path):
        raise RuntimeError("the model\nbroke")

    monkeypatch.setattr(explore_server, "state_answer", broken)
    assert get(server, "/api/state?config=tiny") == (500, "internal error: RuntimeError: the model broke\n")


def test_the_favicon_is_no_404(server):
    assert get(server, "/favicon.ico") == (204, "")


def test_the_page_is_self_contained(server):
    code, html = get(server, "/")
    assert code == 200 and "<script>" in html
    # nothing fetched from elsewhere: no external script, style, font or image
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "@import" not in html and "url(http" not in html


def test_the_server_binds_loopback_only(server):
    assert server.server_address[0] == "127.0.0.1"


def test_path_of_a_check_trace_replays_it():
    model = model_for("default", "failures", "rfd", "no-idle-after-failure")
    found = [t for t in model.check_traces() if t["property"] == "failed_work_ends_with_error_idle"]
    assert found and not found[0]["ok"]
    trace = model.walk(found[0]["path"])
    pre, last = trace[-1]
    assert [f["property"] for f in model.step_findings(pre, last)] == ["failed_work_ends_with_error_idle"]


def test_cli_refuses_bad_input_with_one_line(capsys):
    assert main(["explore", "--config", "nope"]) == 2
    assert main(["explore", "--run", "0,99"]) == 2
    assert main(["explore", "--port", "70000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("acp-lifecycle: error: ") for line in err)
    assert "path: step 2 takes action 99" in err[1]


def test_the_command_prints_its_url_and_the_bugs_counterexample_link_then_serves():
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "import sys; from acp_lifecycle.sims.cli import main; sys.exit(main())", "explore", "--bug", "answer-at-receipt",
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        where = json.loads(proc.stdout.readline())
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?config=tiny&bug=answer-at-receipt&path=", where["url"])
        link = where["counterexample"]
        assert link["property"] == "success_only_after_insertion" and link["steps"] == 2
        with urllib.request.urlopen(link["url"].replace("/?", "/api/state?"), timeout=30) as r:
            d = json.loads(r.read())
        assert [f["property"] for f in d["verdicts"]["brokenSoFar"]] == ["success_only_after_insertion"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
