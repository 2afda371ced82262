"""Record the published agents under `acp-lifecycle probe`: the corpus of tests/agents/.

    python tests/agents/regenerate.py [--cache DIR] [--agent NAME ...] [--scenario NAME ...]

Installs the agent of each shipped profile (sims/probe/profiles/: its npm
package at the version it names) into a cache outside the repository (default
``$XDG_CACHE_HOME/acp-lifecycle/agents``, else ``~/.cache/...``;
``npm install --prefix DIR --ignore-scripts --no-audit --no-fund PACKAGE@VERSION``),
runs every probe scenario on it against the scripted provider, directly and
through ``bridge serve`` (``--live``), and writes the raw ACP v1 transcripts to
``tests/agents/<agent>/<scenario>.jsonl``, what the v2 client saw through the
live bridge to ``<scenario>.live.jsonl``, and what was run (package, version
installed, command, API, each scenario's outcome, time, trace --model verdict
and live outcome) to ``tests/agents/versions.json``. With ``--scenario`` only those scenarios
are run again, and their files and entries replaced (each with the date it was recorded); the
rest stays as it was. Needs node >= 20, npm and
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


def profiles() -> dict:
    sys.path.insert(0, str(HERE.parents[1]))
    from acp_lifecycle.sims.probe.profile import shipped

    return shipped()


#: the agents recorded: every shipped profile
AGENTS = sorted(profiles())


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "acp-lifecycle" / "agents"


def package_dir(cache: Path, name: str) -> Path:
    return cache / name / "node_modules" / profiles()[name].package


def installed_version(cache: Path, name: str) -> str | None:
    try:
        return json.loads((package_dir(cache, name) / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def command(cache: Path, name: str) -> list[str]:
    return profiles()[name].command(cache / name / "node_modules")


def install(cache: Path, name: str) -> str:
    p = profiles()[name]
    if installed_version(cache, name) != p.version:
        (cache / name).mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", str(cache / name), "--ignore-scripts", "--no-audit", "--no-fund",
                        f"{p.package}@{p.version}"], check=True)
    got = installed_version(cache, name)
    if got is None:
        raise SystemExit(f"regenerate: {p.package}@{p.version} did not install into {cache / name}")
    return got


def record(cache: Path, name: str, timeout: float, live: bool, scenarios: list[str] | None = None,
           before: dict | None = None) -> dict:
    """Run the scenarios (every one, or only ``scenarios``, merged into ``before``: the agent's entry
    as it was) and write their transcripts; the agent's entry of versions.json."""
    from acp_lifecycle.sims.probe import SCENARIOS, load_validators, probe

    out = HERE / name
    scratch = out.with_name(f".{name}.tmp")
    shutil.rmtree(scratch, ignore_errors=True)
    started = time.monotonic()

    def progress(r):
        also = f"; live: {r.live.status} ({r.live.seconds:.1f} s)" if r.live is not None else ""
        print(f"  {name} {r.scenario}: {r.status} ({r.seconds:.1f} s){also}", flush=True)

    results = probe(command(cache, name), profiles()[name], scenarios or list(SCENARIOS), scratch, timeout=timeout,
                    validators=load_validators(), progress=progress, live=live)
    if scenarios is None:
        shutil.rmtree(out, ignore_errors=True)
    out.mkdir(exist_ok=True)
    for r in results:
        for old in (out / f"{r.scenario}.jsonl", out / f"{r.scenario}.live.jsonl"):
            old.unlink(missing_ok=True)
        for src in (scratch / f"{r.scenario}.jsonl", scratch / f"{r.scenario}.live.jsonl"):
            if src.is_file():
                shutil.copyfile(src, out / src.name)
    shutil.rmtree(scratch, ignore_errors=True)
    agent = next((r.agent for r in results if r.agent), {})
    seconds = round(time.monotonic() - started, 1)
    if scenarios is not None and before:
        day = time.strftime("%Y-%m-%d", time.gmtime())
        merged = dict(before["scenarios"], **{r.scenario: dict(_scenario(r), recorded=day) for r in results})
        return {"agent_info": before.get("agent_info") or agent, "auth": before.get("auth"),
                "seconds": round(before.get("seconds", 0) + seconds, 1),
                "scenarios": {n: merged[n] for n in SCENARIOS if n in merged}}
    return {"agent_info": agent, "auth": next((r.auth for r in results if r.auth), None), "seconds": seconds,
            "scenarios": {r.scenario: _scenario(r) for r in results}}


def _scenario(r) -> dict:
    out = {"status": r.status, "note": r.note, "seconds": round(r.seconds, 1), "provider_requests": len(r.requests),
           "model": (r.model or {}).get("verdict")}
    if r.live is not None:
        out["live"] = {"status": r.live.status, "note": r.live.note, "seconds": round(r.live.seconds, 1),
                       "model": (r.live.model or {}).get("verdict")}
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache", type=Path, default=default_cache(), help="where the agents are installed")
    p.add_argument("--agent", nargs="+", choices=AGENTS, default=AGENTS)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per scenario")
    p.add_argument("--no-live", action="store_true", help="skip the runs through bridge serve")
    p.add_argument("--scenario", nargs="+", metavar="NAME",
                   help="run only these scenarios again; the others' files and entries stay as they are")
    args = p.parse_args(argv)
    if shutil.which("node") is None or shutil.which("npm") is None:
        print("regenerate: node and npm are needed", file=sys.stderr)
        return 2
    versions_path = HERE / "versions.json"
    versions = json.loads(versions_path.read_text()) if versions_path.is_file() else {}
    for name in args.agent:
        version = install(args.cache, name)
        print(f"{name} {version}", flush=True)
        prof = profiles()[name]
        node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
        before = versions.get(name) if args.scenario else None
        if args.scenario and (before is None or before.get("version") != version):
            print(f"regenerate: {name} {version} has no recorded corpus to add scenarios to: run it whole",
                  file=sys.stderr)
            return 2
        entry = {"package": prof.package, "version": version, "api": prof.api,
                 "command": [str(Path(a).relative_to(args.cache / name)) if a.startswith(str(args.cache)) else a
                             for a in command(args.cache, name)],
                 "node": node, "recorded": time.strftime("%Y-%m-%d", time.gmtime())}
        if before is not None:
            entry.update(node=before["node"], recorded=before["recorded"])
        versions[name] = {**entry, **record(args.cache, name, args.timeout, not args.no_live, args.scenario, before)}
        versions_path.write_text(json.dumps(dict(sorted(versions.items())), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
