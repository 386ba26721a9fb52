"""A replicated Qdrant cluster survives the loss of a node (issue 42).

Three nodes of the real Qdrant binary (`../shared/bin/qdrant`, tests/qdrant_server.py) in
cluster mode, each on a loopback address of its own (127.0.0.1-3) with the same REST, gRPC and
peer-to-peer ports, as hosts would be, and its own storage; node 1 starts the cluster
(`--uri`), nodes 2 and 3 join it (`--bootstrap`). memoryd (SQLite store, its server-side
embedder a local endpoint) is given all three nodes (`--qdrant-url` lists them) and creates
its collections with 3 shards, 2 copies of each and a write acknowledged by 1 copy
(`--qdrant-shards 3 --qdrant-replication-factor 2 --qdrant-write-consistency 1`).

While writers save messages and readers search, node 1 is killed (kill -9): the node memoryd
talks to, the one that founded the cluster and its first Raft leader.
- memoryd moves to the next node of its list; once the cluster reports node 1's replicas
  Dead, every search answers, and the saves go on;
- the index catches up with the log (indexing resumes);
- node 1 restarts on its storage and its replicas report Active again;
- then node 2 is killed as well: every shard is now read from the copy on node 1 or node 3,
  and the index still equals the store, message by message, keyword and dense points (so node
  1's copies caught up with what was written while it was down).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest

from memoryd.storage.qdrant.server import QdrantServerIndex
from memoryd.storage.sqlite.store import SqliteStore
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc, message_pb2, vector_service_pb2_grpc
from memoryd.v1 import vector_service_pb2 as vpb
from memoryd.vectors.sync import RecallIndexer
from memoryd.workers import signal_on_parent_death
from tests import processes
from tests.conftest import free_port
from tests.qdrant_server import _storage_dir, binary, collection_prefix
from tests.vectors.index_state import difference

ROOT = Path(__file__).resolve().parents[2]
DIMS = 8
MODEL = "cluster-test"
TENANT = "default"
# Bounds that detect a stall (never pacing): a node joining, a replica changing state, the
# index catching up.
STALL_SECONDS = 90.0
NODES = 3
# Three Qdrant processes, memoryd and an embedder: about a minute on a busy 2-core machine.
pytestmark = pytest.mark.timeout(300)


@dataclass
class Node:
    """One Qdrant peer on a loopback address of its own (127.0.0.N), all on the same ports as
    a cluster of hosts would be; its address, ports and storage stay across a kill and a restart."""

    index: int
    executable: Path
    directory: Path
    http_port: int
    grpc_port: int
    p2p_port: int
    process: subprocess.Popen | None = None

    def __post_init__(self) -> None:
        self.storage = _storage_dir(self.directory)

    @property
    def host(self) -> str:
        return f"127.0.0.{self.index}"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.http_port}"

    @property
    def peer_uri(self) -> str:
        return f"http://{self.host}:{self.p2p_port}"

    def start(self, bootstrap: Node | None = None) -> None:
        """Start the node (joining `bootstrap`'s cluster the first time) and wait until its
        REST port answers."""
        workdir = self.directory / "cwd"  # empty: no config/*.yaml to pick up
        workdir.mkdir(parents=True, exist_ok=True)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("QDRANT__")},
            "QDRANT__SERVICE__HOST": self.host,
            "QDRANT__SERVICE__HTTP_PORT": str(self.http_port),
            "QDRANT__SERVICE__GRPC_PORT": str(self.grpc_port),
            "QDRANT__CLUSTER__ENABLED": "true",
            "QDRANT__CLUSTER__P2P__PORT": str(self.p2p_port),
            "QDRANT__STORAGE__STORAGE_PATH": str(self.storage / "storage"),
            "QDRANT__STORAGE__SNAPSHOTS_PATH": str(self.storage / "snapshots"),
            "QDRANT__TELEMETRY_DISABLED": "true",
            "QDRANT__LOG_LEVEL": "WARN",
        }
        argv = [str(self.executable), "--uri", self.peer_uri]
        if bootstrap is not None:
            argv += ["--bootstrap", bootstrap.peer_uri]
        # The kernel ends the node if pytest dies, set up in the child before exec; only at the
        # first start, before any gRPC thread runs here: a restart forks while gRPC's threads
        # run, and a child that runs Python code then may die before exec (seen: gRPC's epoll
        # failing in the child). Its process group still ends with the test.
        first = self.process is None
        with (self.directory / "qdrant.log").open("ab") as log:
            self.process = processes.popen(
                argv, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                preexec_fn=signal_on_parent_death if first else None,
            )  # fmt: skip
        _until(lambda: self._alive() and self._answers(), f"qdrant node {self.index} to answer")

    def kill(self) -> None:
        """kill -9: no shutdown at all."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)
        shutil.rmtree(self.storage, ignore_errors=True)

    def rest(self, path: str) -> dict:
        with urllib.request.urlopen(self.url + path, timeout=10) as response:
            return json.loads(response.read())["result"]

    def _alive(self) -> bool:
        if self.process is None or self.process.poll() is not None:
            log = (self.directory / "qdrant.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"qdrant node {self.index} exited; its log:\n{log}")
        return True

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/healthz", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False


def _until(check, what: str, seconds: float = STALL_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"still waiting for {what} after {seconds} s"
        time.sleep(0.2)


async def _until_async(check, what: str, seconds: float = STALL_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not await asyncio.to_thread(check):
        assert time.monotonic() < deadline, f"still waiting for {what} after {seconds} s"
        await asyncio.sleep(0.2)


def _replicas(node: Node, collection: str) -> dict[tuple[int, int], str]:
    """(shard, peer) -> state of every replica of `collection`, as `node` sees them."""
    info = node.rest(f"/collections/{collection}/cluster")
    states = {(s["shard_id"], info["peer_id"]): s["state"] for s in info["local_shards"]}
    states.update({(s["shard_id"], s["peer_id"]): s["state"] for s in info["remote_shards"]})
    return states


def _peer_id(node: Node) -> int:
    return node.rest("/cluster")["peer_id"]


@pytest.fixture
def cluster(tmp_path: Path):
    executable = binary()
    if executable is None or not os.access(executable, os.X_OK):
        pytest.skip(
            "no Qdrant binary: ../shared/bin/qdrant not found (or set MEMORYD_TEST_QDRANT_BIN); docs/SCALING.md"
        )
    for n in range(2, NODES + 1):
        with socket.socket() as probe:
            try:
                probe.bind((f"127.0.0.{n}", 0))
            except OSError:
                pytest.skip(f"127.0.0.{n} is not a local address here (Linux answers on all of 127/8)")
    ports = (free_port(), free_port(), free_port())  # REST, gRPC, peer-to-peer: the same on every node
    nodes = [Node(i + 1, executable, tmp_path / f"qdrant{i + 1}", *ports) for i in range(NODES)]
    try:
        nodes[0].start()
        for node in nodes[1:]:
            node.start(bootstrap=nodes[0])
        _until(lambda: len(nodes[0].rest("/cluster")["peers"]) == NODES, "every peer to join the cluster")
        yield nodes
    finally:
        for node in nodes:
            node.stop()


@dataclass
class Load:
    """Writers saving one message per call and readers searching, until stopped."""

    target: str
    saved: list[str] = field(default_factory=list)  # contents of acknowledged saves
    last_seq: int = 0
    save_errors: list[tuple[float, str]] = field(default_factory=list)  # (monotonic time, code)
    searches: list[tuple[float, float, str]] = field(default_factory=list)  # (started, ended, code or "OK")
    search_errors: list[str] = field(default_factory=list)  # "CODE: details" of each failed search
    running: bool = True

    async def write(self, channel: grpc.aio.Channel, writer: int) -> None:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
        n = 0
        while self.running:
            content = f"writer {writer} note {n} about cluster replicas"
            try:
                saved = await stub.SaveMessages(
                    mem.SaveMessagesRequest(
                        session_id=f"s{writer}", messages=[message_pb2.Message(role="user", content=content)]
                    ),
                    timeout=10,
                )
            except grpc.aio.AioRpcError as error:
                self.save_errors.append((time.monotonic(), error.code().name))
                await asyncio.sleep(0.05)
                continue
            self.saved.append(content)
            self.last_seq = max(self.last_seq, saved.event_seq)
            n += 1

    async def search(self, channel: grpc.aio.Channel) -> None:
        stub = vector_service_pb2_grpc.VectorServiceStub(channel)
        while self.running:
            started = time.monotonic()
            try:
                await stub.SearchMemory(
                    vpb.SearchMemoryRequest(query_text="cluster replicas note", top_k=5), timeout=10
                )
                code = "OK"
            except grpc.aio.AioRpcError as error:
                code = error.code().name
                self.search_errors.append(f"{code}: {error.details()}")
            self.searches.append((started, time.monotonic(), code))
            await asyncio.sleep(0.02)


async def _caught_up(channel: grpc.aio.Channel, seq: int) -> None:
    """Wait until the index has applied the log through `seq` (a search that waits for it)."""
    stub = vector_service_pb2_grpc.VectorServiceStub(channel)
    deadline = time.monotonic() + STALL_SECONDS
    while True:
        try:
            await stub.SearchMemory(vpb.SearchMemoryRequest(query_text="cluster", wait_for_event_seq=seq), timeout=10)
            return
        except grpc.aio.AioRpcError as error:
            if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise
            assert time.monotonic() < deadline, f"the index did not reach seq {seq} in {STALL_SECONDS} s"


async def test_a_three_node_cluster_with_two_copies_survives_a_node_kill_and_the_node_catches_up(cluster, tmp_path):
    node1, node2, node3 = cluster
    embed_server = str(ROOT / "tests" / "load" / "embed_server.py")
    argv = [sys.executable, embed_server, "--listen", "127.0.0.1:0", "--dims", str(DIMS)]
    embedder = processes.ServerProcess(argv, tmp_path, name="embedder", cwd=ROOT)
    embedder.start()
    prefix = collection_prefix()
    urls = ",".join(node.url for node in cluster)
    server = processes.MemorydServer(
        tmp_path / "memoryd",
        "--qdrant-url", urls, "--qdrant-grpc-port", str(node1.grpc_port), "--qdrant-collection-prefix", prefix,
        "--qdrant-shards", "3", "--qdrant-replication-factor", "2", "--qdrant-write-consistency", "1",
        "--embedder-url", f"http://{embedder.target}/v1", "--embedder-model", MODEL,
        "--vector-sync-max-backoff-seconds", "1",
    )  # fmt: skip
    try:
        server.start()
        load = Load(server.target)
        async with grpc.aio.insecure_channel(server.target) as channel:
            tasks = [asyncio.create_task(load.write(channel, w)) for w in range(3)]
            tasks += [asyncio.create_task(load.search(channel)) for _ in range(2)]
            try:
                await _until_async(lambda: len(load.saved) >= 30, "the first saves")
                await _caught_up(channel, load.last_seq)
                listed = node1.rest("/collections")["collections"]
                collections = sorted(c["name"] for c in listed if c["name"].startswith(prefix))
                assert len(collections) == 2  # the keyword collection and the dense one of DIMS
                for name in collections:
                    info = node1.rest(f"/collections/{name}")
                    params = info["config"]["params"]
                    layout = (params["shard_number"], params["replication_factor"], params["write_consistency_factor"])
                    assert layout == (3, 2, 1)
                    states = _replicas(node1, name)
                    assert len(states) == 6 and set(states.values()) == {"Active"}
                    assert len({peer for _, peer in states}) == NODES  # spread over every node
                    assert info["payload_schema"]["tenant"]["params"]["is_tenant"] is True

                lost = _peer_id(node1)
                killed_at = time.monotonic()
                await asyncio.to_thread(node1.kill)  # the load goes on meanwhile

                def dead_reported() -> bool:
                    return all(
                        state == "Dead"
                        for name in collections
                        for (_, peer), state in _replicas(node2, name).items()
                        if peer == lost
                    )

                await _until_async(dead_reported, "the cluster to report node 1's replicas Dead")
                dead_at = time.monotonic()
                saved_before = len(load.saved)
                searched_before = len(load.searches)
                await _until_async(
                    lambda: len(load.saved) >= saved_before + 30 and len(load.searches) >= searched_before + 20,
                    "saves and searches after the node's replicas were reported dead",
                )
                after = [code for started, _, code in load.searches if started >= dead_at]
                assert after and set(after) == {"OK"}, f"searches after the peer was reported dead: {after}"
                await _caught_up(channel, load.last_seq)  # indexing resumed

                await asyncio.to_thread(node1.start)  # same address, ports, storage: it rejoins as the same peer
                assert _peer_id(node1) == lost
                for name in collections:
                    await _until_async(
                        lambda name=name: set(_replicas(node2, name).values()) == {"Active"},
                        f"node 1's replicas of {name} to be Active again",
                    )
            finally:
                load.running = False
                await asyncio.gather(*tasks)
            await _caught_up(channel, load.last_seq)
        assert "the next calls go to" in server.log()  # memoryd left node 1 for the next node
        during = [code for started, _, code in load.searches if killed_at <= started < dead_at]
        failed = [(round(started - killed_at, 2), code) for started, _, code in load.searches if code != "OK"]
        print(
            f"saves {len(load.saved)} (failed calls {len(load.save_errors)}), searches {len(load.searches)}; "
            f"replicas reported dead {dead_at - killed_at:.2f} s after the kill; "
            f"searches in between {len(during)}, failed {len([c for c in during if c != 'OK'])}; "
            f"every failed search (s after the kill, code): {failed}; {load.search_errors}"
        )
        # A search may fail while the node goes (UNAVAILABLE, retryable), never crash.
        assert {code for _, code in failed} <= {"UNAVAILABLE", "DEADLINE_EXCEEDED"}, failed
        assert "rpc_crashed" not in server.log()
        assert server.terminate() == 0
    finally:
        server.stop()
        embedder.stop()

    # Node 2 down as well: each shard is read from the one copy left, on node 1 or node 3.
    node2.kill()
    store = SqliteStore(server.data_dir / "memoryd.db")
    index = QdrantServerIndex(urls, grpc_port=node1.grpc_port, prefix=prefix, timeout=30)
    await store.open()
    await index.open()
    try:
        indexer = RecallIndexer(store, index)
        keyword = await difference(indexer, TENANT)
        dense = await difference(indexer, TENANT, dimension=DIMS)
        assert (len(keyword.missing), len(keyword.orphans)) == (0, 0)
        assert (len(dense.missing), len(dense.orphans)) == (0, 0)
        stored = {m.content for w in range(3) for m in await store.history(TENANT, f"s{w}", 1_000_000)}
        assert set(load.saved) <= stored  # every acknowledged save is in the store
    finally:
        with contextlib.suppress(Exception):
            await index.close()
        await store.close()
