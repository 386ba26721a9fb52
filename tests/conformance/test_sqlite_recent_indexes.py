"""SQLite only: GetRecentAcrossSessions' partial indexes (messages_recent_platform WHERE platform
IS NOT NULL, messages_recent_kind WHERE kind IS NOT NULL; issue 43: a message without a
platform or kind writes no page of them) still serve the filters they were made for, and a
database made with the earlier full indexes gets the partial ones when the store opens."""

from __future__ import annotations

import sqlite3

import pytest

from memoryd.domain.models import Message, RecentQuery
from memoryd.storage.sqlite.schema import REDEFINED_INDEXES, redefine_indexes
from memoryd.storage.sqlite.store import SqliteStore, recent_query

# The two indexes as they shipped before they became partial.
OLD_INDEXES = """
DROP INDEX messages_recent_platform;
DROP INDEX messages_recent_kind;
CREATE INDEX messages_recent_platform ON messages (tenant, archived, platform, timestamp, session_id, seq);
CREATE INDEX messages_recent_kind ON messages (tenant, archived, kind, timestamp, session_id, seq);
"""


def message(i: int) -> Message:
    platform = {"platform": "slack"} if i % 10 == 0 else {}
    kind = "note" if i % 7 == 0 else None
    return Message(role="user", content=f"m{i}", kind=kind, timestamp=i + 1, metadata=platform)


async def seed(store: SqliteStore) -> None:
    # Enough rows that a scan and an index look different to the planner.
    for s in range(20):
        await store.append("t", f"s{s:02}", [message(s * 30 + i) for i in range(30)], None, 1)


def index_sql(conn: sqlite3.Connection, name: str) -> str:
    return conn.execute("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?", (name,)).fetchone()[0]


@pytest.fixture
async def conn(tmp_path):
    store = SqliteStore(tmp_path / "m.db")
    await store.open()
    await seed(store)
    await store.close()
    with sqlite3.connect(tmp_path / "m.db") as conn:
        conn.execute("ANALYZE")
        yield conn


def plan(conn: sqlite3.Connection, sql: str, params: list) -> str:
    return " | ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))


@pytest.mark.parametrize(
    ("query", "index"),
    [
        (RecentQuery(limit=20), "messages_recent "),
        (RecentQuery(limit=20, platform="slack"), "messages_recent_platform "),
        (RecentQuery(limit=20, platform="slack", since_ts=100), "messages_recent_platform "),
        (RecentQuery(limit=20, kinds=("note",)), "messages_recent_kind "),
        (RecentQuery(limit=20, exclude_kinds=("note",)), "messages_recent "),
    ],
    ids=["all", "platform", "platform-since", "kinds", "exclude-kinds"],
)
def test_recent_filters_walk_their_index(conn, query, index):
    explained = plan(conn, *recent_query("t", query))
    assert f"SEARCH messages USING INDEX {index}" in explained, explained
    assert "TEMP B-TREE" not in explained, explained


def test_messages_without_platform_or_kind_have_no_entry(conn):
    # Each partial index holds exactly the rows that have its column set.
    for name, column, expected in (("messages_recent_platform", "platform", 60), ("messages_recent_kind", "kind", 86)):
        counted = conn.execute(f"SELECT count(*) FROM messages INDEXED BY {name} WHERE {column} IS NOT NULL").fetchone()
        assert counted == (expected,)
        assert conn.execute(f"SELECT count(*) FROM messages WHERE {column} IS NOT NULL").fetchone() == (expected,)


async def test_a_database_of_the_earlier_indexes_gets_the_partial_ones(tmp_path):
    path = tmp_path / "m.db"
    store = SqliteStore(path)
    await store.open()
    await seed(store)
    await store.close()
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD_INDEXES)
        assert "WHERE" not in index_sql(conn, "messages_recent_platform")
    store = SqliteStore(path)
    await store.open()
    try:
        found = await store.recent_across_sessions("t", RecentQuery(limit=100, platform="slack"))
        assert [m.message.content for m in found] == [f"m{i}" for i in range(0, 600, 10)][-60:]
        found = await store.recent_across_sessions("t", RecentQuery(limit=5, kinds=("note",)))
        assert [m.message.content for m in found] == [f"m{i}" for i in range(567, 600, 7)]
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        for name, sql in REDEFINED_INDEXES.items():
            assert " ".join(index_sql(conn, name).split()) == sql
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.isolation_level = None
        assert redefine_indexes(conn) == []  # a second open finds them current and does nothing
