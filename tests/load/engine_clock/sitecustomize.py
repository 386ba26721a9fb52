"""bench_search.py's clock in memoryd's engine process: with this folder on PYTHONPATH and
BENCH_ENGINE_CLOCK naming a file, the engine process (`python -m
memoryd.storage.qdrant.edge_process`) times the engine's query calls (`EdgeShard.query` and
`query_batch`, time.process_time: every thread of the process) and writes the totals to that
file, as JSON, on SIGUSR2. The calls are timed one at a time (a lock before the clock is
read), so concurrent calls are not counted twice; Edge holds the GIL for a whole call, so
they ran one at a time anyway. Any other process, memoryd's server included, is left alone."""

import os
import sys

ENGINE_MODULES = {"memoryd.engine", "memoryd.storage.qdrant.edge_process"}  # engine.py, or edge_process.py

if ENGINE_MODULES & set(getattr(sys, "orig_argv", ())) and os.environ.get("BENCH_ENGINE_CLOCK"):
    import json
    import signal
    import threading
    import time

    from memoryd.storage.qdrant import edge

    _seconds: dict[str, float] = {}
    _one_at_a_time = threading.Lock()

    def _timed(space, call, argument):
        with _one_at_a_time:
            started = time.process_time()
            try:
                return call(argument)
            finally:
                _seconds[str(space)] = _seconds.get(str(space), 0.0) + time.process_time() - started

    class _TimedShard:
        def __init__(self, shard, space):
            self._shard, self._space = shard, space

        def __getattr__(self, name):
            return getattr(self._shard, name)

        def query(self, request):
            return _timed(self._space, self._shard.query, request)

        def query_batch(self, batch):
            return _timed(self._space, self._shard.query_batch, batch)

    _read = edge.EdgeIndex._read

    async def _timed_read(self, space, fn):
        return await _read(self, space, lambda shard: fn(_TimedShard(shard, space)))

    edge.EdgeIndex._read = _timed_read

    def _report(signum, frame):
        path = os.environ["BENCH_ENGINE_CLOCK"]
        with open(path + ".tmp", "w") as out:
            json.dump(_seconds, out)
        os.replace(path + ".tmp", path)

    signal.signal(signal.SIGUSR2, _report)
