"""Context windows (domain/windows.py) in two statements for all windows of a search: one
finds every anchor's message, one reads every window's before and after rows. Each part is a
LIMIT-bounded walk of the messages_range index (tenant, session_id, timestamp, seq), backward
for `before`; the result equals domain.windows.read_windows over range queries."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from memoryd.domain.models import Message
from memoryd.domain.windows import Window, WindowRequest

# SQLite's compound SELECT limit (500 by default) bounds the parts of one statement.
PARTS_PER_STATEMENT = 400


def _kinds(exclude_kinds: Sequence[str]) -> tuple[str, list[Any]]:
    if not exclude_kinds:
        return "", []
    # A message without a kind is never excluded.
    return f" AND (kind IS NULL OR kind NOT IN ({','.join('?' * len(exclude_kinds))}))", list(exclude_kinds)


def anchor_parts(tenant: str, requests: Sequence[WindowRequest], columns: str) -> list[tuple[str, list[Any]]]:
    parts = []
    for i, r in enumerate(requests):
        kinds, kind_params = _kinds(r.exclude_kinds)
        which, value = ("id = ?", r.message_id) if r.message_id else ("role = ?", r.role)
        sql = (
            f"SELECT * FROM (SELECT {i}, {columns} FROM messages WHERE tenant = ? AND session_id = ? AND timestamp = ?"
            f" AND {which}{kinds} ORDER BY seq LIMIT 1)"
        )
        parts.append((sql, [tenant, r.session_id, r.timestamp, value, *kind_params]))
    return parts


def window_parts(
    tenant: str, requests: Sequence[WindowRequest], origins: Sequence[tuple[int, int]], columns: str
) -> list[tuple[str, list[Any]]]:
    parts = []
    for i, (r, (ts, seq)) in enumerate(zip(requests, origins, strict=True)):
        if r.size <= 0:
            continue
        kinds, kind_params = _kinds(r.exclude_kinds)
        where = f"tenant = ? AND session_id = ? AND role != 'system'{kinds}"
        for side, compare, order in ((0, "<", "DESC"), (1, ">", "ASC")):
            sql = (
                f"SELECT * FROM (SELECT {i}, {side}, {columns} FROM messages WHERE {where}"
                f" AND (timestamp, seq) {compare} (?, ?) ORDER BY timestamp {order}, seq {order} LIMIT ?)"
            )
            parts.append((sql, [tenant, r.session_id, *kind_params, ts, seq, r.size]))
    return parts


def _run(conn: sqlite3.Connection, parts: list[tuple[str, list[Any]]]) -> list[tuple]:
    rows: list[tuple] = []
    for start in range(0, len(parts), PARTS_PER_STATEMENT):
        chunk = parts[start : start + PARTS_PER_STATEMENT]
        sql = " UNION ALL ".join(sql for sql, _ in chunk)
        rows += conn.execute(sql, [value for _, params in chunk for value in params]).fetchall()
    return rows


def read(
    conn: sqlite3.Connection,
    tenant: str,
    requests: Sequence[WindowRequest],
    columns: str,
    to_message: Callable[[tuple], Message],
) -> list[Window]:
    anchors: list[Message | None] = [None] * len(requests)
    for row in _run(conn, anchor_parts(tenant, requests, columns)):
        anchors[row[0]] = to_message(row[1:])
    # The anchor's position; a gone anchor's timestamp counts as after (seq -1).
    origins = [
        (m.timestamp, m.seq) if m is not None else (r.timestamp, -1) for r, m in zip(requests, anchors, strict=True)
    ]
    before: list[list[Message]] = [[] for _ in requests]
    after: list[list[Message]] = [[] for _ in requests]
    for row in _run(conn, window_parts(tenant, requests, origins, columns)):
        (before if row[1] == 0 else after)[row[0]].append(to_message(row[2:]))

    # UNION ALL does not promise to keep each part's order: sort each side.
    def ordered(rows: list[Message]) -> list[Message]:
        return sorted(rows, key=lambda m: (m.timestamp, m.seq))

    return [Window(m, ordered(b), ordered(a)) for m, b, a in zip(anchors, before, after, strict=True)]
