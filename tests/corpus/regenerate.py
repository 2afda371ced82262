"""Regenerate the whole corpus: the conforming transcripts (node + the official SDK), then
the violating ones (their mutations) and README.md.

    python tests/corpus/regenerate.py

Needs node >= 20 and npm (the SDK is installed from gen/package-lock.json with `npm ci`
when gen/node_modules is missing). The tests read only the committed files.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GEN = HERE / "gen"


def main() -> int:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        print("regenerate: node and npm are needed (the transcripts come from the official TypeScript SDK)", file=sys.stderr)
        return 2
    if not (GEN / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=GEN, check=True)
    for old in (HERE / "conforming").glob("*.jsonl"):
        old.unlink()
    subprocess.run([node, "generate.mjs"], cwd=GEN, check=True)
    sys.path.insert(0, str(HERE))
    import mutations

    manifest = mutations.build()
    scenarios = json.loads(subprocess.run(
        [node, "--input-type=module", "-e",
         "import {SCENARIOS} from './scenarios.mjs'; "
         "console.log(JSON.stringify(Object.fromEntries(Object.entries(SCENARIOS).map(([k, v]) => [k, v.describe]))))"],
        cwd=GEN, check=True, capture_output=True, text=True).stdout)
    readme(scenarios, manifest)
    print(f"{len(scenarios)} conforming and {len(manifest)} violating transcripts", file=sys.stderr)
    return 0


def readme(scenarios: dict, manifest: dict) -> None:
    lines = [
        "# The conformance corpus",
        "",
        "<!-- Written by `python tests/corpus/regenerate.py`; do not edit by hand. -->",
        "",
        "Transcripts of an ACP v2 agent and clients written on the official TypeScript SDK",
        "(`@agentclientprotocol/sdk@2.4.0`, its experimental v2 `agent()`/`client()` apps), joined",
        "by in-memory NDJSON streams; a tap records each line as the agent reads or writes it",
        "(`gen/harness.mjs`), a relay rewrites request ids so the SDK agent answers string,",
        "negative and huge (> 2^53) ids. `gen/agent.mjs` is the agent, `gen/scenarios.mjs` the",
        "clients. `tests/test_corpus.py` checks every transcript offline.",
        "",
        "Regenerate (node >= 20 and npm; the tests need neither):",
        "",
        "```sh",
        "python tests/corpus/regenerate.py",
        "```",
        "",
        f"## conforming/ ({len(scenarios)}): every rule holds, each message valid against the 2.4.0 schema",
        "",
        "| transcript | lines | what it covers |",
        "|---|---|---|",
    ]
    for name, text in scenarios.items():
        n = len((HERE / "conforming" / f"{name}.jsonl").read_text().splitlines())
        lines.append(f"| `{name}` | {n} | {text} |")
    lines += [
        "",
        f"## violating/ ({len(manifest)}): one deliberate mutation of a conforming transcript each",
        "",
        "`violating/manifest.json` names the rule each breaks and the line of its first violation",
        "(computed from the edit in `mutations.py`, not by running the checker).",
        "",
        "| transcript | from | rule | first violation | mutation |",
        "|---|---|---|---|---|",
    ]
    for name, m in manifest.items():
        note = " (with the schema)" if m["needs_schema"] else ""
        lines.append(f"| `{name}` | `{m['source']}` | `{m['rule']}` | line {m['line']}{note} | {m['description']} |")
    (HERE / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
