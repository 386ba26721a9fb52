"""Give memory back to the operating system after bursts of large messages.

glibc's malloc serves allocations above M_MMAP_THRESHOLD with their own mmap, returned to
the system when freed, and below it from heaps that rarely shrink. By default that
threshold adapts upwards (up to 32 MiB) whenever such a block is freed, so after one burst
of 1 MiB messages every later 1 MiB buffer (request bytes, message text, a SQLite row)
comes from a heap: memory freed after a burst stayed with the process (RSS 739 MB after a
burst that started at 152 MB, tests/load/bench_rss.py). Fixing the threshold at 256 KiB
turns that off; a large buffer then costs one mmap/munmap pair, small next to filling it.

Only on glibc (elsewhere this does nothing); MALLOC_MMAP_THRESHOLD_ in the environment wins.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 256 << 10


def return_large_blocks_to_the_system() -> bool:
    """True when the threshold was set."""
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))
