"""The search benchmark still runs end to end (at toy sizes; its figures are not asserted),
and the do-nothing servicer answers SearchMemory with the shape of memoryd's answer."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests import processes

# A toy-size run: its timeout detects a stall, it never paces (tests/processes.py).
pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)

SCRIPT = Path(__file__).with_name("bench_search.py")


def test_the_search_benchmark_measures_every_phase_and_the_replies_match(tmp_path):
    out = tmp_path / "report.json"
    done = processes.run(
        [sys.executable, str(SCRIPT), "--workdir", str(tmp_path), "--points", "2000", "--searches", "10",
         "--duration", "1", "--rounds", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=processes.SMOKE_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["seeding"]["points"] == 2000
    profile = report["profile"]
    assert profile["main_ms"] > 0 and profile["engine_process_ms"] > 0
    assert profile["stages_ms"]["window reads (SQLite), in the two above"] > 0
    [round_] = report["served"]["rounds"]
    for name in ("caller_vector", "server_embedder"):
        measured = round_[name]
        assert measured["calls"] > 0 and measured["errors"] == 0
        assert 0 < measured["engine_ms"] < measured["engine_process_ms"] < measured["whole_ms"]
    assert report["served"]["ceiling"]["errors"] == 0
    sizes = report["served"]["reply_sizes"]
    assert sizes["noop"]["hits"] == sizes["memoryd"]["hits"] == 5
    assert sizes["noop"]["context"] == 20 and 0.8 < sizes["noop"]["bytes"] / sizes["memoryd"]["bytes"] < 1.25
