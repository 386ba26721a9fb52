"""Does qdrant-edge-py let other Python threads run while it searches? (Not a test.)

Builds one Edge shard of random 384-dimension points in a temporary folder, then measures
in one run: queries/s from one thread, from two threads together, and how fast a pure-Python
counter thread advances while one thread queries, against the counter alone. An engine
that released the GIL would give about 2x from two threads on two idle cores and leave the
counter near its own rate; one that holds it gives ~1x and takes the counter's share.

    .venv/bin/python tests/load/probe_edge_gil.py [--points 100000] [--queries 600]
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time

import numpy as np
import qdrant_edge as qe

DIMS = 384


def build(folder: str, points: int) -> qe.EdgeShard:
    shard = qe.EdgeShard.create(folder, qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=DIMS, distance=qe.Distance.Cosine)))
    vectors = np.random.default_rng(0).standard_normal((points, DIMS), dtype=np.float32)
    for start in range(0, points, 1000):
        batch = [qe.Point(i, vectors[i].tolist(), None) for i in range(start, min(points, start + 1000))]
        shard.update(qe.UpdateOperation.upsert_points(batch))
    shard.optimize()  # HNSW, as a served shard has it
    return shard


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=600)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        shard = build(folder, args.points)
        queries = np.random.default_rng(1).standard_normal((64, DIMS), dtype=np.float32).tolist()

        def search(n: int) -> None:
            for k in range(n):
                shard.query(qe.QueryRequest(limit=20, query=qe.Query.Nearest(queries[k % 64])))

        def rate(threads: int) -> float:
            workers = [threading.Thread(target=search, args=(args.queries,)) for _ in range(threads)]
            started = time.perf_counter()
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            return threads * args.queries / (time.perf_counter() - started)

        def counter_rate(during) -> float:
            stop, count = threading.Event(), [0]

            def count_up() -> None:
                while not stop.is_set():
                    count[0] += 1

            thread = threading.Thread(target=count_up)
            started = time.perf_counter()
            thread.start()
            during()
            stop.set()
            thread.join()
            return count[0] / (time.perf_counter() - started)

        search(50)  # warm
        one, two = rate(1), rate(2)
        alone = counter_rate(lambda: time.sleep(1.0))
        beside = counter_rate(lambda: search(args.queries))
        shard.close()
    print(f"{args.points:,} points: 1 thread {one:,.0f} q/s, 2 threads {two:,.0f} q/s ({two / one:.2f}x); "
          f"a Python thread beside the queries runs at {beside / alone:.0%} of its rate alone")


if __name__ == "__main__":
    main()
