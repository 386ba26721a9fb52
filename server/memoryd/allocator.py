"""Give memory back to the operating system after bursts of large messages.

Two things in glibc's malloc kept the memory of a burst with the process:

- Large blocks. Allocations above M_MMAP_THRESHOLD get their own mmap, returned to the
  system when freed; smaller ones come from heaps that rarely shrink. By default that
  threshold adapts upwards (up to 32 MiB) whenever such a block is freed, so after one burst
  of 1 MiB messages every later 1 MiB buffer (request bytes, message text, a SQLite row)
  came from a heap. Fixing it at 256 KiB turns that off; a large buffer then costs one
  mmap/munmap pair, small next to filling it.
- Thread arenas. Each thread that allocates (gRPC's event-engine threads, SQLite's writer,
  the vector engine's search threads) gets one of up to 8 x cores arenas. A freed chunk
  goes back to its arena's free lists, and an arena's heap shrinks only from its top, so
  the pages of a burst stay resident behind whatever small allocation is left above them:
  after 200 concurrent 1 MiB writes, 160 MB of the server's 240 MB were free chunks in
  three arenas (malloc_stats), and malloc_trim(0) took RSS back to 83 MB. glibc has no
  background return of free pages (jemalloc's decay, tcmalloc's release rate), so the
  `Trimmer` here is that: a thread that calls malloc_trim(0) when memory was freed into the
  arenas since the last trim, or touched again (CHECK_SECONDS below). malloc_trim returns every
  free page of every arena (MADV_DONTNEED inside free chunks, the tops of the heaps) and
  frees nothing that is in use.

The numbers: docs/PERFORMANCE.md, "Memory under bursts of large messages". Only on glibc
(elsewhere this does nothing); MALLOC_MMAP_THRESHOLD_ in the environment wins over the
threshold.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import threading

log = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 256 << 10
# How often the trimmer looks, and what makes a trim due: since the last trim, the arenas'
# bytes in use fell GROWTH_BYTES below their highest (memory freed, its pages still resident)
# or the RSS rose GROWTH_BYTES above its lowest (pages touched again, perhaps freed between two
# looks), while the arenas hold at least FREE_BYTES in free chunks. A process at rest that
# has been trimmed does neither, so it is not trimmed again.
CHECK_SECONDS = 1.0
GROWTH_BYTES = 16 << 20
FREE_BYTES = 16 << 20


class _MallInfo2(ctypes.Structure):
    """glibc's struct mallinfo2 (2.33+): every field a size_t."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def _glibc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt, libc.malloc_trim  # noqa: B018 - glibc's, absent from other C libraries
    except (OSError, AttributeError):
        return None
    return libc


def return_large_blocks_to_the_system(libc: ctypes.CDLL | None = None) -> bool:
    """Fix the mmap threshold; True when it was set."""
    libc = libc or _glibc()
    if libc is None or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


def resident_bytes() -> int:
    """This process's RSS, from /proc/self/statm."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Trimmer:
    """Calls malloc_trim(0) after memory was freed into the arenas (see the module's doc).

    `check()` is one look; `start()` runs it every `interval` seconds in a daemon thread
    (malloc_trim locks one arena at a time, never the event loop). `trims` counts the trims
    and `released` the RSS bytes they gave back."""

    def __init__(
        self,
        libc: ctypes.CDLL,
        *,
        interval: float = CHECK_SECONDS,
        growth_bytes: int = GROWTH_BYTES,
        free_bytes: int = FREE_BYTES,
    ) -> None:
        self._libc = libc
        self._mallinfo2 = libc.mallinfo2
        self._mallinfo2.restype = _MallInfo2
        self._libc.malloc_trim.argtypes = [ctypes.c_size_t]
        self.interval = interval
        self.growth_bytes = growth_bytes
        self.free_bytes = free_bytes
        self.rss_low = resident_bytes()
        self.used_high = self._mallinfo2().uordblks
        self.trims = 0
        self.released = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def free_in_arenas(self) -> int:
        """Bytes in the arenas' free chunks (resident or already handed back)."""
        return self._mallinfo2().fordblks

    def check(self) -> bool:
        """One look: trim if a trim is due (see CHECK_SECONDS); True if it trimmed."""
        info, rss = self._mallinfo2(), resident_bytes()
        self.rss_low = min(self.rss_low, rss)
        self.used_high = max(self.used_high, info.uordblks)
        freed = self.used_high - info.uordblks >= self.growth_bytes
        touched = rss - self.rss_low >= self.growth_bytes
        if not (freed or touched) or info.fordblks < self.free_bytes:
            return False
        self._libc.malloc_trim(0)
        after = resident_bytes()
        self.trims += 1
        self.released += max(0, rss - after)
        self.rss_low, self.used_high = after, self._mallinfo2().uordblks
        log.debug("malloc_trim: RSS %d -> %d MiB", rss >> 20, after >> 20)
        return True

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="memoryd-malloc-trim", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.check()


def manage() -> Trimmer | None:
    """Fix the mmap threshold and start a Trimmer in this process (once per process, after
    any fork: a thread does not survive one). None where malloc is not glibc's 2.33+."""
    libc = _glibc()
    if libc is None:
        return None
    return_large_blocks_to_the_system(libc)
    if not hasattr(libc, "mallinfo2"):
        return None
    trimmer = Trimmer(libc)
    trimmer.start()
    return trimmer
