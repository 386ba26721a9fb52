"""The index builder: `python -m memoryd.storage.qdrant.edge_build <pair folder> <standby> <after seq> <space>`.

Runs in its own process, at low priority, because Qdrant Edge's optimize() blocks and
holds the GIL for its whole run (seconds to minutes): inside the server it would stop
every request. It brings the standby shard up to date from the operation log (entries
after `after seq`, as far as the log reaches when it starts), builds its HNSW indexes
(optimize), flushes, and prints {"seq": <last applied>} on stdout. The server then
swaps it in (edge.py). Safe to kill at any point: the next run replays the log again.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from memoryd.storage.qdrant import edge_engine as engine


def build(folder: Path, standby: str, after: int, space: int) -> dict:
    started = time.monotonic()
    log_path = folder / engine.OPLOG_FILE
    size = log_path.stat().st_size if log_path.exists() else 0
    shard, _ = engine.load_shard(folder / standby, space)  # (optimize rebuilds what it rewrote)
    try:
        last, applied = after, 0
        for seq, op in engine.read_ops(log_path, after, limit_bytes=size):
            engine.apply(shard, op)
            last, applied = seq, applied + 1
        caught_up = time.monotonic()
        optimized = shard.optimize()
        shard.flush()
        info = shard.info()
        return {
            "seq": last,
            "applied": applied,
            "optimized": optimized,
            "points": info.points_count,
            "indexed": info.indexed_vectors_count,
            "segments": info.segments_count,
            "apply_seconds": round(caught_up - started, 3),
            "optimize_seconds": round(time.monotonic() - caught_up, 3),
        }
    finally:
        shard.close()


def main(argv: list[str]) -> int:
    folder, standby, after, space = Path(argv[0]), argv[1], int(argv[2]), int(argv[3])
    try:
        os.nice(10)  # the serving process comes first
    except OSError:
        pass
    print(json.dumps(build(folder, standby, after, space)), flush=True)
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
