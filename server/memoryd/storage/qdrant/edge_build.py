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
import shutil
import sys
import time
from pathlib import Path

from memoryd.storage.qdrant import edge_engine as engine

PURGE_SUFFIX = ".purge"  # where an erasure rebuild writes the new standby before it replaces the old
OLD_SUFFIX = ".old"  # the old standby while the new one takes its place


def build(folder: Path, standby: str, after: int, space: int, purge: tuple[int, int] | None = None) -> dict:
    """`purge`: (build threads, indexing threshold KB): an erasure rebuild. Once up to date,
    the standby's live points are copied into a new shard, which replaces it (its folder
    removed): no file of the standby then holds a deleted point or an old payload (its WAL,
    segments and payload pages are new)."""
    started = time.monotonic()
    _recover(folder, standby)
    log_path = folder / engine.OPLOG_FILE
    size = log_path.stat().st_size if log_path.exists() else 0
    shard, _ = engine.load_shard(folder / standby, space)  # (optimize rebuilds what it rewrote)
    try:
        last, applied = after, 0
        for seq, op in engine.read_ops(log_path, after, limit_bytes=size):
            engine.apply(shard, op)
            last, applied = seq, applied + 1
        if purge is not None:
            fresh_path = folder / (standby + PURGE_SUFFIX)
            shutil.rmtree(fresh_path, ignore_errors=True)
            fresh = engine.create_shard(fresh_path, space, *purge)
            try:
                engine.copy_points(shard, fresh)
                fresh.flush()
            finally:
                fresh.close()
            shard.close()
            # Two renames, then the removal: a kill anywhere leaves a standby (see _recover).
            os.replace(folder / standby, folder / (standby + OLD_SUFFIX))
            os.replace(fresh_path, folder / standby)
            shutil.rmtree(folder / (standby + OLD_SUFFIX))
            shard, _ = engine.load_shard(folder / standby, space)
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


def _recover(folder: Path, standby: str) -> None:
    """Finish what a killed erasure rebuild left: its old standby back in place if the new one
    was not yet, else removed; a half-written new one removed."""
    old = folder / (standby + OLD_SUFFIX)
    if old.exists() and not (folder / standby).exists():
        os.replace(old, folder / standby)
    shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(folder / (standby + PURGE_SUFFIX), ignore_errors=True)


def main(argv: list[str]) -> int:
    folder, standby, after, space = Path(argv[0]), argv[1], int(argv[2]), int(argv[3])
    purge = (int(argv[4]), int(argv[5])) if len(argv) > 5 else None  # build threads, indexing threshold
    try:
        os.nice(10)  # the serving process comes first
    except OSError:
        pass
    print(json.dumps(build(folder, standby, after, space, purge)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
