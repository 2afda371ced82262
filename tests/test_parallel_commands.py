"""The reviewer's commands on both cores: `variants`, `regress`, `review` and `diff` run their independent
explorations (variants' members, a suite's members, both rule sets' checks) side by side in forked
processes. With workers they print what they print without (the times aside), the pool really ran, and
Ctrl-C (or SIGTERM) ends the command and every process of its pool: one line, exit 130 (143)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import alive
from conftest import await_sigint_handler
from conftest import descendants
from conftest import proc_status

from acp_lifecycle.sims.cli import main
from acp_lifecycle.sims.configs import SUITES, get_suite

START = "import sys; from acp_lifecycle.cli import main; sys.exit(main())"


@pytest.fixture
def pools(monkeypatch) -> list[int]:
    """How many tasks went to a process pool (the parallel path ran, not its serial fallback)."""
    import concurrent.futures

    submitted: list[int] = []

    class Counting(concurrent.futures.ProcessPoolExecutor):
        def submit(self, *a, **k):
            submitted.append(1)
            return super().submit(*a, **k)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Counting)
    return submitted


@pytest.fixture
def duo(monkeypatch) -> str:
    """A suite of the two smallest members of `default` (seconds for a review), as a named configuration."""
    default = get_suite("default")
    members = tuple(m for m in default.members if m.name in ("restart", "commands"))
    monkeypatch.setitem(SUITES, "duo", replace(default, name="duo", members=members))
    return "duo"


def _run(args: list[str], capsys) -> tuple[int, str]:
    code = main(args)
    return code, capsys.readouterr().out


def _timeless(x):
    """A command's JSON without its measured times (seconds differ from run to run)."""
    if isinstance(x, dict):
        return {k: _timeless(v) for k, v in x.items() if not k.endswith("seconds") and k != "wall"}
    if isinstance(x, list):
        return [_timeless(v) for v in x]
    return x


def test_variants_with_workers_print_the_serial_matrix(capsys, pools):
    code, serial = _run(["variants", "--config", "tiny", "--json", "--workers", "1"], capsys)
    assert not pools
    assert _run(["variants", "--config", "tiny", "--json", "--workers", "2"], capsys) == (code, serial)
    assert len(pools) >= len(json.loads(serial)["variants"])  # every variant's member went to the pool


def test_regress_with_workers_matches_the_matrix_checked_serially(capsys, tmp_path, pools):
    from acp_lifecycle.sims.variants import matrix, to_json

    agreed = tmp_path / "verdicts.json"
    agreed.write_text(json.dumps(to_json(matrix("tiny", workers=1)), indent=2) + "\n")
    assert not pools
    code, out = _run(["regress", "--verdicts", str(agreed), "--workers", "2", "--json"], capsys)
    assert code == 0 and json.loads(out)["differences"] == [] and pools, out


def test_diff_with_workers_prints_the_serial_diff(capsys, duo, pools):
    args = ["diff", "rfd", "rfd+2.4.0", "--config", duo, "--json"]
    code, serial = _run(args + ["--workers", "1"], capsys)
    assert not pools and code == 1
    code2, parallel = _run(args + ["--workers", "2"], capsys)
    assert code2 == code and _timeless(json.loads(parallel)) == _timeless(json.loads(serial))
    assert len(pools) == 2  # one task a member


def test_an_addition_diffed_with_workers_is_the_serial_one(capsys, duo, pools):
    # session-inject composes a proposal with rfd+2.4.0: the addition's path (checks, restricted diff, flags)
    args = ["diff", "rfd+2.4.0", "session-inject", "--config", duo, "--json", "--no-robust"]
    code, serial = _run(args + ["--workers", "1"], capsys)
    assert not pools
    code2, parallel = _run(args + ["--workers", "2"], capsys)
    assert code2 == code and _timeless(json.loads(parallel)) == _timeless(json.loads(serial)) and pools


def test_review_with_workers_writes_the_serial_document(capsys, duo, tmp_path, pools):
    serial, parallel = tmp_path / "serial.md", tmp_path / "parallel.md"
    code = main(["review", "rfd", "rfd+2.4.0", "--config", duo, "--out", str(serial), "--workers", "1"])
    assert not pools and code == 1
    assert main(["review", "rfd", "rfd+2.4.0", "--config", duo, "--out", str(parallel), "--workers", "2"]) == code
    assert parallel.read_text() == serial.read_text()
    # the members' diffs (2) and both rule sets' checks of every member (4) went to pools
    assert len(pools) == 6


def test_a_part_that_cannot_go_to_a_worker_runs_here(pools):
    from acp_lifecycle.sims.search.check import pool_map

    offset = 10
    done: list[int] = []
    assert pool_map(lambda x: x + offset, [1, 2, 3], 2, done.append) == [11, 12, 13]  # a closure: not picklable
    assert done == [0, 1, 2] and not pools


# ---------------------------------------------------------------------------
# Ctrl-C and SIGTERM: the command and its pool end


def _workers_ready(pid: int, workers: int) -> set[int]:
    """The pool's processes once ``workers`` of them run with Ctrl-C left to the coordinator (SIGINT
    ignored: their initializer has run), waited for from their state, not for a time."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        kids = descendants(pid)
        ready = {k for k in kids if int(proc_status(k, "SigIgn") or "0", 16) & (1 << (signal.SIGINT - 1))}
        if len(ready) >= workers:
            return kids
        time.sleep(0.05)
    pytest.fail(f"no {workers} workers within 120 s")  # pragma: no cover - only when the test fails


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
@pytest.mark.parametrize("args", [
    ["variants", "--config", "wide"],
    ["review", "rfd", "rfd+2.4.0", "--config", "wide"],
], ids=["variants", "review"])
def test_ctrl_c_or_sigterm_ends_the_command_and_its_pool(args, how, tmp_path):
    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc")  # pragma: no cover
    err = (tmp_path / "stderr").open("w+b")  # a file: a worker left running would hold a pipe open
    # Under a shell job SIGINT may be ignored here and a child would inherit that: start it as from a terminal.
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen([sys.executable, "-c", START, *args, "--workers", "2"], stdout=subprocess.DEVNULL,
                                stderr=err, start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, saved)
    kids: set[int] = set()
    try:
        await_sigint_handler(proc.pid)
        kids = _workers_ready(proc.pid, 2)  # `wide` takes minutes: the pool is at work
        if how == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: every process of the group
        else:
            proc.send_signal(signal.SIGTERM)  # the command alone, as a supervisor does
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while any(alive(k) for k in kids) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = {k for k in kids if alive(k)}
        err.seek(0)
        lines = [ln for ln in err.read().decode().splitlines() if ln.strip()]
        want = (130, "interrupted") if how == "ctrl-c" else (143, "terminated")
        assert (proc.returncode, lines, left) == (want[0], [f"acp-lifecycle: {want[1]}"], set())
    finally:
        if proc.poll() is None:  # pragma: no cover - only when the test fails
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for k in kids:
            if alive(k):  # pragma: no cover - only when the test fails
                os.kill(k, signal.SIGKILL)
        err.close()
