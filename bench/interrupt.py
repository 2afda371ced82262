"""Benchmark: how fast `acp-lifecycle check` stops on Ctrl-C, in every phase.

Starts `check --config CONFIG` in a fresh process group (as a terminal runs it),
sends SIGINT to the whole group at several moments (as Ctrl-C does: every
worker process gets it too), and prints, for each moment and each way of
running (one process, `--workers 2`, `--dask` when dask is installed), the
seconds from the signal to the exit of the last process of the group, the exit
status, and what standard error said (it must be one line, no traceback).

    python bench/interrupt.py                      # wide, every mode, moments 0.3 .. 12 s
    python bench/interrupt.py --config default --at 0.5 --at 1
    python bench/interrupt.py --json

The machine is shared: a moment is approximate (what phase the run is in
varies with the load); the seconds to stop are what matter.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

MODES = {"single": ["--workers", "1"], "workers2": ["--workers", "2"], "dask": ["--dask", "--workers", "2"]}


def _has_dask() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover
        return True
    # zombies of the group count as gone
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def one(config: str, mode: str, at: float, timeout: float = 60.0) -> dict:
    cmd = [sys.executable, "-m", "acp_lifecycle.cli", "check", "--config", config, "--no-traces", *MODES[mode]]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    time.sleep(at)
    if p.poll() is not None:
        p.stderr.read()
        return {"mode": mode, "at": at, "stop_s": None, "rc": p.returncode, "stderr": "(ended before the signal)"}
    t0 = time.monotonic()
    os.killpg(p.pid, signal.SIGINT)
    try:
        err = p.communicate(timeout=timeout)[1].decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        err = p.communicate()[1].decode(errors="replace")
        return {"mode": mode, "at": at, "stop_s": None, "rc": "killed", "stderr": err[-200:]}
    main_s = time.monotonic() - t0
    while _group_alive(p.pid) and time.monotonic() - t0 < timeout:
        time.sleep(0.02)
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith("acp-lifecycle check: ")]  # progress lines
    return {"mode": mode, "at": at, "stop_s": round(time.monotonic() - t0, 2), "main_s": round(main_s, 2),
            "rc": p.returncode, "lines": len(lines), "traceback": "Traceback" in err,
            "stderr": lines[-1] if lines else ""}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="wide")
    ap.add_argument("--mode", action="append", choices=tuple(MODES))
    ap.add_argument("--at", action="append", type=float, help="seconds after the start to send SIGINT")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    modes = a.mode or [m for m in MODES if m != "dask" or _has_dask()]
    moments = a.at or [0.3, 1.0, 2.0, 4.0, 8.0, 12.0]
    if not a.json:
        print(f"load average {os.getloadavg()[0]:.1f}; check --config {a.config}")
        print(f"{'mode':<9} {'at s':>5} {'stop s':>7} {'rc':>4} {'lines':>5}  stderr")
    worst = 0.0
    for mode in modes:
        for at in moments:
            r = one(a.config, mode, at)
            worst = max(worst, r["stop_s"] or 0.0)
            if a.json:
                print(json.dumps({"config": a.config, **r}), flush=True)
            else:
                stop = "-" if r["stop_s"] is None else f"{r['stop_s']:.2f}"
                tb = " TRACEBACK" if r.get("traceback") else ""
                print(f"{mode:<9} {at:>5.1f} {stop:>7} {r['rc']!s:>4} {r.get('lines', 0):>5}  {r['stderr'][:70]}{tb}",
                      flush=True)
    if not a.json:
        print(f"slowest stop: {worst:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
