"""Ctrl-C that is not lost.

A KeyboardInterrupt raised while a C extension imports (numpy's ``datetime``
capsule, for one) can come out as an ImportError, which some ``try: import``
then takes for a missing module: the interrupt is gone and the search goes on.
``watch`` notes every SIGINT as well; the search calls ``check`` between levels
(and while it waits for workers) and raises KeyboardInterrupt again if one was
noted.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

__all__ = ["watch", "check", "Terminated", "terminate_raises", "in_worker"]

_noted = False


class Terminated(KeyboardInterrupt):
    """SIGTERM, as an exception: the paths that end a search's workers on Ctrl-C run for it too."""


def _raise_terminated(signum, frame):
    raise Terminated


def terminate_raises() -> None:
    """From now on SIGTERM raises ``Terminated`` in the main thread (the program's, not a test's):
    by default it ended the process at once and left its forked workers running."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_terminated)


def in_worker() -> None:
    """In a forked worker: Ctrl-C is the coordinator's to handle (it ends the workers at once),
    SIGTERM ends the worker, and so does its coordinator's end, however it comes (Linux: the
    parent-death signal, so that not even a SIGKILL of the coordinator leaves a worker running)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        import ctypes
        import os

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the coordinator was gone before the call
            os._exit(1)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def check() -> None:
    """Raise KeyboardInterrupt if a SIGINT came (and was maybe swallowed) since ``watch`` began."""
    if _noted:
        raise KeyboardInterrupt


@contextmanager
def watch():
    """Note every SIGINT meanwhile, then do what the handler before did (raise KeyboardInterrupt)."""
    global _noted
    prev = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(prev):
        yield  # not the CLI's main thread, or Ctrl-C is ignored or fatal here: nothing to add
        return

    def note(signum, frame):
        global _noted
        _noted = True
        prev(signum, frame)

    _noted = False
    signal.signal(signal.SIGINT, note)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, prev)
        _noted = False  # a search after this one (a test, a second command) starts afresh
