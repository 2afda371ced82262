"""Running the probe: one fresh agent and one scripted provider per scenario.

``probe(command, provider, scenarios, out)`` runs each scenario in turn: it
starts a ``Provider`` on a free port of 127.0.0.1, gives the agent its own
HOME and settings pointing at it (``environment``), does the ACP v1 handshake,
runs the scenario, keeps listening a moment for late messages, stops the
agent by process group, and judges the transcript (``judge``). It writes, per
scenario, into ``out``: ``NAME.jsonl`` (the v1 transcript), ``NAME.v2.jsonl``
(the bridged one), ``NAME.provider.jsonl`` (the provider's request log) and
``NAME.stderr.log`` (the agent's stderr). Every step is bounded: the
handshake and the scenario share ``timeout`` seconds (``PATIENCE`` times that
for the provider failures agents retry); no scenario starts once ``budget``
seconds have passed.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from acp_lifecycle.sims.provider import Provider, Script
from acp_lifecycle.sims.wire.transcript import parse

from .client import AgentGone, AgentSession
from .environment import environment
from .judge import Finding, bridged_text, judge
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

    def data(self) -> dict:
        return {"kind": "run", "scenario": self.scenario, "status": self.status, "note": self.note,
                "seconds": round(self.seconds, 1), "transcript": self.transcript, "exit": self.exit_code,
                "provider_requests": len(self.requests),
                "turns": sorted({r.get("turn") for r in self.requests if r.get("turn")}),
                "violations": sum(f.level == "violation" for f in self.findings),
                "warnings": sum(f.level == "warning" for f in self.findings),
                "problems": sum(f.level == "problem" for f in self.findings),
                "notes": sum(f.level == "note" for f in self.findings)}


def run_scenario(name: str, command: list[str], provider: str, out: Path, *, timeout: float = 60.0,
                 script: Script | None = None, validators=(None, None), linger: float = 1.5) -> RunResult:
    fn = SCENARIOS[name][0]
    timeout *= PATIENCE.get(name, 1.0)
    started = time.monotonic()
    clock = Clock(timeout)
    root = Path(tempfile.mkdtemp(prefix=f"acp-probe-{name}-"))
    transcript = out / f"{name}.jsonl"
    result = RunResult(name, "error", transcript=str(transcript))
    log = open(out / f"{name}.provider.jsonl", "w", encoding="utf-8")
    server = Provider(script, log=log, idle_timeout=timeout + 30, max_requests=500).start()
    session = None
    try:
        env, work = environment(provider, server.url, root)
        with open(transcript, "wb") as handle, open(out / f"{name}.stderr.log", "wb") as stderr:
            try:
                session = AgentSession(command, env, str(work), handle, stderr)
            except OSError as e:
                result.note = f"cannot start the agent {command[0]!r}: {e.strerror or e}"
                return result
            try:
                ok, note = session.handshake(str(work), min(30.0, clock.left()))
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
    if result.status == "error":
        said = _last_line(out / f"{name}.stderr.log")
        if said:
            result.note += f"; its stderr ended: {said}"
    failed = [r for r in result.requests if isinstance(r.get("status"), int) and r["status"] >= 400]
    if result.status == "timeout" and len(failed) > 1:
        result.note = (f"{result.note}: the agent was still retrying the failing provider "
                       f"({len(failed)} failed calls in {timeout:g} s)")
    entries = parse(transcript)
    if any("msg" in e for _, e in entries):
        partial = result.status in ("timeout", "error")
        result.findings, bridged = judge(entries, partial=partial, validators=validators)
        (out / f"{name}.v2.jsonl").write_text(bridged_text(bridged), encoding="utf-8")
    return result


def _last_line(path: Path) -> str:
    try:
        lines = [x.strip() for x in path.read_text(encoding="utf-8", errors="replace").splitlines() if x.strip()]
    except OSError:
        return ""
    return lines[-1][:200] if lines else ""


def probe(command: list[str], provider: str, scenarios: list[str], out: Path, *, timeout: float = 60.0,
          budget: float = 600.0, script: Script | None = None, validators=(None, None), progress=None) -> list[RunResult]:
    """Every scenario in ``scenarios`` against the agent ``command``; ``progress(result)`` after each."""
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    results = []
    for name in scenarios:
        if time.monotonic() - start > budget:
            results.append(RunResult(name, "skipped", f"the probe's budget of {budget:g} s is spent"))
        else:
            results.append(run_scenario(name, command, provider, out, timeout=timeout, script=script,
                                        validators=validators))
        if progress is not None:
            progress(results[-1])
    return results
