"""Benchmark: the parallel search beside CPU-bound hogs (a shared machine, reproducibly).

Starts ``--hog N`` processes that spin (``while 1: pass``), runs
``acp-lifecycle check --config CONFIG --workers W`` for every W beside them, each in a fresh
process, and kills the hogs afterwards (always: on an error or Ctrl-C too). For every run it
prints the wall seconds, the CPU seconds of the search's processes (``os.wait4``: the process
and the workers it waited for), the CPU seconds the hogs got meanwhile, and the load average
(``/proc/loadavg``) before the run. A row's ``speed-up`` is the wall of ``--workers 1`` beside
the same hogs over its own.

    python bench/under_load.py                                  # wide-lost-response, 0 and 1 hog, 1 and 2 workers
    python bench/under_load.py --config wide --hog 0 --hog 1 --hog 2
    python bench/under_load.py --config wide-failures --repeat 3 --json
    python bench/under_load.py --baseline b28f470             # beside an older commit's code, interleaved

The hogs are the load. Each runs in a session of its own, as another user's work does: where
Linux groups the CPU by session (``/proc/sys/kernel/sched_autogroup_enabled``, on by default on
desktops and on this machine), a session gets its share however many processes it runs, so one
hog leaves the search one core whether it runs one worker or two. ``--same-session`` keeps
the hogs in this session instead, where the scheduler shares the CPU process by process. The
machine may be shared by other work as well: read the load average, compare rows of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HOG = "while 1: pass"


def _cpu(pid: int) -> float:
    """The CPU seconds (user + system) a running process has had."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _load() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def _autogroup() -> str:
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            return "on" if f.read().strip() == "1" else "off"
    except OSError:
        return "unknown"


def start_hogs(n: int, own_sessions: bool = True) -> list[subprocess.Popen]:
    """``n`` spinning processes, each in a session of its own (as another user's work) unless
    ``own_sessions`` is false (then in this one, beside the search)."""
    hogs = [subprocess.Popen([sys.executable, "-c", HOG], start_new_session=own_sessions) for _ in range(n)]
    time.sleep(0.5 if n else 0)  # let them reach the scheduler's view of the machine
    return hogs


def stop_hogs(hogs: list[subprocess.Popen]) -> None:
    for h in hogs:
        h.kill()
    for h in hogs:
        h.wait(timeout=10)


def run(config: str, workers: int, hogs: list[subprocess.Popen], timeout: float, extra: list[str],
        code: tuple[str, dict | None] = ("", None)) -> dict:
    """One ``check`` beside the hogs: wall, CPU, the hogs' CPU meanwhile, the exit status."""
    cmd = [sys.executable, "-c", "import sys; from acp_lifecycle.cli import main; sys.exit(main())",
           "check", "--config", config, "--workers", str(workers), "--no-traces", *extra]
    load = _load()
    hog0 = [_cpu(h.pid) for h in hogs]
    t0 = time.perf_counter()
    # not run from the checkout: ``-c`` puts the working directory first on the path, and its
    # acp_lifecycle would shadow a baseline's
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=code[1], cwd=tempfile.gettempdir())
    try:
        out, err = p.communicate(timeout=timeout)
    except BaseException:  # the timeout, Ctrl-C, a TERM: the search goes too
        p.kill()
        p.communicate()
        raise
    wall = time.perf_counter() - t0
    # the child is reaped by communicate; its rusage (with the workers it waited for) is in RUSAGE_CHILDREN
    return {"config": config, "code": code[0], "workers": workers, "hogs": len(hogs), "load": load, "wall": wall,
            "hog_cpu": sum(_cpu(h.pid) - c for h, c in zip(hogs, hog0)), "status": p.returncode,
            "summary": (out.decode().strip().splitlines() or [""])[-1][:100], "err": err.decode()[-300:]}


def measure(configs, workers, hogs_list, repeat, timeout, extra, codes=(("", None),), own_sessions=True) -> list[dict]:
    import resource

    rows = []
    for n in hogs_list:
        hogs = start_hogs(n, own_sessions)
        try:
            for _ in range(repeat):
                for config, code, w in [(c, k, w) for c in configs for k in codes for w in workers]:
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    row = run(config, w, hogs, timeout, extra, code)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    row["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                    rows.append(row)
                    _print_row(row)
        finally:
            stop_hogs(hogs)
    return rows


def _baseline(rev: str) -> tuple[str, dict]:
    """(tag, environment) running the code of commit ``rev`` (``bench.py --baseline``'s copy)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_bench", os.path.join(os.path.dirname(__file__), "bench.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    tag, _, _, env = bench._baseline(rev)
    return f"@{tag.rstrip(':')}", env


def _print_row(r: dict) -> None:
    print(f"{r['config'] + r['code']:<22} hogs {r['hogs']}  workers {r['workers']}  load {r['load']:5.2f}  "
          f"wall {r['wall']:7.2f} s  cpu {r['cpu']:7.2f} s  hogs' cpu {r['hog_cpu']:7.2f} s  "
          f"exit {r['status']}", flush=True)
    if r["status"] not in (0, 1):
        print("   ", r["err"].strip().replace("\n", "\n    "), flush=True)


def summary(rows: list[dict]) -> None:
    """Per config and hogs: each worker count's median wall, and its speed-up over one worker."""
    print("\nmedian wall (speed-up over --workers 1 beside the same hogs):")
    keys = sorted({(r["config"] + r["code"], r["hogs"]) for r in rows})
    for config, hogs in keys:
        walls = {}
        for r in rows:
            if (r["config"] + r["code"], r["hogs"]) == (config, hogs):
                walls.setdefault(r["workers"], []).append(r["wall"])
        med = {w: sorted(v)[len(v) // 2] for w, v in walls.items()}
        base = med.get(1)
        cells = [f"{w} workers {m:6.1f} s" + (f" ({base / m:.2f}x)" if base else "") for w, m in sorted(med.items())]
        print(f"  {config:<22} {hogs} hog{'s' if hogs != 1 else ' '}  " + "   ".join(cells))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", action="append",
                    help="member or configuration (repeatable; default wide-lost-response)")
    ap.add_argument("--workers", action="append", type=int, help="worker counts (repeatable; default 1 and 2)")
    ap.add_argument("--hog", action="append", type=int, help="hogs beside the search (repeatable; default 0 and 1)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds a run may take before it is killed")
    ap.add_argument("--same-session", action="store_true",
                    help="hogs in this session (Linux's autogroup then shares the CPU between them and the "
                    "search's processes one by one) instead of each in a session of its own")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--baseline", metavar="REV", help="also run the code of this commit, side by side (as bench.py)")
    ap.add_argument("extra", nargs="*", help="more options for check (after --)")
    a = ap.parse_args(argv)
    configs = a.config or ["wide-lost-response"]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a timeout's TERM: the hogs are still killed
    print(f"{os.cpu_count()} cores; load average {_load():.2f}; autogroup {_autogroup()}; "
          f"hogs in {'this session' if a.same_session else 'sessions of their own'}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    codes = [("", None)]
    if a.baseline:
        codes.append(_baseline(a.baseline))
    rows = measure(configs, a.workers or [1, 2], a.hog if a.hog is not None else [0, 1], a.repeat, a.timeout,
                   a.extra, codes, not a.same_session)
    summary(rows)
    if a.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
