"""Record the published agents under `acp-lifecycle probe`: the corpus of tests/agents/.

    python tests/agents/regenerate.py [--cache DIR] [--agent NAME ...]

Installs each agent of AGENTS with npm into a cache outside the repository
(default ``$XDG_CACHE_HOME/acp-lifecycle/agents``, else ``~/.cache/...``;
``npm install --prefix DIR --ignore-scripts --no-audit --no-fund PACKAGE@VERSION``),
runs every probe scenario on it against the scripted provider, and writes the
raw ACP v1 transcripts to ``tests/agents/<agent>/<scenario>.jsonl`` and what
was run (package, version installed, command, provider, each scenario's
outcome and time) to ``tests/agents/versions.json``. Needs node >= 20, npm and
the npm registry; the tests read only the committed files
(tests/test_agents_corpus.py), and a slow-marked test runs the probe live when
the agents are installed in the cache.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: name -> (npm package, version, entry point inside the package, extra arguments, provider)
AGENTS = {
    "claude-agent-acp": ("@zed-industries/claude-agent-acp", "0.23.1", "dist/index.js", [], "anthropic"),
    "gemini-cli": ("@google/gemini-cli", "0.61.0", "bundle/gemini.js", ["--acp"], "gemini"),
    "qwen-code": ("@qwen-code/qwen-code", "0.15.10", "cli.js", ["--acp"], "openai"),
}


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "acp-lifecycle" / "agents"


def package_dir(cache: Path, name: str) -> Path:
    return cache / name / "node_modules" / AGENTS[name][0]


def installed_version(cache: Path, name: str) -> str | None:
    try:
        return json.loads((package_dir(cache, name) / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def command(cache: Path, name: str) -> list[str]:
    _, _, entry, extra, _ = AGENTS[name]
    return ["node", str(package_dir(cache, name) / entry), *extra]


def install(cache: Path, name: str) -> str:
    package, version, *_ = AGENTS[name]
    if installed_version(cache, name) != version:
        (cache / name).mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", str(cache / name), "--ignore-scripts", "--no-audit", "--no-fund",
                        f"{package}@{version}"], check=True)
    got = installed_version(cache, name)
    if got is None:
        raise SystemExit(f"regenerate: {package}@{version} did not install into {cache / name}")
    return got


def record(cache: Path, name: str, timeout: float) -> dict:
    sys.path.insert(0, str(HERE.parents[1]))
    from acp_lifecycle.sims.probe import SCENARIOS, load_validators, probe

    out = HERE / name
    scratch = out.with_name(f".{name}.tmp")
    shutil.rmtree(scratch, ignore_errors=True)
    started = time.monotonic()
    results = probe(command(cache, name), AGENTS[name][4], list(SCENARIOS), scratch, timeout=timeout,
                    validators=load_validators(),
                    progress=lambda r: print(f"  {name} {r.scenario}: {r.status} ({r.seconds:.1f} s)", flush=True))
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    for r in results:
        src = scratch / f"{r.scenario}.jsonl"
        if src.is_file():
            shutil.copyfile(src, out / src.name)
    shutil.rmtree(scratch, ignore_errors=True)
    return {"seconds": round(time.monotonic() - started, 1),
            "scenarios": {r.scenario: {"status": r.status, "note": r.note, "seconds": round(r.seconds, 1),
                                       "provider_requests": len(r.requests)} for r in results}}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache", type=Path, default=default_cache(), help="where the agents are installed")
    p.add_argument("--agent", nargs="+", choices=list(AGENTS), default=list(AGENTS))
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per scenario")
    args = p.parse_args(argv)
    if shutil.which("node") is None or shutil.which("npm") is None:
        print("regenerate: node and npm are needed", file=sys.stderr)
        return 2
    versions_path = HERE / "versions.json"
    versions = json.loads(versions_path.read_text()) if versions_path.is_file() else {}
    for name in args.agent:
        version = install(args.cache, name)
        print(f"{name} {version}", flush=True)
        package, _, entry, extra, provider = AGENTS[name]
        node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
        versions[name] = {"package": package, "version": version, "entry": entry, "args": extra, "provider": provider,
                          "node": node, "recorded": time.strftime("%Y-%m-%d", time.gmtime()),
                          **record(args.cache, name, args.timeout)}
        versions_path.write_text(json.dumps(versions, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
