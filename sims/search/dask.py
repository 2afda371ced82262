"""The partitioned search on a Dask cluster (``check --dask [SCHEDULER]``).

Each shard (``shard.py``) of ``engine.py`` becomes a Dask actor, one per worker process of
the cluster; this process runs the first levels, hands each actor its part
(pickled once), and then coordinates the levels exactly as it does for local
processes: actors exchange only fingerprints (through this process), states
stay on the worker that made them. Fingerprints are portable
(``engine.portable_fingerprint``: the same on every machine), so the state
counts are the local search's.

Optional: ``pip install 'acp-lifecycle[dask]'``. On a real cluster every
worker needs the same acp-lifecycle installed (docs/performance.md).
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from contextlib import contextmanager

from acp_lifecycle.sims.errors import UsageError

__all__ = ["require_dask", "cluster", "cluster_size", "DaskShards"]


class DaskMissing(RuntimeError):
    """dask.distributed is not installed."""


def require_dask():
    """The ``distributed`` module, or a one-line error saying how to get it."""
    try:
        import distributed
    except ImportError:
        raise UsageError("--dask needs dask.distributed: pip install 'acp-lifecycle[dask]'") from None
    return distributed


@contextmanager
def cluster(address: str | None, workers: int):
    """A Dask client: on a new local cluster of ``workers`` processes, or on the scheduler at ``address``."""
    distributed = require_dask()
    if address is None:
        before = set(_descendants())
        lc = None
        try:
            with _stderr_to_devnull():
                lc = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                              dashboard_address=":0")
            with _quiet_log(), distributed.Client(lc) as client:  # the client closes before the log is restored
                yield client
        except BaseException:
            # Ctrl-C or a failure: end the processes this cluster started now
            # (a graceful close takes 1.5 s and more)
            _kill(lc, before)
            raise
        lc.close()
    else:
        try:
            client = distributed.Client(address, timeout="20s")
        except OSError as e:
                raise UsageError(f"--dask {address}: cannot reach the scheduler ({e})") from None
        with client:
            yield client


@contextmanager
def _quiet_log():
    """Meanwhile, nothing from the local scheduler's log (it runs in this process). A Ctrl-C from
    the terminal ends the workers at once, and the scheduler's thread said so ("broadcast ...
    failed: CommClosedError") before this thread could silence it; what goes wrong with a worker
    otherwise comes back as the search's own one-line error (``_result``)."""
    import logging

    log = logging.getLogger("distributed")
    level = log.level
    log.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        log.setLevel(level)


@contextmanager
def _stderr_to_devnull():
    """Standard error to /dev/null meanwhile: the local cluster's processes, started here,
    keep it, so that a Ctrl-C (which reaches them too, from the terminal) does not print
    their tracebacks; this process ends them and says one line."""
    import os

    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _descendants() -> list[int]:
    """The ids of every process below this one (the cluster's nannies, and the workers they spawn)."""
    import psutil  # distributed's own dependency

    try:
        return [c.pid for c in psutil.Process().children(recursive=True)]
    except psutil.Error:
        return []


def _kill(lc, before: set[int]) -> None:
    """End the processes a local cluster started (every process below this one that was not there before
    ``cluster``) now, then the cluster. The whole tree is stopped before it is killed: a nanny killed first
    leaves a worker it was spawning to read an empty pipe and print multiprocessing's traceback."""
    import logging
    import multiprocessing as mp

    from multiprocessing import resource_tracker

    logging.disable(logging.CRITICAL)  # the cluster's complaints about its dying workers: we are ending it
    # multiprocessing's resource tracker cleans up after the workers: it stays
    keep = before | {getattr(resource_tracker._resource_tracker, "_pid", None)}
    for _ in range(2):  # a second sweep for a process spawned while the first was listed
        pids = [pid for pid in _descendants() if pid not in keep]
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
    for p in mp.active_children():  # reaps this process's own children
        p.join(timeout=1)
    if lc is not None:
        try:
            lc.close(timeout=1)
        except BaseException:  # noqa: BLE001 - it is going away in any case
            pass
    else:  # interrupted while starting: distributed would close it again at exit, with a traceback
        import atexit

        from distributed.deploy import spec

        atexit.unregister(spec.close_clusters)


def cluster_size(client) -> int:
    """One shard per worker process of the cluster."""
    return max(1, len(client.scheduler_info()["workers"]))


class ShardActor:
    """A shard living on a Dask worker."""

    def __init__(self, blob: bytes, index: int, count: int):
        import gc

        gc.disable()  # as in a local worker: the states hold no cycles
        self.shard = pickle.loads(blob)
        self.shard.split(index, count)

    def run(self, cmd: str, arg: tuple):
        return getattr(self.shard, cmd)(*arg)


def _result(future):
    """An actor call's result; waiting for it in short sleeps, which Ctrl-C interrupts
    (distributed's own wait does not give way to it for seconds)."""
    import time

    from . import interrupt

    while not future.done():
        interrupt.check()
        time.sleep(0.02)
    return future.result()


class DaskShards:
    """The same interface as ``engine._Local``: ``call`` one command on every shard, ``call_one``, ``close``."""

    def __init__(self, client, shard, n: int):
        blob = pickle.dumps(shard, pickle.HIGHEST_PROTOCOL)
        workers = sorted(client.scheduler_info()["workers"])
        futures = [client.submit(ShardActor, blob, w, n, actor=True, workers=[workers[w % len(workers)]],
                                 pure=False)
                   for w in range(n)]
        self.actors = [f.result() for f in futures]
        self.futures = futures

    def call(self, items):
        pending = [a.run(cmd, arg) for a, (cmd, arg) in zip(self.actors, items)]
        return [_result(p) for p in pending]

    def call_one(self, w: int, item):
        cmd, arg = item
        return [_result(self.actors[w].run(cmd, arg))]

    def close(self, abort: bool = False) -> None:
        for f in self.futures:
            f.cancel()
        self.actors = []
