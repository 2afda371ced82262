"""Running the probe: one fresh agent and one scripted provider per scenario.

``probe(command, profile, scenarios, out)`` runs each scenario in turn: it
starts a ``Provider`` on a free port of 127.0.0.1, gives the agent its own
HOME, environment, settings and arguments from its profile (``environment``),
does the ACP v1 handshake (``authenticate`` when the agent needs it), runs the
scenario, keeps listening a moment for late messages, stops the agent by
process group, and judges the transcript (``judge``: the v1 schema, the
bridge, ``trace``'s rules, the notes; ``model_verdict``: ``trace --model`` on
the bridged form). It writes, per scenario, into ``out``: ``NAME.jsonl`` (the
v1 transcript), ``NAME.v2.jsonl`` (the bridged one), ``NAME.provider.jsonl``
(the provider's request log) and ``NAME.stderr.log`` (the agent's stderr).
With ``live`` it runs the scenario a second time as a v2 client of
``acp-lifecycle bridge serve --to v2 -- AGENT`` (client_v2.py) and judges what
that client saw: ``NAME.live.jsonl``, the bridge's record
``NAME.live.bridge.jsonl`` (and its ``.v1``/``.v2`` sides), ``NAME.live.*``.
Every step is bounded: the handshake and the scenario share ``timeout``
seconds (``PATIENCE`` times that for the provider failures agents retry); no
scenario starts once ``budget`` seconds have passed.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from acp_lifecycle.sims.provider import Provider, Script
from acp_lifecycle.sims.wire.transcript import check_transcript, parse

from .client import AgentGone, AgentSession
from .client_v2 import V2Session
from .environment import environment, link_schemas
from .judge import Finding, bridged_text, judge_lines, model_verdict
from .profile import Profile, for_api
from .scenarios import PATIENCE, SCENARIOS, Clock

__all__ = ["RunResult", "probe", "run_scenario"]


@dataclass
class RunResult:
    scenario: str
    status: str  # ran | not-applicable | timeout | error | skipped
    note: str = ""
    seconds: float = 0.0
    transcript: str = ""
    requests: list = field(default_factory=list)  # the provider's log records
    exit_code: int | None = None
    findings: list[Finding] = field(default_factory=list)
    model: dict | None = None  # model_verdict of the bridged transcript
    agent: dict = field(default_factory=dict)  # initialize's agentInfo
    auth: str | None = None  # the auth method the probe authenticated with
    live: "RunResult | None" = None  # the same scenario through bridge serve (--live)

    def data(self) -> dict:
        out = {"kind": "run", "scenario": self.scenario, "status": self.status, "note": self.note,
               "seconds": round(self.seconds, 1), "transcript": self.transcript, "exit": self.exit_code,
               "provider_requests": len(self.requests),
               "turns": sorted({r.get("turn") for r in self.requests if r.get("turn")}),
               "violations": sum(f.level == "violation" for f in self.findings),
               "warnings": sum(f.level == "warning" for f in self.findings),
               "problems": sum(f.level == "problem" for f in self.findings),
               "notes": sum(f.level == "note" for f in self.findings),
               "model": (self.model or {}).get("verdict"), "agent": self.agent, "auth": self.auth}
        if self.live is not None:
            out["live"] = {k: v for k, v in self.live.data().items() if k not in ("kind", "scenario", "live")}
        return out


def _drive(name: str, stem: str, command: list[str], profile: Profile, out: Path, timeout: float,
           script: Script | None, linger: float, session_class=AgentSession) -> RunResult:
    """Start the provider and the agent, do the handshake and the scenario, stop both."""
    fn = SCENARIOS[name][0]
    started = time.monotonic()
    clock = Clock(timeout)
    root = Path(tempfile.mkdtemp(prefix=f"acp-probe-{name}-"))
    transcript = out / f"{stem}.jsonl"
    result = RunResult(name, "error", transcript=str(transcript))
    log = open(out / f"{stem}.provider.jsonl", "w", encoding="utf-8")
    server = Provider(script, log=log, idle_timeout=timeout + 30, max_requests=500).start()
    session = None
    try:
        env, work, extra = environment(profile, server.url, root)
        argv = command + extra
        if session_class is V2Session:
            link_schemas(root / "home")
            argv = [sys.executable, "-m", "acp_lifecycle.cli", "bridge", "serve", "--to", "v2", "--force",
                    "--record", str(out / f"{stem}.bridge.jsonl"), "--", *argv]
        with open(transcript, "wb") as handle, open(out / f"{stem}.stderr.log", "wb") as stderr:
            try:
                session = session_class(argv, env, str(work), handle, stderr)
            except OSError as e:
                result.note = f"cannot start the agent {command[0]!r}: {e.strerror or e}"
                return result
            try:
                ok, note = session.handshake(str(work), clock.left(), profile.auth)
                result.agent, result.auth = session.agent_info, session.authenticated
                if not ok:
                    result.status, result.note = ("timeout" if "no answer" in note else "error"), note
                else:
                    result.status, result.note = fn(session, clock)
                session.linger(linger)
            except AgentGone as e:
                try:
                    code = session.proc.wait(timeout=2)
                except Exception:  # still running with its output closed: stop() ends it
                    code = None
                result.status, result.note = "error", f"{e} (exit status {code})"
            finally:
                result.exit_code = session.stop()
                session.close_transcript()
    finally:
        server.stop()
        log.close()
        result.requests = list(server.requests)
        shutil.rmtree(root, ignore_errors=True)
    result.seconds = time.monotonic() - started
    _explain_failure(result, out / f"{stem}.stderr.log", timeout)
    return result


def _explain_failure(result: RunResult, stderr: Path, timeout: float) -> None:
    if result.status == "error":
        said = _last_line(stderr)
        if said:
            result.note += f"; its stderr ended: {said}"
    failed = [r for r in result.requests if r.get("status") == "cut"
              or isinstance(r.get("status"), int) and r["status"] >= 400]
    if result.status == "timeout" and len(failed) > 1:
        result.note = (f"{result.note}: the agent was still retrying the failing provider "
                       f"({len(failed)} failed calls in {timeout:g} s)")


def run_scenario(name: str, command: list[str], profile: Profile | str, out: Path, *, timeout: float = 60.0,
                 script: Script | None = None, validators=(None, None), linger: float = 1.5, model: bool = True,
                 live: bool = False) -> RunResult:
    """One scenario on the agent (``profile`` may name an API: its shipped profile stands for it)."""
    profile = for_api(profile) if isinstance(profile, str) else profile
    timeout *= PATIENCE.get(name, 1.0)
    result = _drive(name, name, command, profile, out, timeout, script, linger)
    entries = parse(Path(result.transcript))
    if any("msg" in e for _, e in entries):
        partial = result.status in ("timeout", "error")
        result.findings, bridged, causes = judge_lines(entries, partial=partial, validators=validators)
        (out / f"{name}.v2.jsonl").write_text(bridged_text(bridged), encoding="utf-8")
        if model:
            result.model = model_verdict(bridged, partial)
            line = result.model["line"]
            result.model["v1_line"] = causes[line - 1] if line and 0 < line <= len(causes) else None
    if live:
        result.live = run_live(name, command, profile, out, timeout=timeout, script=script, validators=validators,
                               linger=linger, model=model)
    return result


def run_live(name: str, command: list[str], profile: Profile, out: Path, *, timeout: float, script: Script | None,
             validators=(None, None), linger: float = 1.5, model: bool = True) -> RunResult:
    """The scenario as a v2 client through ``bridge serve --to v2``: ``trace``'s rules (and the
    model) on what that client saw, the bridge's problems from its record."""
    result = _drive(name, f"{name}.live", command, profile, out, timeout, script, linger, V2Session)
    entries = parse(Path(result.transcript))
    partial = result.status in ("timeout", "error")
    if any("msg" in e for _, e in entries):
        for f in check_transcript(entries, partial=partial, validator=validators[1]):
            result.findings.append(Finding("live", f.property, f.severity, f.message, f.line, f.line, f.clause, f.quote))
        if model:
            result.model = model_verdict([e for _, e in entries], partial)
    record = out / f"{name}.live.bridge.jsonl"
    for line in record.read_text(encoding="utf-8").splitlines() if record.is_file() else []:
        problem = json.loads(line).get("problem")
        if isinstance(problem, dict):
            result.findings.append(Finding("live-bridge", str(problem.get("kind")), "problem",
                                           str(problem.get("message")), 0))
    return result


def _last_line(path: Path) -> str:
    try:
        lines = [x.strip() for x in path.read_text(encoding="utf-8", errors="replace").splitlines() if x.strip()]
    except OSError:
        return ""
    return lines[-1][:200] if lines else ""


def probe(command: list[str], profile: Profile | str, scenarios: list[str], out: Path, *, timeout: float = 60.0,
          budget: float = 600.0, script: Script | None = None, validators=(None, None), progress=None,
          model: bool = True, live: bool = False) -> list[RunResult]:
    """Every scenario in ``scenarios`` against the agent ``command``; ``progress(result)`` after each.
    No scenario starts after ``budget`` seconds (twice that with ``live``)."""
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    budget *= 2 if live else 1  # every scenario runs twice
    results = []
    for name in scenarios:
        if time.monotonic() - start > budget:
            results.append(RunResult(name, "skipped", f"the probe's budget of {budget:g} s is spent"))
        else:
            results.append(run_scenario(name, command, profile, out, timeout=timeout, script=script,
                                        validators=validators, model=model, live=live))
        if progress is not None:
            progress(results[-1])
    return results
