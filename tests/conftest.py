"""The test session is hermetic: no network, nothing written outside the checkout and the temp directory.

Before collection (some test modules look for the schema at import), the
official schemas' cache (``$XDG_CACHE_HOME/acp-lifecycle``) is pointed at a
temporary directory for the session and seeded from the copies committed in
``tests/schema/sdk-2.4.0/`` (``schema/v1`` and ``schema/v2/schema.json`` of
``@agentclientprotocol/sdk@2.4.0``, Apache-2.0, its LICENSE beside them). Each
is checked against the integrity pinned in ``sims/wire/schema_source.py``
first: a committed copy that is not byte for byte the official file stops the
session. So the tests never run ``npm pack`` against the registry, never read
or write the user's cache, and pass with the network off.

The rest of the session's writes go to the same temporary directory: ``HOME``
and the XDG directories are there (pip, run by tests/test_packaging.py, asks
rustup's ``rustc`` for its version, and rustup writes ``~/.rustup``),
matplotlib's configuration and font cache (``MPLCONFIGDIR``) and npm's cache
and logs (``npm_config_cache``; only tests/test_schema.py runs npm, against a
registry of its own on 127.0.0.1). ``.ci/offline`` runs the suite with the
network off and a fresh ``HOME`` and fails if anything appears there.
``$ACP_LIFECYCLE_SCHEMA`` (a path to the pinned v2 schema.json) is still honoured.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest

from acp_lifecycle.sims.wire import schema

COMMITTED = Path(__file__).resolve().parent / "schema" / f"sdk-{schema.VERSION}"
_ENV = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "MPLCONFIGDIR", "npm_config_cache",
        "npm_config_update_notifier")
_SAVED: dict = {}


def committed_schema(version: str = "v2") -> Path:
    """The committed copy of the pinned schema ``version`` (checked against the pin)."""
    path = COMMITTED / schema.cache_path(COMMITTED, version).name
    problem = schema.cache_problem(path, version)
    if problem:
        raise pytest.UsageError(f"tests/schema: {path.name} {problem}; copy it again from `acp-lifecycle schema pull`")
    return path


def await_sigint_handler(pid: int, timeout: float = 10.0) -> None:
    """Wait until process ``pid`` catches SIGINT (Linux: ``SigCgt`` in /proc/PID/status). Until the
    interpreter has put in its handler, a Ctrl-C ends any Python program by the signal, before a
    line of it runs: a test of a command's own Ctrl-C counts its delays from here."""
    status = Path(f"/proc/{pid}/status")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            caught = next(ln for ln in status.read_text().splitlines() if ln.startswith("SigCgt:"))
        except (OSError, StopIteration):  # not Linux: no wait
            return
        if int(caught.split()[1], 16) & (1 << (signal.SIGINT - 1)):
            return
        time.sleep(0.005)


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` now (Linux: /proc/PID/task/*/children)."""
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                kids = {int(k) for k in (task / "children").read_text().split()}
            except OSError:
                continue
            todo.extend(kids - found)
            found |= kids
    return found


def proc_status(pid: int, field: str) -> str:
    """The first word of ``field`` in /proc/PID/status ("" when the process or the field is gone)."""
    try:
        return next(ln.split()[1] for ln in Path(f"/proc/{pid}/status").read_text().splitlines()
                    if ln.startswith(field + ":"))
    except (OSError, StopIteration):
        return ""


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    return proc_status(pid, "State") not in ("", "Z")


#: ``python -c STARTED_MAIN ARGS``: the command line's ``main``, once the interpreter has started
#: (site imported) and said so by creating the file ``$ACP_LIFECYCLE_TEST_STARTED`` (``await_started``).
STARTED_MAIN = ("import os, sys; open(os.environ['ACP_LIFECYCLE_TEST_STARTED'], 'x').close(); "
                "from acp_lifecycle.cli import main; sys.exit(main())")


def await_started(marker: Path, proc, timeout: float = 60.0) -> None:
    """Wait until the child started with ``STARTED_MAIN`` runs its first line: the interpreter's own
    start-up (``site``, which a Ctrl-C ends with "Fatal Python error: init_import_site" and exit 1)
    is over, however loaded the machine. A test of a command's Ctrl-C counts its delays from here."""
    deadline = time.monotonic() + timeout
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    await_sigint_handler(proc.pid, timeout)


def pytest_configure(config):
    if "tmp" in _SAVED:  # a nested session: already done
        return
    tmp = Path(tempfile.mkdtemp(prefix="acp-lifecycle-test-"))
    _SAVED["tmp"] = tmp
    _SAVED["env"] = {name: os.environ.get(name) for name in _ENV}
    (tmp / "home").mkdir()
    os.environ["HOME"] = str(tmp / "home")  # what a tool writes under ~ (pip runs rustup's rustc, which writes ~/.rustup)
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
    os.environ["XDG_CONFIG_HOME"] = str(tmp / "home" / ".config")
    os.environ["XDG_DATA_HOME"] = str(tmp / "home" / ".local" / "share")
    os.environ["MPLCONFIGDIR"] = str(tmp / "matplotlib")
    os.environ["npm_config_cache"] = str(tmp / "npm")
    os.environ["npm_config_update_notifier"] = "false"
    for version in schema.VERSIONS:
        target = schema.cache_path(version=version)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(committed_schema(version), target)


def pytest_unconfigure(config):
    tmp = _SAVED.pop("tmp", None)
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
    for name, old in _SAVED.pop("env", {}).items():
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old
