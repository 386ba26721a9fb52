"""A file of RESERVE_BYTES beside the SQLite database, kept while the disk has room and
deleted when a full disk stops the store from opening.

In WAL mode every connection, a reader's too, needs the `-shm` file (the WAL index), and
SQLite writes into each page of it as it grows it: on a disk with no byte left even a read
fails (SQLITE_IOERR_SHMSIZE). With the reserve deleted there is room for it, so a server
started on a full disk opens and serves reads; writes answer STORAGE_FULL once the freed room
is used up. The next health probe with room to spare writes the reserve again. (CockroachDB's
emergency ballast file does the same for its own start.)
"""

from __future__ import annotations

import os
from pathlib import Path

RESERVE_BYTES = 4 << 20


def path_of(db: Path) -> Path:
    return db.with_name(db.name + ".reserve")


def keep(db: Path, size: int) -> None:
    """Write the reserve (`size` bytes; 0: none) when it is missing and the disk has room for
    it twice over."""
    reserve = path_of(db)
    if not size or reserve.exists():
        return
    stat = os.statvfs(db.parent)
    if stat.f_bavail * stat.f_frsize < 2 * size:
        return
    partial = reserve.with_name(reserve.name + ".partial")
    try:
        with partial.open("wb") as out:
            out.write(bytes(size))  # written, not sparse: the blocks are really taken
        partial.rename(reserve)
    except OSError:
        partial.unlink(missing_ok=True)


def release(db: Path) -> bool:
    """Delete the reserve; False when there was none."""
    try:
        path_of(db).unlink()
    except FileNotFoundError:
        return False
    return True
