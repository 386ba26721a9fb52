"""The synchronizer benchmark still runs end to end (at toy sizes; its timings are not asserted)."""

from __future__ import annotations

from loadlib import run_bench


def test_the_synchronizer_indexes_every_seeded_message():
    result = run_bench("bench_sync.py", "--messages", "1000", "--batch", "100", "--check")
    assert (result["messages"], result["missing"], result["orphans"]) == (1000, 0, 0)
