"""A full disk is an answer, not a crash (embedded default: SQLite + Qdrant Edge in its engine
process). The data dir is a small tmpfs filled with a ballast file:

- writes answer RESOURCE_EXHAUSTED, ErrorInfo reason STORAGE_FULL (metadata "store" says
  which), over gRPC, HTTP (429, as Connect maps the code) and MCP, and store nothing;
- reads go on; the vector side reports NOT_SERVING on its own health service name;
- the engine process is not restarted in a loop (it never dies: the free-space reserve
  refuses its writes before its memory maps would need a page the disk cannot give);
- a server started on the full disk starts and serves reads;
- once the ballast is deleted, the same server accepts writes again and reports SERVING.

Mounting needs root (CAP_SYS_ADMIN): elsewhere every case is skipped with one line saying why.
"""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc, message_pb2
from memoryd.v1 import vector_service_pb2 as vpb
from memoryd.v1 import vector_service_pb2_grpc
from memoryd.domain.errors import StorageFull
from memoryd.domain.vectors import IndexQuery, PointFilter, VectorPoint, VectorRecord
from memoryd.storage.qdrant import edge
from memoryd.storage.sqlite import reserve as sqlite_reserve
from tests import qdrant_server
from tests.conftest import free_port
from tests.processes import MemorydServer, descendants
from tests.qdrant_server import SERVER_TARGETS
from tests import processes

# The disk is sized from what the server reserves, so that the first writes always have room
# and the ballast fills the rest, whatever the timing of the engine's maintenance:
# - the vector reserve (--vector-min-free-mb): writes and index builds need it free;
# - the two Edge shard pairs the test creates (keywords, and 16 dimensions): a pair is made only
#   with edge.NEW_PAIR_MB free above the reserve, and takes at most that (64 and 84 MB on tmpfs);
# - an index build's copy of a shard, which maintenance may write meanwhile (at most a pair);
# - SQLite: its disk-full reserve file, and the database with its WAL before the ballast.
RESERVE_MB = 16
SHARD_PAIRS = 2
SQLITE_MB = sqlite_reserve.RESERVE_BYTES // edge.MIB + 16
DISK_MB = RESERVE_MB + (SHARD_PAIRS + 1) * edge.NEW_PAIR_MB + SQLITE_MB
VECTOR_SERVICE = "memoryd.v1.VectorService"
WAIT_SECONDS = 60.0
# The largest message written once the disk is full (a message's content may have 1 MiB).
LARGE_TEXT = 900_000

# Two server starts and stops, a 324 MB fill and a few hundred writes: 96 s of one test on a
# loaded 2-core machine (2 busy loops beside load 9-12), against 15 s quiet. The timeout
# detects a stall, it never paces.
pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """An empty DISK_MB tmpfs at tmp_path/data (the servers' data dir); their logs and port
    files stay on tmp_path, which has room."""
    mount = tmp_path / "data"
    mount.mkdir()
    done = processes.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {done.stderr.decode().strip()[:200]}")
    try:
        yield mount
    finally:
        processes.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    """Write a ballast file until the disk refuses another byte."""
    ballast = disk / "ballast"
    with ballast.open("wb", buffering=0) as out:
        for size in (1 << 20, 4096, 1):
            chunk = b"\0" * size
            try:
                while True:
                    out.write(chunk)
            except OSError as error:
                assert error.errno == errno.ENOSPC, error
    assert os.statvfs(disk).f_bavail == 0
    return ballast


def server(workdir: Path) -> MemorydServer:
    http = free_port()
    srv = MemorydServer(
        workdir, "--vector-min-free-mb", str(RESERVE_MB), "--health-check-interval-seconds", "0.2",
        "--http-listen", f"127.0.0.1:{http}",
    )  # fmt: skip
    srv.http_url = f"http://127.0.0.1:{http}"
    return srv


def engine_pids(srv: MemorydServer) -> set[int]:
    found = set()
    for pid in descendants(srv.pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"memoryd.engine" in command or b"edge_process" in command:  # engine.py, or edge_process.py
                found.add(pid)
        except FileNotFoundError:
            pass
    return found


def message(text: str) -> message_pb2.Message:
    return message_pb2.Message(role="user", content=text)


def large_text() -> str:
    return os.urandom(LARGE_TEXT // 2).hex()  # not compressible


def large(n: int) -> list[message_pb2.Message]:
    return [message(large_text()) for _ in range(n)]


def point(key: str) -> vpb.VectorPoint:
    return vpb.VectorPoint(model_id="test:disk", vector=[float(i + 1) for i in range(16)], session_id="s",
                           message_id=key, timestamp=1000, role="user", text=key)


def error_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo:
    rich = status_pb2.Status()
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            rich.ParseFromString(value)
    for detail in rich.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info
    raise AssertionError(f"no ErrorInfo in {error}")


# UpsertVectors records its sessions' activity in the message store before it writes the
# points (a refused call writes nothing): on one full disk either store may refuse it first.
UPSERT_STORES = ("messages", "vectors")


async def refused_as_full(call, store: str | tuple[str, ...]) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await call
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused.value
    info = error_info(refused.value)
    assert info.reason == "STORAGE_FULL", info
    assert info.metadata["store"] in ((store,) if isinstance(store, str) else store), info


class Client:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
        self.vectors = vector_service_pb2_grpc.VectorServiceStub(channel)
        self.health = health_pb2_grpc.HealthStub(channel)

    async def history(self, session: str) -> list[str]:
        response = await self.memory.GetHistory(mem.GetHistoryRequest(session_id=session, limit=1000), timeout=30)
        return [m.content for m in response.messages]

    async def points(self) -> int:
        stats = await self.vectors.GetVectorStats(vpb.GetVectorStatsRequest(), timeout=30)
        return sum(m.count for m in stats.models if m.model_id == "test:disk")

    async def vector_health(self) -> int:
        return (await self.health.Check(health_pb2.HealthCheckRequest(service=VECTOR_SERVICE), timeout=10)).status

    async def until_vector_health(self, status: int) -> None:
        async with asyncio.timeout(WAIT_SECONDS):
            while await self.vector_health() != status:
                await asyncio.sleep(0.1)

    async def until_accepted(self, call) -> object:
        """`call()` once it no longer answers RESOURCE_EXHAUSTED (bounded)."""
        async with asyncio.timeout(WAIT_SECONDS):
            while True:
                try:
                    return await call()
                except grpc.aio.AioRpcError as error:
                    if error.code() not in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE):
                        raise
                await asyncio.sleep(0.1)


async def big_messages(client: Client) -> int:
    info = await client.memory.GetSession(mem.GetSessionRequest(session_id="big"), timeout=30)
    return info.session.message_count


async def fill_with_writes(client: Client) -> None:
    """Save ever smaller messages, each size until the message store refuses it, as a full disk
    must: a server started on a full disk took SQLite's reserve (sqlite/reserve.py), and a
    write SQLite refused leaves its WAL longer, room a smaller write then fits in. Every
    refused write left nothing behind."""
    for size in (LARGE_TEXT, 64_000, 4_000, 500):
        for _ in range(50):
            before = await big_messages(client)
            batch = [message(os.urandom(size // 2).hex()) for _ in range(4)]
            try:
                await client.memory.SaveMessages(mem.SaveMessagesRequest(session_id="big", messages=batch), timeout=30)
            except grpc.aio.AioRpcError as error:
                assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
                assert (error_info(error).reason, error_info(error).metadata["store"]) == ("STORAGE_FULL", "messages")
                assert await big_messages(client) == before
                break
        else:
            raise AssertionError(f"the message store took every write of {size} bytes")


async def writes_refused_then_accepted_once_freed(srv: MemorydServer, client: Client, ballast: Path) -> None:
    """Every write path refuses with STORAGE_FULL and stores nothing; reads go on; the engine is
    never restarted; deleting the ballast brings writes and SERVING back, without a restart."""
    engines = engine_pids(srv)
    assert len(engines) == 1
    await fill_with_writes(client)
    await refused_as_full(client.memory.SaveMessage(mem.SaveMessageRequest(session_id="s", message=large(1)[0]), timeout=30), "messages")
    await refused_as_full(client.vectors.UpsertVectors(vpb.UpsertVectorsRequest(points=[point("late")]), timeout=30), UPSERT_STORES)
    # HTTP answers as Connect maps RESOURCE_EXHAUSTED, with the same ErrorInfo.
    async with httpx.AsyncClient(base_url=srv.http_url, timeout=30) as http:
        body = {"session_id": "s", "message": {"role": "user", "content": large_text()}}
        response = await http.post("/memoryd.v1.MemoryService/SaveMessage", json=body)
    assert response.status_code == 429, response.text
    error = response.json()
    assert error["code"] == "resource_exhausted"
    assert {d["type"]: d["debug"] for d in error["details"]}["google.rpc.ErrorInfo"]["reason"] == "STORAGE_FULL"
    # MCP: a tool error naming the code and the reason.
    from tests.clients.test_mcp_server import stdio_session

    # An entry is small: the room a refused larger write left in SQLite's WAL may still take a
    # few (stored whole), until it is gone too.
    async with stdio_session(srv.target, None) as session:
        for attempt in range(200):
            result = await session.call_tool("memory_save", {"scope": "disk", "text": f"remember this {attempt} " * 20})
            if result.is_error:
                break
        text = result.content[0].text.removeprefix("Error executing tool memory_save: ")
    assert text.startswith("RESOURCE_EXHAUSTED STORAGE_FULL: "), text

    # Nothing partially stored; reads go on; the vector side says it cannot serve.
    assert await client.history("s") == ["one", "two"]
    await client.until_vector_health(health_pb2.HealthCheckResponse.NOT_SERVING)
    for _ in range(20):  # what a retrying client sends meanwhile: no call restarts the engine
        await refused_as_full(client.vectors.UpsertVectors(vpb.UpsertVectorsRequest(points=[point("late")]), timeout=30), UPSERT_STORES)
    assert engine_pids(srv) == engines

    ballast.unlink()
    await client.until_vector_health(health_pb2.HealthCheckResponse.SERVING)
    await client.until_accepted(lambda: client.memory.SaveMessage(mem.SaveMessageRequest(session_id="s", message=message("after")), timeout=30))
    await client.until_accepted(lambda: client.vectors.UpsertVectors(vpb.UpsertVectorsRequest(points=[point("after")]), timeout=30))
    assert await client.history("s") == ["one", "two", "after"]
    assert await client.points() == 2
    assert engine_pids(srv) == engines


async def write_the_first(client: Client) -> None:
    await client.memory.SaveMessages(mem.SaveMessagesRequest(session_id="s", messages=[message("one"), message("two")]), timeout=30)
    await client.vectors.UpsertVectors(vpb.UpsertVectorsRequest(points=[point("first")]), timeout=30)
    await client.until_vector_health(health_pb2.HealthCheckResponse.SERVING)


async def test_a_full_disk_refuses_writes_with_storage_full_and_recovers_when_freed(tmp_path, disk):
    srv = server(tmp_path)
    srv.start()
    try:
        async with grpc.aio.insecure_channel(srv.target) as channel:
            client = Client(channel)
            await write_the_first(client)
            ballast = fill(disk)
            assert await client.points() == 1
            await writes_refused_then_accepted_once_freed(srv, client, ballast)
    finally:
        srv.stop()
    assert "uncaught_exception" not in srv.log()


async def test_a_server_started_on_a_full_disk_serves_reads_and_recovers_when_freed(tmp_path, disk):
    srv = server(tmp_path)
    srv.start()
    try:
        async with grpc.aio.insecure_channel(srv.target) as channel:
            await write_the_first(Client(channel))
    finally:
        srv.stop()
    ballast = fill(disk)
    srv.start()
    try:
        async with grpc.aio.insecure_channel(srv.target) as channel:
            client = Client(channel)
            assert await client.history("s") == ["one", "two"]
            assert "sqlite_disk_full_reserve_released" in srv.log()  # SQLite opened in the reserve's room
            # The engine does not open its shards on a full disk (vector reads wait for room too).
            await client.until_vector_health(health_pb2.HealthCheckResponse.NOT_SERVING)
            await writes_refused_then_accepted_once_freed(srv, client, ballast)
            async with asyncio.timeout(WAIT_SECONDS):  # written again, now that there is room
                while not (disk / "memoryd.db.reserve").exists():
                    await asyncio.sleep(0.1)
    finally:
        srv.stop()
    assert "uncaught_exception" not in srv.log()


@pytest.mark.parametrize("target", SERVER_TARGETS)
async def test_a_qdrant_server_on_a_full_disk_answers_storage_full(tmp_path, disk, target):
    """The server adapter (production): Qdrant's "No space left on device" is StorageFull;
    searches go on; once there is room the same index takes writes again."""
    from memoryd.storage.qdrant.server import QdrantServerIndex

    if why := qdrant_server.unavailable():
        pytest.skip(why)
    if os.environ.get(qdrant_server.URL_ENV):
        pytest.skip("needs a Qdrant server of its own, with its storage on the small disk")
    qdrant = qdrant_server.QdrantServer(qdrant_server.binary(), tmp_path)
    qdrant.storage = disk
    settings = qdrant.start().settings(target)
    index = QdrantServerIndex(
        settings["qdrant_url"], prefer_grpc=bool(settings["qdrant_grpc_port"]),
        grpc_port=settings["qdrant_grpc_port"] or 6334, prefix=settings["qdrant_collection_prefix"],
    )  # fmt: skip
    await index.open()
    try:
        await index.upsert([vector_point("first")], 1)
        ballast = fill(disk)
        with pytest.raises(StorageFull) as full:
            await index.upsert([vector_point("late")], 2)
        assert full.value.metadata == {"store": "vectors"}
        assert await stored_points(index) == {"first"}
        ballast.unlink()
        await index.upsert([vector_point("after")], 3)
        assert await stored_points(index) == {"first", "after"}
    finally:
        await index.close()
        qdrant.stop()


def vector_point(message_id: str) -> VectorPoint:
    return VectorPoint("t", [1.0] * 16, VectorRecord("s", 1000, "test:disk", message_id, "user"))


async def stored_points(index) -> set[str]:
    result = await index.query(IndexQuery(PointFilter("t"), 10, [1.0] * 16))
    return {c.record.message_id for c in result.candidates}


def test_mongodb_out_of_disk_errors_are_storage_full():
    """MongoDB's refusals for want of disk (OutOfDiskSpace, a storage engine's ENOSPC) are
    StorageFull. Only the mapping: SecantusDB, the tests' MongoDB-wire server, panics
    (WiredTiger WT_PANIC, every later call InternalError) on a full disk instead of answering."""
    from pymongo.errors import BulkWriteError, OperationFailure

    from memoryd.storage.mongo.reads import translated_errors

    refusals = [
        OperationFailure("Out of disk space", code=14031),
        BulkWriteError({"writeErrors": [{"index": 0, "code": 14031, "errmsg": "Out of disk space"}]}),
        OperationFailure("WiredTiger error (28) [...]: No space left on device", code=8),
    ]
    for refusal in refusals:
        with pytest.raises(StorageFull) as full, translated_errors():
            raise refusal
        assert full.value.metadata == {"store": "messages"}
    with pytest.raises(OperationFailure), translated_errors():
        raise OperationFailure("internal server error", code=1)
