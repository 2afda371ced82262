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

__all__ = ["watch", "check"]

_noted = False


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
