"""SQLite only: session attributes on a database of the earlier schema, and the query plans
of ListSessions and the prefix listings (index ranges in order, never a sort or a scan)."""

from __future__ import annotations

import sqlite3

import pytest

from memoryd.domain.models import Message
from memoryd.domain.sessions import SessionAttributes, SessionFilter, SessionUpdate
from memoryd.storage.sqlite.store import (
    SqliteStore,
    idle_sessions_query,
    list_sessions_query,
    metadata_prefix_query,
    next_namespace_query,
    retention_labelled_query,
)

# The sessions table as it shipped before session attributes.
OLD_SESSIONS = """
CREATE TABLE sessions (
    tenant TEXT NOT NULL, session_id TEXT NOT NULL, last_seq INTEGER NOT NULL DEFAULT 0,
    message_count INTEGER NOT NULL DEFAULT 0, unarchived_count INTEGER NOT NULL DEFAULT 0,
    last_activity INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tenant, session_id));
INSERT INTO sessions VALUES ('t', 'old', 3, 3, 3, 42);
"""


async def test_a_database_of_the_earlier_schema_gains_attributes(tmp_path):
    path = tmp_path / "m.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD_SESSIONS)
    store = SqliteStore(path)
    await store.open()
    try:
        old = await store.get_session("t", "old")
        assert (old.message_count, old.last_activity, old.attributes) == (3, 42, SessionAttributes())
        update = SessionUpdate(SessionAttributes("u1", labels={"k": "v"}))
        assert (await store.update_session("t", "old", update, 50)).attributes.user_id == "u1"
        assert [s.session_id for s in await store.list_sessions("t", None, 10, SessionFilter(labels={"k": "v"}))] == ["old"]
    finally:
        await store.close()
    store = SqliteStore(path)  # a second open finds the columns and does nothing
    await store.open()
    try:
        assert (await store.get_session("t", "old")).attributes.labels == {"k": "v"}
    finally:
        await store.close()


@pytest.fixture
async def conn(tmp_path):
    store = SqliteStore(tmp_path / "m.db")
    await store.open()
    # Enough rows that a scan and an index look different to the planner.
    for i in range(50):
        attributes = SessionAttributes(f"u{i % 5}", f"a{i % 3}", {"plan": "pro" if i % 2 else "free", "n": str(i)})
        await store.append("t", f"s{i:02}", [Message(role="user", content="x", timestamp=1)], None, 1, SessionUpdate(attributes))
        await store.save_metadata("t", f"ns/{i % 7}", f"k{i}", {}, 1)
    await store.close()
    with sqlite3.connect(tmp_path / "m.db") as conn:
        yield conn


def plan(conn: sqlite3.Connection, sql: str, params: list) -> str:
    return " | ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))


@pytest.mark.parametrize(
    ("where", "index"),
    [
        (SessionFilter(), "sqlite_autoindex_sessions_1"),
        (SessionFilter(user_id="u1"), "sessions_user"),
        (SessionFilter(agent_id="a1"), "sessions_agent"),
        (SessionFilter(user_id="u1", agent_id="a1"), "sessions_agent_user"),
        (SessionFilter(labels={"plan": "pro"}), "l USING PRIMARY KEY (tenant=? AND key=? AND value=? AND session_id>?)"),
        (SessionFilter(labels={"plan": "pro", "n": "3"}), "l USING PRIMARY KEY (tenant=? AND key=? AND value=? AND session_id>?)"),
    ],
    ids=["all", "user", "agent", "agent-user", "label", "labels"],
)
def test_list_sessions_walks_its_index_in_order(conn, where, index):
    explained = plan(conn, *list_sessions_query("t", "s10", 20, where))
    outer = explained.split(" | ")[0]
    assert index in outer and "SEARCH" in outer, explained
    assert "TEMP B-TREE" not in explained, explained


def test_prefix_listings_are_primary_key_ranges(conn):
    explained = plan(conn, *metadata_prefix_query("t", "ns/", ("ns/3", "k10"), 20))
    assert "SEARCH metadata USING INDEX sqlite_autoindex_metadata_1 (tenant=? AND namespace>? AND namespace<?)" in explained
    assert "TEMP B-TREE" not in explained, explained
    for inclusive in (True, False):
        explained = plan(conn, next_namespace_query(inclusive), ["t", "ns/3"])
        assert "SEARCH metadata USING COVERING INDEX" in explained and "namespace>" in explained, explained


@pytest.mark.parametrize("unarchived", [False, True])
def test_the_retention_walks_are_index_ranges(conn, unarchived):
    explained = plan(conn, *idle_sessions_query("t", 10, (5, "s3"), 20, unarchived=unarchived))
    bounds = "(tenant=? AND (last_activity,session_id)>(?,?) AND last_activity<?)"
    assert f"SEARCH sessions USING INDEX sessions_activity {bounds}" in explained, explained
    assert "TEMP B-TREE" not in explained, explained
    explained = plan(conn, *retention_labelled_query("t", ("30", "s3"), 20))
    assert "l USING PRIMARY KEY (tenant=? AND key=?" in explained.split(" | ")[0], explained
    assert "TEMP B-TREE" not in explained, explained
