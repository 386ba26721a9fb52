"""The RSS benchmark still runs end to end (at toy sizes; its numbers are not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("bench_rss.py")


def test_the_rss_benchmark_runs_both_bursts_in_both_configurations():
    command = [sys.executable, str(SCRIPT), "--messages", "5", "--readers", "2", "--writers", "5", "--settle-seconds", "0.2"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout.splitlines()[-1])
    assert [r["config"] for r in results] == ["defaults", "bounds lifted"]
    for result in results:
        assert result["reads"]["messages"] == 2 * 5  # each reader paged through the whole session
        for burst in ("reads", "writes"):
            assert 0 < result[burst]["before"] <= result[burst]["peak"]
