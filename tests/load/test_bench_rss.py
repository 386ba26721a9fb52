"""The RSS benchmark still runs end to end (at toy sizes; its numbers are not asserted)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests import processes

# A toy-size run: its timeout detects a stall, it never paces (tests/processes.py).
pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)

SCRIPT = Path(__file__).with_name("bench_rss.py")


def test_the_rss_benchmark_reports_server_and_engine_around_both_bursts():
    command = [sys.executable, str(SCRIPT), "--messages", "5", "--readers", "2", "--writers", "5",
               "--settle-seconds", "0.2", "--after-seconds", "0.5", "--drained-settle-seconds", "0.2",
               "--configs", "defaults,no-keywords"]
    done = processes.run(command, capture_output=True, text=True, timeout=processes.SMOKE_TIMEOUT)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout.splitlines()[-1])
    assert [r["config"] for r in results] == ["defaults", "no-keywords"]
    for result in results:
        assert result["reads"]["messages"] == 2 * 5  # each reader paged through the whole session
        for burst in ("reads", "writes"):
            for process in ("server", "engine"):
                r = result[burst][process]
                assert 0 < r["before"] <= r["peak"] and r["after"] > 0 and r["drained"] > 0, (burst, process, r)
    defaults, no_keywords = results
    assert defaults["writes"]["keyword_points"] == 10 and no_keywords["writes"]["keyword_points"] == 0
