"""`probe`'s agent profiles, `authenticate`, the handshake's timeout, cancel-permission-wait, --live and --report.

Offline, on the small v1 agent of tests/agents/fake_v1_agent.py (``--auth``: session/new needs
`authenticate`; ``--withdraw``: a cancelled permission request is withdrawn with
`$/cancel_request`; ``--bogus-cancel``: a known fault).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from acp_lifecycle.sims.cli import main
from acp_lifecycle.sims.probe import run as run_module
from acp_lifecycle.sims.probe.environment import environment
from acp_lifecycle.sims.probe.profile import ProfileError, load_profile, pick, shipped
from acp_lifecycle.sims.wire.transcript import parse

FAKE = Path(__file__).resolve().parent / "agents" / "fake_v1_agent.py"


def _msgs(path: Path) -> list[dict]:
    return [e["msg"] for _, e in parse(path) if "msg" in e]


def _answer(path: Path, sender: str, rid) -> dict:
    """The answer ``sender`` gave to the other side's request ``rid``."""
    return next(e["msg"] for _, e in parse(path) if "msg" in e and e["from"] == sender and "method" not in e["msg"]
                and e["msg"].get("id") == rid)


def _probe(tmp_path, capsys, *args, agent=(), scenarios=("plain",)) -> tuple[int, dict, list]:
    out = tmp_path / "runs"
    code = main(["probe", "--json", "--timeout", "20", "--out", str(out), "--scenario", *scenarios, *args,
                 "--", sys.executable, str(FAKE), *agent])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return code, {r["scenario"]: r for r in records if r["kind"] == "run"}, [r for r in records if r["kind"] == "finding"]


# --- profiles ---------------------------------------------------------------------------


def test_the_shipped_profiles_cover_every_api_and_are_picked_from_the_command():
    profiles = shipped()
    assert {"claude-agent-acp", "gemini-cli", "qwen-code", "codex-acp", "opencode"} <= set(profiles)
    assert {p.api for p in profiles.values()} == {"anthropic", "openai-chat", "openai-responses", "gemini"}
    for name, p in profiles.items():
        assert p.package and p.version and p.command_template, name
        assert pick(p.command(Path("/cache/node_modules"))).name == name
    assert pick(["python3", "my_agent.py"]) is None
    assert profiles["codex-acp"].auth == "openai-api-key"


def test_a_profile_points_the_agent_at_the_provider_by_env_files_and_arguments(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('''
name = "mine"
api = "openai"
args = ["--base", "${url}/v1", "--key=${key}"]
dirs = [".mine/cache"]
[env]
MINE_URL = "${url}"
[env.MINE_CONFIG]
provider = { url = "${url}", model = "${model}" }
[files]
".mine/config.txt" = "home ${home}, cost $$0"
[files.".mine/settings.json"]
retries = 0
url = "${url}"
''')
    p = load_profile(path)
    assert p.api == "openai-chat"
    env, work, args = environment(p, "http://127.0.0.1:9", tmp_path / "run")
    home = tmp_path / "run" / "home"
    assert args == ["--base", "http://127.0.0.1:9/v1", "--key=probe-key-not-secret"]
    assert env["MINE_URL"] == "http://127.0.0.1:9" and env["HOME"] == str(home) and work.is_dir()
    assert json.loads(env["MINE_CONFIG"]) == {"provider": {"url": "http://127.0.0.1:9", "model": "probe-model"}}
    assert (home / ".mine/config.txt").read_text() == f"home {home}, cost $0"
    assert json.loads((home / ".mine/settings.json").read_text()) == {"retries": 0, "url": "http://127.0.0.1:9"}
    assert (home / ".mine/cache").is_dir()


@pytest.mark.parametrize("text, needle", [
    ('name = "x"\napi = "anthropic"\ncolour = 1', "unknown field 'colour'"),
    ('name = "x"\napi = "cohere"', "api must be one of"),
    ('name = "x"\napi = "gemini"\n[env]\nA = "${port}"', "unknown placeholder '${port}'"),
    ('name = "x"\napi = "gemini"\n[files]\n"/etc/passwd" = "x"', "inside the run's HOME"),
    ('name = "x"\napi = "gemini"\n[auth]\nmethod = 3', "auth is a table"),
    ('name = [', "not TOML"),
])
def test_a_bad_profile_is_one_line_exit_2(tmp_path, capsys, text, needle):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ProfileError, match="bad.toml"):
        load_profile(path)
    assert main(["probe", "--profile", str(path), "--", sys.executable, str(FAKE)]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1, err


def test_profile_and_provider_together_and_an_unknown_profile_are_refused(capsys):
    for argv, needle in ((["--profile", "codex-acp", "--provider", "gemini"], "choose one of --profile and --provider"),
                         (["--profile", "no-such-agent"], "no shipped profile of that name")):
        assert main(["probe", *argv, "--", sys.executable, str(FAKE)]) == 2
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1, err


# --- the handshake ----------------------------------------------------------------------


def test_authenticate_when_session_new_asks_for_it(tmp_path, capsys):
    """The agent lists a login and an API-key method and answers session/new -32000 until
    authenticated: the probe authenticates with the method whose variable it sets, once."""
    code, runs, _ = _probe(tmp_path, capsys, "--provider", "anthropic", agent=["--auth"])
    assert code == 0 and runs["plain"]["status"] == "ran" and runs["plain"]["auth"] == "anthropic-key"
    methods = [m.get("method") for m in _msgs(tmp_path / "runs" / "plain.jsonl") if "method" in m and "id" in m]
    assert methods[:4] == ["initialize", "session/new", "authenticate", "session/new"]
    assert runs["plain"]["agent"] == {"name": "fake-v1-agent", "version": "1.2.3"}


def test_a_profile_that_names_its_auth_method_authenticates_before_session_new(tmp_path, capsys):
    path = tmp_path / "fake.toml"
    path.write_text('name = "fake"\napi = "anthropic"\n[env]\nANTHROPIC_BASE_URL = "${url}"\n'
                    'ANTHROPIC_API_KEY = "${key}"\n[auth]\nmethod = "anthropic-key"\n')
    code, runs, _ = _probe(tmp_path, capsys, "--profile", str(path), agent=["--auth"])
    assert code == 0 and runs["plain"]["status"] == "ran"
    methods = [m.get("method") for m in _msgs(tmp_path / "runs" / "plain.jsonl") if "method" in m and "id" in m]
    assert methods[:3] == ["initialize", "authenticate", "session/new"]


def test_without_a_method_it_can_use_the_run_fails_with_the_agents_answer(tmp_path, capsys):
    path = tmp_path / "nokey.toml"
    path.write_text('name = "nokey"\napi = "anthropic"\n[env]\nANTHROPIC_BASE_URL = "${url}"\n')
    code, runs, _ = _probe(tmp_path, capsys, "--profile", str(path), agent=["--auth"])
    assert code == 1 and runs["plain"]["status"] == "error"
    assert "session/new failed: -32000 Authentication required" in runs["plain"]["note"]


def test_the_handshake_gets_the_whole_timeout(tmp_path, monkeypatch):
    """Agents that start slowly under load need more than 30 s: --timeout bounds the handshake."""
    seen = []
    real = run_module.AgentSession.handshake

    def spy(self, cwd, timeout, auth=None):
        seen.append(timeout)
        return real(self, cwd, timeout, auth)

    monkeypatch.setattr(run_module.AgentSession, "handshake", spy)
    run_module.run_scenario("plain", [sys.executable, str(FAKE)], "anthropic", tmp_path, timeout=90, model=False)
    assert seen and seen[0] > 80


# --- cancel-permission-wait, --live, --report -------------------------------------------


def test_cancel_permission_wait_answers_a_withdrawn_request_cancelled_by_error(tmp_path, capsys):
    code, runs, findings = _probe(tmp_path, capsys, "--provider", "anthropic", agent=["--withdraw"],
                                  scenarios=["cancel-permission-wait"])
    run = runs["cancel-permission-wait"]
    assert run["status"] == "ran" and "withdrew its permission request" in run["note"]
    path = tmp_path / "runs" / "cancel-permission-wait.jsonl"
    withdrawn = next(m for m in _msgs(path) if m.get("method") == "$/cancel_request")
    assert _answer(path, "client", withdrawn["params"]["requestId"])["error"]["code"] == -32800
    assert not any(f["rule"] == "prompt-answered-with-permission-pending" for f in findings)
    assert run["model"] == "explained"


def test_cancel_permission_wait_notes_a_turn_ended_with_its_permission_pending(tmp_path, capsys):
    _, runs, findings = _probe(tmp_path, capsys, "--provider", "anthropic", scenarios=["cancel-permission-wait"])
    assert "with its permission request pending" in runs["cancel-permission-wait"]["note"]
    path = tmp_path / "runs" / "cancel-permission-wait.jsonl"
    asked = next(m for m in _msgs(path) if m.get("method") == "session/request_permission")
    assert _answer(path, "client", asked["id"])["result"] == {"outcome": {"outcome": "cancelled"}}
    assert any(f["rule"] == "prompt-answered-with-permission-pending" for f in findings)


def test_live_drives_the_agent_through_bridge_serve_as_a_v2_client(tmp_path, capsys):
    """With --live the same scenario runs again as a v2 client of `bridge serve --to v2`. In
    cancel-permission-wait this v1 agent ends its turn with the permission request pending, so the
    bridge withdraws it with $/cancel_request, before the idle, and the v2 client answers -32800.
    The model's agent may withdraw it so too (after session/cancel, at any point before the idle:
    Config.withdraw_permission): trace --model explains the run, which it once left unexplained."""
    code, runs, findings = _probe(tmp_path, capsys, "--provider", "anthropic", "--live",
                                  scenarios=["plain", "cancel-permission-wait"])
    for name in ("plain", "cancel-permission-wait"):
        live = runs[name]["live"]
        assert live["status"] == "ran", (name, live)
        msgs = _msgs(tmp_path / "runs" / f"{name}.live.jsonl")
        assert msgs[0]["params"]["protocolVersion"] == 2 and msgs[1]["result"]["protocolVersion"] == 2
        assert (tmp_path / "runs" / f"{name}.live.bridge.v1.jsonl").is_file()
    assert runs["plain"]["live"]["model"] == "explained"
    path = tmp_path / "runs" / "cancel-permission-wait.live.jsonl"
    msgs = [(n, e["msg"]) for n, e in parse(path) if "msg" in e]
    line, withdrawn = next((n, m) for n, m in msgs if m.get("method") == "$/cancel_request")
    assert _answer(path, "client", withdrawn["params"]["requestId"])["error"]["code"] == -32800
    idle = next(n for n, m in msgs if '"idle"' in json.dumps(m))
    assert line < idle and "withdrew its permission request" in runs["cancel-permission-wait"]["live"]["note"]
    assert runs["cancel-permission-wait"]["live"]["model"] == "explained" and code == 0
    assert not [f for f in findings if f.get("mode") == "live" and f["level"] in ("violation", "warning")]


def test_the_report_of_a_known_fault_names_the_rule_quotes_the_clause_and_the_line(tmp_path, capsys):
    report = tmp_path / "REPORT.md"
    code, runs, findings = _probe(tmp_path, capsys, "--provider", "anthropic", "--report", str(report),
                                  agent=["--bogus-cancel"])
    assert code == 1
    fault = next(f for f in findings if f["rule"] == "cancelled_only_when_cancelled")
    text = report.read_text()
    assert text.startswith("# ACP conformance of fake-v1-agent 1.2.3")
    assert "### `cancelled_only_when_cancelled` (MUST), 1 time" in text
    assert f"> {fault['clause']}: {fault['quote']}" in text and fault["quote"]
    assert f"- `plain`, line {fault['line']} (bridged line {fault['v2_line']}) of `plain.jsonl`" in text
    assert f"unexplained (line {fault['line']})" in text  # trace --model's verdict, at the same line
    assert "acp-lifecycle probe --profile claude-agent-acp --scenario plain --timeout 20 -- " in text
    assert "**`no-user-echo`**" in text
    # an existing report is not overwritten without --force
    assert main(["probe", "--report", str(report), "--provider", "anthropic", "--", sys.executable, str(FAKE)]) == 2
    assert "exists; pass --force" in capsys.readouterr().err


def test_a_prompt_never_answered_in_a_whole_run_is_noted_and_not_in_a_cut_one():
    from acp_lifecycle.sims.probe.observe import observe
    from acp_lifecycle.sims.wire.transcript import parse_text

    text = "\n".join(json.dumps(line) for line in [
        {"conn": "c", "from": "client", "msg": {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}},
        {"conn": "c", "from": "client", "msg": {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}},
        {"conn": "c", "from": "agent", "msg": {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}}},
    ])
    assert ("prompt-never-answered", 2) in {(f.rule, f.line) for f in observe(parse_text(text))}
    assert not any(f.rule == "prompt-never-answered" for f in observe(parse_text(text), partial=True))


def test_the_budget_doubles_with_live_where_every_scenario_runs_twice(monkeypatch, tmp_path):
    ran = []
    monkeypatch.setattr(run_module, "run_scenario", lambda name, *a, **k: ran.append(name) or run_module.RunResult(name, "ran"))
    for live, expected in ((False, ["ran", "skipped", "skipped"]), (True, ["ran", "ran", "skipped"])):
        clock = iter(range(0, 1000, 75))  # each look at the clock: 75 s later
        monkeypatch.setattr(run_module, "time", SimpleNamespace(monotonic=lambda: next(clock)))  # run.py's clock only
        results = run_module.probe(["agent"], "anthropic", ["plain", "cancel", "tool-allow"], tmp_path, budget=100,
                                   live=live)
        assert [r.status for r in results] == expected, live
