"""Live runs of `acp-lifecycle agent` against a scripted v2 client on the official TypeScript SDK.

``gen/client.mjs`` (``@agentclientprotocol/sdk`` 2.4.0, its experimental v2 ``client()``) starts
``acp-lifecycle agent --record --report`` as its agent, opens a session and, driven by a seed,
prompts, cancels, resumes, answers permission requests and closes; ``--broken`` makes it answer a
permission request the agent cancelled with ``selected``. Needs node and ``npm ci --prefix
tests/agent/gen``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GEN = HERE / "gen"

#: the policies the runs cycle through (seed: the agent's uniform random choices)
POLICIES = ("seed", "adversarial", "seed", "lazy", "seed", "eager")


def missing() -> str:
    """Why the live runs cannot go here ('' when they can)."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not (GEN / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        return "the SDK's npm package is not installed (.ci/setup installs it; or npm ci --prefix tests/agent/gen)"
    return ""


def agent_command(*options: str) -> list[str]:
    """``acp-lifecycle agent`` as this interpreter runs it (no installed script needed)."""
    return [sys.executable, "-c", "import sys; from acp_lifecycle.sims.cli import main; sys.exit(main())",
            "agent", *options]


def policy_of(n: int) -> str:
    return POLICIES[n % len(POLICIES)]


def run(n: int, out: Path, broken: bool = False, policy: str | None = None, timeout: float = 120) -> dict:
    """Run number ``n`` (its seed, and the policy ``policy_of(n)`` unless given) live in ``out``;
    the paths of the agent's record and report and the client's log, and the agent's stderr."""
    policy = policy or policy_of(n)
    record, report, log = out / f"run-{n}.jsonl", out / f"run-{n}.report.json", out / f"run-{n}.client.json"
    options = ["--seed", str(n), "--record", str(record), "--report", str(report), "--force"]
    if policy != "seed":
        options += ["--choices", policy]
    client = ["node", str(GEN / "client.mjs"), str(log), str(n)] + (["--broken"] if broken else [])
    proc = subprocess.run(client + ["--", *agent_command(*options)], cwd=GEN, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0 or not log.is_file():
        raise RuntimeError(f"run {n}: the client failed (exit {proc.returncode}): {proc.stderr[-3000:]}")
    return {"record": record, "report": json.loads(report.read_text()), "client": json.loads(log.read_text()),
            "stderr": proc.stderr, "policy": policy}
