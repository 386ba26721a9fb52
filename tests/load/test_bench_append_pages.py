"""The bytes-per-append benchmark still runs end to end (at toy sizes) and sees what a lone
append writes: a frame of each b-tree the commit touches, none of a partial index the
message has no column for."""

from __future__ import annotations

import pytest
from loadlib import run_bench

from tests import processes

# A toy-size run: its timeout detects a stall, it never paces (tests/processes.py).
pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)

# What every single-message append writes: the message's row and its indexes, the session's
# row and its activity index, the event's row and its indexes, the tenant's event log.
WRITTEN = {
    "messages",
    "sqlite_autoindex_messages_1",
    "messages_history",
    "messages_range",
    "messages_id",
    "messages_recent",
    "sessions",
    "sessions_activity",
    "events",
    "sqlite_autoindex_events_1",
    "events_time",
    "event_log",
}


def run(*args: str) -> dict:
    return run_bench("bench_append_pages.py", "--sessions", "20", "--messages", "5", "--appends", "10", *args)


def test_a_lone_append_writes_a_page_of_each_btree_it_touches():
    plain = run()
    assert plain["commits"] == 10 and plain["page_size"] == 4096
    trees = plain["frames_per_append_by_btree"]
    assert WRITTEN <= set(trees) and all(trees[name] >= 1 for name in WRITTEN), trees
    assert "messages_recent_platform" not in trees and "messages_recent_kind" not in trees, trees
    assert plain["wal_bytes_per_append"] >= plain["frames_per_append"] * (4096 + 24)
    with_platform = run("--platform", "load", "--kind", "note")["frames_per_append_by_btree"]
    assert with_platform["messages_recent_platform"] >= 1 and with_platform["messages_recent_kind"] >= 1


def test_concurrent_appends_commit_in_groups():
    grouped = run("--concurrency", "5")
    assert 1 <= grouped["commits"] < 10 and grouped["frames_per_commit"] > grouped["frames_per_append"]
