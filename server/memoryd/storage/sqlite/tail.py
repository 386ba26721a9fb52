"""Cross-process wake-ups on SQLite, for `--workers N` (several processes on one database file).

SQLite's `PRAGMA data_version` changes, as seen by one connection, whenever any other
connection commits. A private read-only connection checks it every `interval` seconds and
wakes the local watchers when it moves. As on MongoDB, wake-ups carry no data: the watch
hub re-reads the log, so a missed one only delays delivery.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from memoryd import shutdown
from memoryd.domain.store import Store

# A data_version check is a shared-memory read in WAL mode: cheap enough to run often.
INTERVAL_SECONDS = 0.1


async def follow_commits(store: Store, path: Path, *, interval: float = INTERVAL_SECONDS) -> None:
    """Wake the store's watchers whenever another process commits to `path`, until cancelled."""
    # Checked on the event loop: in WAL mode it reads the shared-memory index, no file I/O,
    # and a busy database (timeout 0) just counts as a change.
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0)
    try:
        seen = None
        while True:
            shutdown.raise_if_cancelled()
            try:
                version = conn.execute("PRAGMA data_version").fetchone()[0]
            except sqlite3.OperationalError:
                version = None
            if version is None or version != seen:
                seen = version
                store.notifier.notify()
            await asyncio.sleep(interval)
    finally:
        conn.close()
