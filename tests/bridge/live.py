"""Live runs of `acp-lifecycle bridge serve` between the official SDKs' programs.

Each run starts a client written on an official SDK (``gen/v2-client.mjs``: the
TypeScript SDK's experimental v2 ``client()``; ``gen/v1-client.mjs``: its v1
``client()``), which starts ``acp-lifecycle bridge serve --record`` as its agent,
which starts an agent written on an official SDK. The client runs four sessions
(a prompt, a cancelled one, a failing one, a resume/load with replay) and writes
what it sent and received; the bridge writes its record.

``python tests/bridge/regenerate.py`` writes the runs into ``fixtures/`` (the offline
tests read those); ``tests/test_bridge_live.py`` runs them again where node, the npm
packages (``npm ci --prefix tests/bridge/gen``) and the Python SDK
(``pip install agent-client-protocol==0.12.1``) are installed.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GEN = HERE / "gen"
FIXTURES = HERE / "fixtures"
#: The conformance corpus's v2 agent (issue 10: tests/corpus/gen/stdio-agent.mjs, on the same SDK);
#: $ACP_CORPUS_GEN names another copy of that folder.
CORPUS = Path(os.environ.get("ACP_CORPUS_GEN") or HERE.parent / "corpus" / "gen")
#: What the Python SDK agent needs: the SDK the fixtures were made with.
PY_SDK = "agent-client-protocol==0.12.1"

#: name -> (the clients' version, client program, agent command, bridge options); a version of
#: None runs the client straight against the agent (no bridge): its log is the SDKs' own v1
#: transcript, input for the converter (`bridge --to v2`).
RUNS = {
    "ts-v1-direct": (None, "v1-client.mjs", ["node", str(GEN / "v1-agent.mjs")], []),
    "py-v1-direct": (None, "v1-client.mjs", [sys.executable, str(GEN / "v1_agent_py.py")], []),
    "ts-v1-agent": ("v2", "v2-client.mjs", ["node", str(GEN / "v1-agent.mjs")], []),
    "py-v1-agent": ("v2", "v2-client.mjs", [sys.executable, str(GEN / "v1_agent_py.py")], []),
    # the TypeScript v1 agent behaving on the wire as the published agents did (no echo, ...)
    "ts-v1-published": ("v2", "v2-client.mjs", ["node", str(GEN / "v1-agent.mjs"), "--like-published"], []),
    "py-v1-agent-immediate": ("v2", "v2-client.mjs", [sys.executable, str(GEN / "v1_agent_py.py")], ["--insertion", "immediate"]),
    "ts-v2-agent": ("v1", "v1-client.mjs", ["node", str(GEN / "v2-agent.mjs")], []),
    "corpus-v2-agent": ("v1", "v1-client.mjs", ["node", str(CORPUS / "stdio-agent.mjs")], []),
}


def missing(name: str) -> str:
    """Why the run ``name`` cannot go live here ('' when it can)."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not (GEN / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        return "the SDK's npm package is not installed (.ci/setup installs it; or npm ci --prefix tests/bridge/gen)"
    if name.startswith("corpus-") and not (CORPUS / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        return f"the corpus agent is not installed ({CORPUS}: npm ci --prefix tests/corpus/gen)"
    if "py-" in name and importlib.util.find_spec("acp") is None:
        return f"the Python SDK is not installed (pip install {PY_SDK})"
    return ""


def bridge_command() -> list[str]:
    """``acp-lifecycle`` as this interpreter runs it (no installed script needed)."""
    return [sys.executable, "-c", "import sys; from acp_lifecycle.sims.cli import main; sys.exit(main())"]


def run(name: str, out: Path, timeout: float = 120) -> tuple[Path, Path]:
    """Run ``name`` live; returns ``(the bridge's record, the client's log)`` in ``out``
    (no record for a run without a bridge)."""
    to, client, agent, options = RUNS[name]
    record, log = out / f"{name}.jsonl", out / f"{name}.client.json"
    for p in (record, out / f"{name}.v1.jsonl", out / f"{name}.v2.jsonl", log):
        p.unlink(missing_ok=True)
    if to is None:
        serve = agent
    else:
        serve = bridge_command() + ["bridge", "serve", "--to", to, "--record", str(record), *options, "--", *agent]
    proc = subprocess.run(["node", str(GEN / client), str(log), "--", *serve], cwd=GEN,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{name}: the client failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    # The per-side transcripts are derived from the record; the fixtures keep the record only.
    for side in ("v1", "v2"):
        (out / f"{name}.{side}.jsonl").unlink(missing_ok=True)
    return record, log


def client_transcript(log_path: Path) -> list[dict]:
    """A client's log as a transcript: what it sent and received, in its order."""
    import json

    data = json.loads(Path(log_path).read_text())
    return [{"conn": "c0", "from": "client" if e["dir"] == "sent" else "agent", "msg": e["msg"]} for e in data["log"]]
