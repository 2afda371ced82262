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

import pickle
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
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as lc, distributed.Client(lc) as client:
            yield client
    else:
        try:
            client = distributed.Client(address, timeout="20s")
        except OSError as e:
                raise UsageError(f"--dask {address}: cannot reach the scheduler ({e})") from None
        with client:
            yield client


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
        return [p.result() for p in pending]

    def call_one(self, w: int, item):
        cmd, arg = item
        return [self.actors[w].run(cmd, arg).result()]

    def close(self) -> None:
        for f in self.futures:
            f.cancel()
        self.actors = []
