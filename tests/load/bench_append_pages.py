"""Which SQLite b-trees a SaveMessage append dirties, and the bytes it writes to the WAL (issue
43's "bytes written per single-message SaveMessage" row):

    .venv/bin/python tests/load/bench_append_pages.py                   # lone appends
    .venv/bin/python tests/load/bench_append_pages.py --concurrency 16  # group commits

A fresh database is made by `SqliteStore` and seeded through it (`--sessions` sessions of
`--messages` messages each, as SaveMessage stores them: `--platform` sets the metadata
platform, `--kind` the kind; `--page-size` another page size than SQLite's 4096). The WAL is
then checkpointed to empty (TRUNCATE), the store reopened, and `--appends` single-message
appends to random existing sessions are made through `SqliteStore.append`: one at a time (each
its own commit), or from `--concurrency` tasks at once (the group commit gathers them). While
the store is still open the WAL file is read: every frame is a page image of `page_size` bytes
plus a 24-byte header, and the page numbers are mapped to the b-tree that owns them with
SQLite's `dbstat` table. Prints one JSON line: frames and WAL bytes per append, and the frames
per append of each b-tree.

The store's periodic checkpoint is switched off for the measurement
(commits.CHECKPOINT_EVERY), and SQLite's automatic one (wal_autocheckpoint=0), so that every
commit's frames stay in the WAL to be read. Results: docs/PERFORMANCE.md, "Bytes per append".
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import random
import sqlite3
import struct
import tempfile
from pathlib import Path
from typing import Any

from memoryd.domain.models import Message
from memoryd.storage.sqlite import commits
from memoryd.storage.sqlite import store as sqlite_store
from memoryd.storage.sqlite.store import SqliteStore

WAL_HEADER = 32
FRAME_HEADER = 24
CONTENT = "Load-test message {n}: the quick brown fox jumps over the lazy dog while the agent remembers what the user said about their travel plans."  # noqa: E501


def wal_frames(path: Path) -> tuple[int, list[tuple[int, bool]]]:
    """(page size, [(page number, is a commit frame)]) of the WAL's valid frames."""
    data = path.read_bytes()
    if len(data) < WAL_HEADER:
        return 0, []
    page_size = struct.unpack(">I", data[8:12])[0]
    salts = data[16:24]
    frames: list[tuple[int, bool]] = []
    offset = WAL_HEADER
    while offset + FRAME_HEADER + page_size <= len(data):
        page, size = struct.unpack(">II", data[offset : offset + 8])
        if data[offset + 8 : offset + 16] != salts:
            break  # a frame of an earlier WAL generation: the valid ones end here
        frames.append((page, size != 0))
        offset += FRAME_HEADER + page_size
    return page_size, frames


def owners(path: Path) -> dict[int, str]:
    """page number -> the table or index it belongs to (dbstat; other pages: the freelist)."""
    conn = sqlite3.connect(path)
    try:
        return {pageno: name for name, pageno in conn.execute("SELECT name, pageno FROM dbstat")}
    finally:
        conn.close()


def message(n: int, platform: str | None, kind: str | None) -> Message:
    metadata: dict[str, Any] = {"sender": {"id": f"user-{n % 97}"}}
    if platform:
        metadata["platform"] = platform
    return Message(role="user", content=CONTENT.format(n=n), kind=kind, metadata=metadata)


async def measure(args: argparse.Namespace, path: Path) -> dict[str, Any]:
    rng = random.Random(7)
    if args.page_size:  # fixed by the database's first table: before the store makes its schema
        conn = sqlite3.connect(path)
        conn.execute(f"PRAGMA page_size={args.page_size}")
        conn.execute("CREATE TABLE page_size_probe (x)")
        conn.close()
    store = SqliteStore(path)
    await store.open()
    try:
        n = 0
        for s in range(args.sessions):
            batch = [message(n + i, args.platform, args.kind) for i in range(args.messages)]
            n += args.messages
            await store.append("t", f"load-save-{s}", batch, None, 1_000 + s)
    finally:
        await store.close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()

    # Every commit's frames stay in the WAL (docstring): no periodic checkpoint, no automatic
    # one on any of the store's connections.
    commits.CHECKPOINT_EVERY = 1 << 40
    sqlite_store.PRAGMAS = (*sqlite_store.PRAGMAS, "PRAGMA wal_autocheckpoint=0")  # type: ignore[attr-defined]
    store = SqliteStore(path)
    await store.open()
    try:
        wal = Path(f"{path}-wal")
        assert not wal.exists() or wal.stat().st_size == 0, "the WAL was not empty before the appends"
        queue = [rng.randrange(args.sessions) for _ in range(args.appends)]

        async def worker() -> None:
            nonlocal n
            while queue:
                s = queue.pop()
                n += 1
                await store.append("t", f"load-save-{s}", [message(n, args.platform, args.kind)], None, 10**9 + n)

        await asyncio.gather(*(worker() for _ in range(args.concurrency)))
        page_size, frames = wal_frames(wal)
        wal_bytes = wal.stat().st_size
        owner = owners(path)
    finally:
        await store.close()
    per_tree: collections.Counter[str] = collections.Counter()
    for page, _ in frames:
        per_tree[owner.get(page, "(freelist)")] += 1
    groups = sum(1 for _, commit in frames if commit)
    return {
        "appends": args.appends,
        "concurrency": args.concurrency,
        "commits": groups,
        "page_size": page_size,
        "frames_per_append": round(len(frames) / args.appends, 2),
        "wal_bytes_per_append": round(wal_bytes / args.appends),
        "frames_per_commit": round(len(frames) / max(groups, 1), 2),
        "frames_per_append_by_btree": {k: round(v / args.appends, 2) for k, v in per_tree.most_common()},
        "seeded_messages": args.sessions * args.messages,
        "platform": args.platform,
        "kind": args.kind,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=20, help="seeded messages per session")
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--platform", default=None, help="the messages' metadata platform (load scenario: load)")
    parser.add_argument("--kind", default=None)
    parser.add_argument("--page-size", type=int, default=0, help="a new database's page size (0: SQLite's 4096)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(asyncio.run(measure(args, Path(tmp) / "m.db"))))


if __name__ == "__main__":
    main()
