"""Real memoryd servers on ephemeral ports for the event-stream suite, per storage backend.

Each test gets its own data: a fresh SQLite data dir, or a fresh MongoDB database on the
session's SecantusDB. Servers a test starts with `servers.start()` share that data, so a
second server (or a restarted one) sees the same event log.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from memoryd.v1 import event_pb2, event_service_pb2, event_service_pb2_grpc
from memoryd.v1 import memory_service_pb2, memory_service_pb2_grpc, message_pb2
from memoryd.app import App, start
from memoryd.config import Config
from memoryd.domain.models import DEFAULT_TENANT, EventDraft, EventType, now_ms
from memoryd.domain.store import Store
from tests.conftest import BACKENDS, mongo_uri_for
from tests.processes import ServerProcess

WAIT = 30.0  # upper bound for anything a test waits on; never asserted as a timing


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@dataclass
class Client:
    target: str
    channel: grpc.aio.Channel
    memory: memory_service_pb2_grpc.MemoryServiceStub
    events: event_service_pb2_grpc.EventServiceStub

    @classmethod
    def connect(cls, port: int, options: list[tuple[str, int]] | None = None) -> Client:
        target = f"127.0.0.1:{port}"
        channel = grpc.aio.insecure_channel(target, options=options)
        return cls(
            target,
            channel,
            memory_service_pb2_grpc.MemoryServiceStub(channel),
            event_service_pb2_grpc.EventServiceStub(channel),
        )

    async def save(self, session_id: str, *contents: str, timestamps: list[int] | None = None) -> list[message_pb2.Message]:
        timestamps = timestamps or [0] * len(contents)
        messages = [message_pb2.Message(role="user", content=c, timestamp=t) for c, t in zip(contents, timestamps)]
        response = await self.memory.SaveMessages(
            memory_service_pb2.SaveMessagesRequest(session_id=session_id, messages=messages)
        )
        return list(response.messages)

    def watch(self, **request) -> Stream:
        return Stream(self.events.Watch(event_service_pb2.WatchRequest(**request)))


@dataclass
class Servers:
    """Starts servers on the test's data; stops them all at teardown."""

    backend: str
    data_dir: Path
    mongodb_uri: str
    database: str
    apps: list[App] = field(default_factory=list)
    clients: list[Client] = field(default_factory=list)
    processes: list[ServerProcess] = field(default_factory=list)

    def config(self, **overrides) -> Config:
        # These suites are about Watch; vectors are off unless a test asks for them: the index
        # synchronizer reading the same event logs (tens of thousands of seeded events) made
        # SecantusDB, a Python MongoDB-wire server, miss the tests' 5 s deadlines.
        return Config(
            listen="127.0.0.1:0",
            data_dir=self.data_dir,
            mongodb_uri=self.mongodb_uri,
            mongodb_database=self.database,
            **{"vectors_enabled": False, **overrides},
        )

    async def start(self, **overrides) -> tuple[App, Client]:
        app = await start(self.config(**overrides))
        client = Client.connect(app.port)
        self.apps.append(app)
        self.clients.append(client)
        return app, client

    async def stop(self, app: App, grace: float = 0) -> None:
        self.apps.remove(app)
        await app.stop(grace)

    async def spawn(self, *flags: str) -> Client:
        """Another `memoryd serve` process on the same data (a second replica)."""
        # Its own data dir: the embedded vector store there is single-process.
        data_dir = self.data_dir / f"replica-{len(self.processes)}"
        process = ServerProcess(
            [
                sys.executable, "-m", "memoryd", "serve",
                "--listen", "127.0.0.1:0", "--data-dir", str(data_dir),
                "--mongodb-uri", self.mongodb_uri, "--mongodb-database", self.database,
                "--log-level", "warning", *flags,
            ],
            data_dir,
        )  # fmt: skip
        self.processes.append(process)
        # Off the event loop: the servers this test runs in-process keep serving meanwhile.
        client = Client.connect(await asyncio.to_thread(process.start, WAIT))
        self.clients.append(client)
        return client

    async def close(self) -> None:
        for client in self.clients:
            await client.channel.close()
        for app in self.apps:
            await app.stop(0)
        for process in self.processes:
            process.terminate()


@pytest.fixture
async def servers(backend, request, tmp_path) -> Servers:
    mongodb_uri = "" if backend == "sqlite" else mongo_uri_for(backend, request)
    servers = Servers(backend, tmp_path, mongodb_uri, f"memoryd_events_{uuid.uuid4().hex[:10]}")
    yield servers
    await servers.close()


@pytest.fixture
def session_id() -> str:
    return f"s-{uuid.uuid4().hex[:12]}"


class Stream:
    """A Watch call drained by a background task into `events` and `progress`."""

    def __init__(self, call: grpc.aio.UnaryStreamCall, *, read_delay: float = 0.0) -> None:
        self.call = call
        self.read_delay = read_delay
        self.events: list[event_pb2.Event] = []
        self.progress: list[int] = []  # latest_seq of each progress
        self.heads: list[int] = []  # head_seq of each progress
        self.positions: list[int] = []  # the resume point after each message, in arrival order
        self.error: grpc.aio.AioRpcError | None = None
        self.ended = False
        self._changed = asyncio.Event()
        self._reading = asyncio.Event()
        self._reading.set()
        self._closing = False
        self._task = asyncio.create_task(self._drain())

    def pause(self) -> None:
        """Stop reading after the current message: gRPC flow control then stalls the server."""
        self._reading.clear()

    def resume(self) -> None:
        self._reading.set()

    async def started(self) -> Stream:
        """Wait for the response headers: the server has fixed the stream's starting point."""
        await asyncio.wait_for(self.call.initial_metadata(), WAIT)
        return self

    async def _drain(self) -> None:
        try:
            async for response in self.call:
                if response.HasField("event"):
                    self.events.append(response.event)
                    self.positions.append(response.event.seq)
                else:
                    self.progress.append(response.progress.latest_seq)
                    self.heads.append(response.progress.head_seq)
                    self.positions.append(response.progress.latest_seq)
                self._changed.set()
                if self.read_delay:
                    await asyncio.sleep(self.read_delay)
                await self._reading.wait()
        except grpc.aio.AioRpcError as error:
            if not (self._closing and error.code() == grpc.StatusCode.CANCELLED):
                self.error = error  # CANCELLED counts too unless close() asked for it
        finally:
            self.ended = True
            self._changed.set()

    async def wait_for(self, condition: Callable[[Stream], bool], what: str = "condition") -> None:
        """Wait until `condition` holds. What fails is the stream ending first or stalling
        (no message for WAIT seconds), never its pace: a 100,000-event catch-up on a busy
        machine takes as long as it takes while messages keep coming."""
        while not condition(self):
            if self.ended:
                raise AssertionError(f"stream ended ({self.error!r}) before {what}; got seqs {self.seqs[-20:]}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), WAIT)
            except TimeoutError:
                raise AssertionError(
                    f"stream stalled: no message for {WAIT:.0f} s before {what}; "
                    f"got {len(self.events)} events, the last seqs {self.seqs[-5:]}"
                ) from None

    async def wait_for_seq(self, seq: int) -> None:
        await self.wait_for(lambda s: bool(s.events) and s.events[-1].seq >= seq, f"seq {seq}")

    async def wait_for_type(self, event_type: int, count: int = 1) -> None:
        await self.wait_for(lambda s: sum(e.type == event_type for e in s.events) >= count, f"type {event_type}")

    async def wait_ended(self) -> None:
        await self.wait_for(lambda s: s.ended, "end of stream")

    @property
    def seqs(self) -> list[int]:
        return [e.seq for e in self.events]

    @property
    def position(self) -> int:
        """Where a client resumes: the last event or progress received."""
        return max([*self.seqs, *self.progress, 0])

    async def close(self) -> None:
        self._closing = True
        self.call.cancel()
        self._reading.set()  # a paused reader must see the cancellation
        try:
            await self._task
        except asyncio.CancelledError:
            pass


SEED_PAYLOADS = {
    EventType.COMPRESS_PROGRESS: {"phase": "seed", "progress": 0.5},
    EventType.COMPRESS_REQUESTED: {"requested_by": "seed", "reason": "backlog"},
}


async def seed_events(
    store: Store,
    count: int,
    session_of: Callable[[int], str] = lambda i: "seed",
    type_of: Callable[[int], EventType] = lambda i: EventType.COMPRESS_PROGRESS,
    *,
    chunk: int = 500,
) -> int:
    """Append `count` compress events (the i-th in session `session_of(i)`, of type
    `type_of(i)`) through the store API, `chunk` per transaction; returns the last seq.

    A metadata write without records appends just its events, in one transaction: 100,000
    events take a few seconds on SQLite, where one PublishEvent each would be one commit each.
    Chunks stay small enough for SecantusDB to commit one within the adapter's 5 s call
    timeout on a busy machine (5,000 per transaction did not).
    """
    for first in range(0, count, chunk):
        drafts = [
            EventDraft(type_of(i), session_of(i), SEED_PAYLOADS[type_of(i)])
            for i in range(first, min(count, first + chunk))
        ]
        await store.write_metadata_guarded(DEFAULT_TENANT, [], None, drafts, now_ms())
    return (await store.event_bounds(DEFAULT_TENANT))[1]


def error_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo:
    status = rpc_status.from_call(error)
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info
    raise AssertionError(f"no ErrorInfo in {error!r}")


def rss_kib(pid: int | None = None) -> int:
    for line in Path(f"/proc/{pid or os.getpid()}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0
