"""A stop ends within its grace plus bounded steps whatever a client or a task does: with an
open Watch stream, a call in flight whose handler ignores its cancellation and a background
task that swallows CancelledError, App.stop returns (naming what it abandoned) and, as a
process, memoryd logs each abandoned step at warning and exits."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import sys
import uuid
from pathlib import Path

import grpc
import pytest

from memoryd.v1 import event_service_pb2 as ev
from memoryd.v1 import event_service_pb2_grpc
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc
from memoryd.app import _watch_storage_health, start
from memoryd.config import Config
from memoryd.domain.memory import Memory
from tests.processes import ServerProcess

REPO = Path(__file__).resolve().parents[2]
WAIT = 60.0  # bounds every wait of these tests; never asserted as a timing


async def _until(release: asyncio.Event) -> None:
    """Wait for `release`, ignoring every cancellation meanwhile."""
    while not release.is_set():
        try:
            await release.wait()
        except asyncio.CancelledError:
            pass


async def _open_watch(channel: grpc.aio.Channel):
    watch = event_service_pb2_grpc.EventServiceStub(channel).Watch(ev.WatchRequest(), timeout=WAIT)
    await watch.read()  # the stream is open on the server: it answered
    return watch


async def _call_in_flight(channel: grpc.aio.Channel, entered: asyncio.Event | None = None) -> asyncio.Future:
    memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
    call = asyncio.ensure_future(memory.GetHistory(mem.GetHistoryRequest(session_id="stuck"), timeout=WAIT))
    if entered is not None:
        async with asyncio.timeout(WAIT):
            await entered.wait()
    return call


async def test_stop_returns_past_a_handler_and_a_task_that_ignore_cancellation(tmp_path, monkeypatch):
    release, entered = asyncio.Event(), asyncio.Event()

    async def stubborn_history(self, tenant, session_id, limit):
        entered.set()
        await _until(release)
        return [], False

    monkeypatch.setattr(Memory, "history_window", stubborn_history)
    app = await start(Config(listen="127.0.0.1:0", data_dir=tmp_path, grace_seconds=0.2))
    stubborn_task = asyncio.create_task(_until(release), name="stubborn-task")
    app.tasks.append(stubborn_task)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    try:
        watch = await _open_watch(channel)
        call = await _call_in_flight(channel, entered)
        async with asyncio.timeout(WAIT):
            abandoned = await app.stop()
        # gRPC's stop does not wait for the handler it cancelled; the task holds its step.
        assert abandoned == ["background_tasks"]
        assert not stubborn_task.done()  # left behind, not waited for
        with pytest.raises(grpc.aio.AioRpcError):
            await call  # gRPC cancelled it at the end of the grace
        watch.cancel()
    finally:
        release.set()  # nothing of this test outlives it
        await channel.close()
        await asyncio.wait_for(stubborn_task, WAIT)


def _stubborn_server(tmp_path: Path, *flags: str) -> ServerProcess:
    return ServerProcess(
        [
            sys.executable, "-m", "tests.faults.stubborn_server", *flags,
            "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
            "--data-dir", str(tmp_path / "data"), "--grace-seconds", "0.5",
        ],
        tmp_path,
        cwd=REPO,
    )  # fmt: skip


async def _sigterm_with_a_call_and_a_stream_open(server: ServerProcess) -> tuple[int, list[dict]]:
    """SIGTERM `server` while a Watch stream and a (stubborn) call are open; its exit code
    and log records."""
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            watch = await _open_watch(channel)
            call = await _call_in_flight(channel)
            await asyncio.sleep(0.5)  # lets the call reach its handler (not a timing assertion)
            server.process.send_signal(signal.SIGTERM)
            code = await asyncio.to_thread(server.process.wait, WAIT)
            watch.cancel()
            with pytest.raises(grpc.aio.AioRpcError):
                await call
    finally:
        server.kill()
    return code, [json.loads(line) for line in server.log().splitlines() if line.startswith("{")]


async def test_sigterm_ends_the_process_whatever_its_calls_and_tasks_do(tmp_path):
    code, records = await _sigterm_with_a_call_and_a_stream_open(_stubborn_server(tmp_path))
    assert code == 0, records[-5:]
    abandoned = [r for r in records if r["event"] == "shutdown_step_abandoned"]
    assert all(r["level"] == "warning" for r in abandoned)
    # The task swallowing CancelledError, then the thread the handler holds (the loop's executor).
    assert {"background_tasks", "default_executor"} <= {r["step"] for r in abandoned}, abandoned
    assert "stubborn-task" in next(r["tasks"] for r in abandoned if r["step"] == "background_tasks")
    assert any(r["event"] == "exiting_without_cleanup" for r in records)


async def test_a_stop_whose_event_loop_is_blocked_is_ended_by_the_watchdog(tmp_path):
    code, records = await _sigterm_with_a_call_and_a_stream_open(_stubborn_server(tmp_path, "--spin"))
    assert code == 1, records[-5:]
    assert [r["level"] for r in records if r["event"] == "shutdown_deadline_passed"] == ["warning"]


async def test_a_cancelled_mongodb_health_probe_ends(tmp_path, mongo_uri):
    """A cancellation can get lost inside a MongoDB call (Python 3.11's asyncio.wait_for,
    which PyMongo's socket writes use, returns its result when the cancellation arrives
    just as that completes). The storage-health loop still ends: it checks each turn."""
    config = Config(
        listen="127.0.0.1:0", data_dir=tmp_path, mongodb_uri=mongo_uri, mongodb_database=f"stop_{uuid.uuid4().hex[:8]}",
        vectors_enabled=False, health_check_interval_seconds=0.001,
    )  # fmt: skip
    app = await start(config)
    try:
        for _ in range(50):  # before the check, about one cancellation in four was lost here
            probe = asyncio.create_task(_watch_storage_health(app))
            await asyncio.sleep(random.uniform(0, 0.05))  # lands the cancellation anywhere in a probe
            probe.cancel()
            done, _ = await asyncio.wait({probe}, timeout=WAIT)
            assert done and probe.cancelled()
    finally:
        assert await app.stop(0) == []
