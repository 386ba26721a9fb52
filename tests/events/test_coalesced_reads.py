"""CoalescedReads (domain/coalesce.py): a burst of callers shares reads, and no caller gets a
value older than its call, whatever the others do."""

from __future__ import annotations

import asyncio

import pytest

from memoryd.domain.coalesce import CoalescedReads


class Log:
    """A value that writers bump, read with a delay (as a store read over a network)."""

    def __init__(self) -> None:
        self.value = 0
        self.started: list[int] = []  # the value when each read began

    async def read(self, key: str) -> tuple[str, int]:
        self.started.append(self.value)
        value = self.value
        await asyncio.sleep(0.01)
        return key, value


async def test_a_burst_of_two_thousand_callers_shares_one_read():
    log = Log()
    reads = CoalescedReads(log.read)
    results = await asyncio.gather(*(reads("tenant") for _ in range(2000)))
    assert set(results) == {("tenant", 0)}
    assert reads.reads == 1 == len(log.started)


async def test_a_caller_arriving_during_a_read_gets_a_read_that_started_after_it():
    log = Log()
    reads = CoalescedReads(log.read)
    first = asyncio.ensure_future(reads("tenant"))
    await asyncio.sleep(0.002)  # the first read is under way, it saw value 0
    log.value = 1  # a write commits; callers from now on must see it
    late = await asyncio.gather(*(reads("tenant") for _ in range(50)))
    assert await first == ("tenant", 0)
    assert set(late) == {("tenant", 1)}
    assert reads.reads == 2  # the 50 late callers shared the second read


async def test_keys_do_not_share_reads():
    log = Log()
    reads = CoalescedReads(log.read)
    results = await asyncio.gather(reads("a"), reads("b"), reads("a"))
    assert results == [("a", 0), ("b", 0), ("a", 0)]
    assert reads.reads == 2


async def test_an_error_reaches_every_caller_of_that_read_and_the_next_read_runs_again():
    attempts = 0

    async def failing_once(key: str) -> int:
        nonlocal attempts
        attempts += 1
        await asyncio.sleep(0.005)
        if attempts == 1:
            raise ConnectionError("store down")
        return attempts

    reads = CoalescedReads(failing_once)
    results = await asyncio.gather(*(reads("t") for _ in range(5)), return_exceptions=True)
    assert all(isinstance(r, ConnectionError) for r in results)
    assert await reads("t") == 2


async def test_a_caller_that_gives_up_does_not_cancel_the_read_of_the_others():
    log = Log()
    reads = CoalescedReads(log.read)
    quitter = asyncio.ensure_future(reads("t"))
    stayer = asyncio.ensure_future(reads("t"))
    await asyncio.sleep(0)
    quitter.cancel()
    assert await stayer == ("t", 0)
    with pytest.raises(asyncio.CancelledError):
        await quitter
