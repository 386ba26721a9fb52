"""Memory comes back after a burst (memoryd/allocator.py; docs/PERFORMANCE.md, "Memory under
bursts of large messages").

A failed call to the vector engine process once left a reference cycle (its exception's
traceback holds the call's frame, whose future holds the exception) that kept the call's
arguments, a batch of up to 64 messages of 1 MiB, until a full garbage collection, which a
quiet server never runs: 270 MB at rest after a burst, 86 MB after one gc.collect().

glibc keeps the pages of freed chunks in the arena of the thread that allocated them, behind
whatever small allocation is left above them; `Trimmer` gives them back with malloc_trim once
memory was freed (or touched again) since its last trim. Here: the mechanism on a heap made
fragmented on purpose in a thread arena of this process, then the server as a whole after a
burst of 1 MiB writes, measured from outside as bench_rss.py does. No timing is asserted:
waits are bounded polls, the bounds generous.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time

import grpc
import pytest

from memoryd import allocator
from memoryd.domain.errors import StorageUnavailable
from memoryd.storage.qdrant.edge_process import EdgeProcessIndex
from memoryd.v1 import memory_service_pb2, memory_service_pb2_grpc, message_pb2
from tests.processes import MemorydServer

MIB = 1 << 20
libc = allocator._glibc()
needs_glibc = pytest.mark.skipif(libc is None or not hasattr(libc, "mallinfo2"), reason="glibc 2.33+ malloc only")


def fragment_a_thread_arena(megabytes: int) -> list[bytes]:
    """In a new thread (so a thread arena): `megabytes` of 128 KiB blocks (below the mmap
    threshold), each followed by a small block that stays; the big ones are then freed. The
    small survivors keep glibc from shrinking the heap: its free pages stay resident."""
    kept: list[bytes] = []

    def allocate() -> None:
        big = []
        for _ in range(megabytes * 8):
            big.append(b"x" * (128 << 10))  # written: calloc would leave fresh pages untouched
            kept.append(bytes(1024))
        big.clear()

    thread = threading.Thread(target=allocate)
    thread.start()
    thread.join()
    return kept


@needs_glibc
def test_a_trimmer_gives_back_the_free_pages_of_a_thread_arena_and_then_rests():
    allocator.return_large_blocks_to_the_system()
    trimmer = allocator.Trimmer(libc)
    before = allocator.resident_bytes()
    kept = fragment_a_thread_arena(128)
    held = allocator.resident_bytes()
    assert held - before > 100 * MIB and trimmer.free_in_arenas() > 100 * MIB  # the pages stayed
    assert trimmer.check()
    assert held - allocator.resident_bytes() > 100 * MIB and trimmer.released > 100 * MIB
    assert not trimmer.check()  # at rest, with nothing freed or touched since: no further trim
    assert len(kept) == 128 * 8


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))


async def write_burst(target: str, writers: int) -> None:
    options = [("grpc.max_send_message_length", 8 * MIB)]
    async with grpc.aio.insecure_channel(target, options=options) as channel:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
        await asyncio.gather(*(
            stub.SaveMessage(memory_service_pb2.SaveMessageRequest(
                session_id="burst", message=message_pb2.Message(role="user", content=f"{i:04d}" + "x" * (MIB - 64))
            ), timeout=120)
            for i in range(writers)
        ))  # fmt: skip


@needs_glibc
def test_the_server_returns_to_its_baseline_after_a_burst_of_large_writes(tmp_path):
    """100 concurrent 1 MiB SaveMessage calls take the server some 200 MB above its baseline;
    it comes back within 25% of it (before the trimmer it stayed ~150 MB above). Keyword
    indexing is off: it holds each message's text until the vector engine has it, which is
    not what this guards."""
    server = MemorydServer(tmp_path, "--log-level", "warning", "--index-message-keywords", "false")
    server.start()
    try:
        time.sleep(2)  # start-up's own allocations settle (and are trimmed)
        baseline = peak = rss(server.pid)
        burst = threading.Thread(target=asyncio.run, args=(write_burst(server.target, 100),))
        burst.start()
        while burst.is_alive():
            peak = max(peak, rss(server.pid))
            time.sleep(0.02)
        burst.join()
        deadline = time.monotonic() + 60  # a bound on the wait, not an expectation
        while rss(server.pid) > 1.25 * baseline and time.monotonic() < deadline:
            time.sleep(0.5)
        after = rss(server.pid)
    finally:
        server.stop()
    print(f"\nRSS MB: baseline {baseline / MIB:.0f}, peak {peak / MIB:.0f}, then {after / MIB:.0f}")
    assert peak > baseline + 50 * MIB  # the burst did take memory
    assert after <= 1.25 * baseline


async def test_a_failed_engine_call_leaves_nothing_holding_its_arguments(tmp_path):
    index = EdgeProcessIndex(tmp_path / "vectors")
    await index.open()
    payload = ["x" * MIB]
    held = sys.getrefcount(payload)
    gc.disable()  # what is freed must be freed by reference counting alone
    try:
        try:
            await index._call("no_such_call", payload)  # answered by the engine with an error
        except StorageUnavailable:
            pass
        else:
            pytest.fail("the engine process accepted an unknown call")
        await asyncio.sleep(0)  # the event loop drops the handle that resumed this task
        assert sys.getrefcount(payload) == held
    finally:
        gc.enable()
        await index.close()
