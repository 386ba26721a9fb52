"""The write benchmark still runs end to end (at toy sizes; its timings are not asserted)."""

from __future__ import annotations

import pytest
from loadlib import run_bench

from tests import processes

# A toy-size run: its timeout detects a stall, it never paces (tests/processes.py).
pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)


def run(*args: str) -> dict:
    return run_bench("bench_writes.py", *args)


def test_upserts_with_and_without_text_and_the_stall_probe():
    with_text = run("upserts", "--points", "200", "--settle-seconds", "0.5", "--probe")
    assert with_text["points"] == 200 and with_text["text"] and with_text["cpu_us_per_point"] > 0
    assert with_text["probe_ms_n"] > 0 and 0 < with_text["probe_ms_p50"] <= with_text["probe_ms_max"]
    assert not run("upserts", "--points", "200", "--settle-seconds", "0", "--no-text")["text"]


def test_saves_report_the_indexing_they_caused_both_ways():
    on = run("saves", "--calls", "40")
    assert on["calls"] == 40 and on["keyword_points"] == 40 and on["lag"] == 0 and on["cpu_us_per_call"] > 0
    off = run("saves", "--calls", "40", "--env", "MEMORYD_INDEX_MESSAGE_KEYWORDS=false")
    assert off["keyword_points"] == 0 and off["env"] == ["MEMORYD_INDEX_MESSAGE_KEYWORDS=false"]
