"""Ctrl-C in `acp-lifecycle check` as a user gives it: the whole process group gets SIGINT, in the
middle of a search of some size; one line, exit status 130, at once (under a second of CPU after it)."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import alive
from conftest import await_sigint_handler
from conftest import descendants

START = "import sys; from acp_lifecycle.cli import main; sys.exit(main())"


def _cpu_seconds(pid: int) -> float:
    """The CPU time process ``pid`` has used so far (utime + stime of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _interrupt(args: list[str], after: float) -> tuple[float, float, int, list[str]]:
    """(wall seconds, CPU seconds of the process from SIGINT to its exit, exit status, stderr lines). The CPU
    time is what a loaded machine does not stretch: freeing a large search in the handler shows there."""
    # Under a shell job SIGINT may be ignored here and a child would inherit that: start it as from a terminal.
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen([sys.executable, "-c", START, *args], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, saved)
    err: list[bytes] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)
    reader.start()
    try:
        await_sigint_handler(proc.pid)
        time.sleep(after)
        if proc.poll() is not None:
            pytest.skip("the search ended before the interrupt")  # pragma: no cover - a very fast machine
        cpu0 = _cpu_seconds(proc.pid)
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: every process of the group
        deadline = t0 + 20
        while (got := os.wait4(proc.pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.005)
        took = time.monotonic() - t0
        assert got[0] == proc.pid, "still running 20 s after Ctrl-C"
        proc.returncode = os.waitstatus_to_exitcode(got[1])
        cpu = got[2].ru_utime + got[2].ru_stime - cpu0
    finally:
        if proc.returncode is None:  # pragma: no cover - only when the test fails
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(20)
    lines = [ln for ln in b"".join(err).decode().splitlines()
             if ln.strip() and not ln.startswith("acp-lifecycle check: ")]
    return took, cpu, proc.returncode, lines


#: Ctrl-C ends the search "at once": at most this much CPU in the process after it (freeing a large
#: search took 1.3 to 1.9 s before the handler skipped it), and this much wall time however busy the
#: machine (a wait on a worker's or a cluster's timeout would pass it)
AT_ONCE_CPU, AT_ONCE_WALL = 1.0, 5.0


def test_ctrl_c_in_a_large_search_stops_it_at_once():
    # wide-lost-response holds a few hundred MB after some seconds: freeing it took 1.3 to 1.9 s
    took, cpu, rc, lines = _interrupt(["check", "--config", "wide-lost-response", "--workers", "1"], 15.0)
    assert (rc, lines) == (130, ["acp-lifecycle: interrupted"])
    assert cpu < AT_ONCE_CPU and took < AT_ONCE_WALL, (cpu, took)


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="dask is not installed")
def test_ctrl_c_on_a_local_dask_cluster_says_one_line():
    # the scheduler, in the coordinating process, logged the workers' end (CommClosedError) as they died
    took, _, rc, lines = _interrupt(["check", "--config", "wide-lost-response", "--dask", "--workers", "2"], 8.0)
    assert (rc, lines) == (130, ["acp-lifecycle: interrupted"])
    # the process's CPU counts its workers' whole lives as it reaps them: the wall time alone says "at once"
    assert took < AT_ONCE_WALL, took


def _terminate(args: list[str], workers: int, tmp_path: Path) -> tuple[int, set[int], str]:
    """Start ``args`` in a session of its own, wait until it has ``workers`` processes below it,
    SIGTERM the command alone (not its group: as a supervisor or ``kill PID`` does); its status,
    the processes it had left alive, its stderr (a file: a worker left running holds a pipe open)."""
    err = (tmp_path / "stderr").open("w+b")
    proc = subprocess.Popen([sys.executable, "-c", START, *args], stdout=subprocess.DEVNULL,
                            stderr=err, start_new_session=True)
    try:
        deadline, kids = time.monotonic() + 120, set()
        while len(kids) < workers and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            kids = descendants(proc.pid)
        if proc.poll() is not None:
            pytest.skip("the search ended before its workers started")  # pragma: no cover - a very fast machine
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while any(alive(k) for k in kids) and time.monotonic() < deadline:
            time.sleep(0.1)
        err.seek(0)
        return proc.returncode, {k for k in kids if alive(k)}, err.read().decode()
    finally:
        if proc.poll() is None:  # pragma: no cover - only when the test fails
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        err.close()


def _ended_cleanly(code: int, left: set[int], err: str) -> None:
    """Assert that SIGTERM ended the command with 143, every process it started, and no traceback;
    kill what it left (a failed test leaves nothing running)."""
    try:
        assert left == set() and code == 143 and "Traceback" not in err, err
    finally:
        for k in left:
            os.kill(k, signal.SIGKILL)


def test_sigterm_to_a_parallel_check_ends_its_workers(tmp_path):
    code, left, err = _terminate(["check", "--config", "wide", "--workers", "2"], 2, tmp_path)
    _ended_cleanly(code, left, err)
    assert err.splitlines()[-1] == "acp-lifecycle: terminated"


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="dask is not installed")
def test_sigterm_to_a_check_on_a_local_dask_cluster_ends_the_cluster(tmp_path):
    _ended_cleanly(*_terminate(["check", "--config", "wide", "--dask", "--workers", "2"], 2, tmp_path))


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="dask is not installed")
def test_sigterm_while_the_dask_cluster_starts_prints_no_traceback(tmp_path):
    # SIGTERM as soon as the first process appears below the command: a nanny or a worker in the middle of
    # being spawned (a CI run printed multiprocessing's "EOFError: Ran out of input" from one whose parent
    # was killed before it had read its start-up data)
    _ended_cleanly(*_terminate(["check", "--config", "wide", "--dask", "--workers", "2"], 1, tmp_path))
