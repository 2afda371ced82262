"""Probe every installed agent of a shipped profile, live too, and write each one's conformance report.

    python bench/probe_agents.py [--cache DIR] [--agent NAME ...] [--out DIR] [--no-live]

For each shipped profile (sims/probe/profiles/) whose npm package is installed in the cache
(``python tests/agents/regenerate.py`` installs them; default ``~/.cache/acp-lifecycle/agents``),
one agent at a time: ``acp-lifecycle probe --profile NAME --live --report OUT/NAME.md -- COMMAND``,
its transcripts in ``OUT/NAME/``. Prints one row per agent: the version, the scenarios that ran,
the MUSTs broken, the runs the model does not explain, the live runs that ran, and the seconds.
Everything stays on 127.0.0.1 and each scenario is bounded by the probe's timeout; the whole run
takes about 35 minutes for the five shipped agents on a 2-core machine (half without --live).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _regenerate():
    spec = importlib.util.spec_from_file_location("agents_regenerate", ROOT / "tests" / "agents" / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    regen = _regenerate()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache", type=Path, default=regen.default_cache())
    p.add_argument("--agent", nargs="+", choices=regen.AGENTS, default=regen.AGENTS)
    p.add_argument("--out", type=Path, default=Path("probe-reports"))
    p.add_argument("--no-live", action="store_true")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"{'agent':18} {'version':9} {'ran':>4} {'MUST':>5} {'unexplained':>11} {'live ran':>8} {'s':>6}")
    for name in args.agent:
        version = regen.installed_version(args.cache, name)
        if version is None:
            print(f"{name:18} not installed in {args.cache}")
            continue
        argv = [sys.executable, "-m", "acp_lifecycle.cli", "probe", "--json", "--force", "--profile", name,
                "--out", str(args.out / name), "--report", str(args.out / f"{name}.md")]
        argv += [] if args.no_live else ["--live"]
        start = time.monotonic()
        done = subprocess.run(argv + ["--", *regen.command(args.cache, name)], capture_output=True, text=True)
        runs = [json.loads(x) for x in done.stdout.splitlines() if x.startswith('{"kind": "run"')]
        lives = [r["live"] for r in runs if r.get("live")]
        unexplained = sum(r.get("model") == "unexplained" for r in runs + lives)
        print(f"{name:18} {version:9} {sum(r['status'] == 'ran' for r in runs):>4} "
              f"{sum(r['violations'] for r in runs):>5} {unexplained:>11} "
              f"{sum(r['status'] == 'ran' for r in lives):>8} {time.monotonic() - start:>6.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
