"""Ctrl-C in `acp-lifecycle check` as a user gives it: the whole process group gets SIGINT, in the
middle of a search of some size; one line, exit status 130, within a second."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import await_sigint_handler

START = "import sys; from acp_lifecycle.cli import main; sys.exit(main())"


def _interrupt(args: list[str], after: float) -> tuple[float, int, list[str]]:
    # Under a shell job SIGINT may be ignored here and a child would inherit that: start it as from a terminal.
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen([sys.executable, "-c", START, *args], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, saved)
    try:
        await_sigint_handler(proc.pid)
        time.sleep(after)
        if proc.poll() is not None:
            pytest.skip("the search ended before the interrupt")  # pragma: no cover - a very fast machine
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: every process of the group
        _, err = proc.communicate(timeout=20)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:  # pragma: no cover - only when the test fails
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    lines = [ln for ln in err.decode().splitlines() if ln.strip() and not ln.startswith("acp-lifecycle check: ")]
    return took, proc.returncode, lines


def test_ctrl_c_in_a_large_search_stops_it_at_once():
    # wide-lost-response holds a few hundred MB after some seconds: freeing it took 1.3 to 1.9 s
    took, rc, lines = _interrupt(["check", "--config", "wide-lost-response", "--workers", "1"], 15.0)
    assert (rc, lines) == (130, ["acp-lifecycle: interrupted"])
    assert took < 1.0


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="dask is not installed")
def test_ctrl_c_on_a_local_dask_cluster_says_one_line():
    # the scheduler, in the coordinating process, logged the workers' end (CommClosedError) as they died
    took, rc, lines = _interrupt(["check", "--config", "wide-lost-response", "--dask", "--workers", "2"], 8.0)
    assert (rc, lines) == (130, ["acp-lifecycle: interrupted"])
    assert took < 1.0
