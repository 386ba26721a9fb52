"""The synchronizer benchmark still runs end to end (at toy sizes; its timings are not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("bench_sync.py")


def test_the_synchronizer_indexes_every_seeded_message():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--messages", "1000", "--batch", "100", "--check"],
        capture_output=True, text=True, timeout=600, cwd=SCRIPT.parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert (result["messages"], result["missing"], result["orphans"]) == (1000, 0, 0)
