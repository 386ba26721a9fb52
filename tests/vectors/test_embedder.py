"""The server-side embedder path.

The external embedding service is stood in for by a tiny OpenAI-compatible HTTP server
started by these tests (`/v1/embeddings`). It returns deterministic bag-of-words vectors:
each lower-cased word hashes to one of 32 dimensions, normalized, so texts that share
words are similar. It is a real HTTP server over a real socket, not a mock of memoryd.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memoryd.v1 import memory_service_pb2 as mem_pb
from memoryd.v1 import message_pb2
from memoryd.v1 import vector_service_pb2 as pb
from memoryd.app import start
from memoryd.vectors.embedder import OpenAIEmbedder
from tests.vectors.conftest import on_recall_targets
from tests.vectors.test_service import Client, server_config
from tests.vectors.index_state import difference, drained

DIMS = 32


def bag_of_words(text: str) -> list[float]:
    vector = [0.0] * DIMS
    for word in text.lower().split():
        word = word.strip(".,!?")
        if word:
            vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMS] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector] if any(vector) else [1.0] + [0.0] * (DIMS - 1)


class EmbeddingHandler(BaseHTTPRequestHandler):
    requests: list[dict] = []
    # Requests whose text contains "slow" wait for this (a test holds an embedding in flight).
    slow_started = threading.Event()
    slow_release = threading.Event()
    fail_next = 0  # answer this many requests with 503 (an embedder outage)
    down = False  # answer every request with 503 until set back (an outage of unknown length)

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        EmbeddingHandler.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if EmbeddingHandler.down or EmbeddingHandler.fail_next > 0:
            EmbeddingHandler.fail_next = max(0, EmbeddingHandler.fail_next - 1)
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if any("slow" in text for text in inputs):
            EmbeddingHandler.slow_started.set()
            EmbeddingHandler.slow_release.wait(30)
        reply = json.dumps(
            {"object": "list", "model": body["model"],
             "data": [{"object": "embedding", "index": i, "embedding": bag_of_words(t)} for i, t in enumerate(inputs)]}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def embedding_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), EmbeddingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    EmbeddingHandler.requests.clear()
    EmbeddingHandler.slow_started.clear()
    EmbeddingHandler.slow_release.clear()
    EmbeddingHandler.fail_next = 0
    EmbeddingHandler.down = False
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    EmbeddingHandler.slow_release.set()
    server.shutdown()
    server.server_close()


class KeepAliveHandler(EmbeddingHandler):
    """The same answers over HTTP/1.1 connections kept open between requests; counts them."""

    protocol_version = "HTTP/1.1"
    connections = 0

    def setup(self) -> None:  # once per connection
        super().setup()
        KeepAliveHandler.connections += 1


@pytest.fixture
def keep_alive_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), KeepAliveHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    KeepAliveHandler.connections = 0
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


async def test_the_embedder_reuses_its_connections_and_logs_no_request(keep_alive_server, caplog):
    """A SearchMemory with only a text embeds it per call: no new connection and no log
    line per request (docs/PERFORMANCE.md, run Q)."""
    caplog.set_level(logging.INFO)
    embedder = OpenAIEmbedder(keep_alive_server, "bow")
    try:
        for n in range(20):
            [vector] = await embedder.embed([f"text {n}"])
            assert vector == bag_of_words(f"text {n}")
        assert KeepAliveHandler.connections == 1
        found = await asyncio.gather(*(embedder.embed([f"at once {n}"]) for n in range(8)))
        assert [v for [v] in found] == [bag_of_words(f"at once {n}") for n in range(8)]
        opened = KeepAliveHandler.connections
        assert opened <= 8
        for n in range(20):
            await embedder.embed([f"again {n}"])
        assert KeepAliveHandler.connections == opened  # the pool's connections, kept alive
    finally:
        await embedder.close()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO] == []


@pytest.fixture
async def app(target, tmp_path, embedding_server, monkeypatch):
    app = await start(server_config(target, tmp_path, embedder_url=embedding_server, embedder_model="bow",
                                    embedder_api_key="secret-key"))
    yield app
    await app.stop(0)


def message(role: str, content: str, ts: int, **kwargs) -> message_pb2.Message:
    return message_pb2.Message(role=role, content=content, timestamp=ts, **kwargs)


@on_recall_targets
async def test_saved_messages_are_indexed_in_the_background_and_found_by_text(app):
    client = Client(app.port)
    visible = message("assistant", '{"envelope": true}', 2000)
    visible.metadata.update({"visibleContent": "the alps are beautiful in summer"})
    stored = await client.save(
        "trip",
        message("user", "I love hiking in the alps", 1000),
        visible,
        message("system", "hiking delivery report", 3000),
        message("user", "hiking summary", 4000, kind="summary"),
        message("notice", "hiking notice", 5000),
        message("user", "   ", 6000),  # nothing to search for: queued, then skipped by the job
    )
    await drained(app.vectors)
    stats = await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())
    assert stats.embedder_configured and [(m.model_id, m.count) for m in stats.models] == [("openai:bow", 2)]
    assert stats.keyword_points == 2
    assert EmbeddingHandler.requests[0]["path"] == "/v1/embeddings"
    assert EmbeddingHandler.requests[0]["auth"] == "Bearer secret-key"

    response = await client.vectors.SearchMemory(pb.SearchMemoryRequest(query_text="hiking in the alps", context_window=0))
    assert response.model_id == "openai:bow"
    assert [h.text for h in response.hits][:2] == ["I love hiking in the alps", "the alps are beautiful in summer"]
    assert response.hits[0].message_id == stored[0].id and response.hits[0].role == "user"
    await client.channel.close()


@on_recall_targets
async def test_rewritten_messages_are_reindexed_in_place(app):
    client = Client(app.port)
    await client.save("trip", message("user", "we go hiking tomorrow", 1000))
    await drained(app.vectors)
    changed = await client.memory.UpdateMessageContent(
        mem_pb.UpdateMessageContentRequest(session_id="trip", old_text="hiking", new_text="sailing")
    )
    assert changed.changed_count == 1
    await drained(app.vectors)
    stats = await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())
    assert [(m.model_id, m.count) for m in stats.models] == [("openai:bow", 1)]  # replaced, not added
    response = await client.vectors.SearchMemory(pb.SearchMemoryRequest(query_text="sailing", context_window=0))
    assert [h.text for h in response.hits] == ["we go sailing tomorrow"]
    await client.channel.close()


@on_recall_targets
async def test_an_embedding_that_fails_is_retried_until_the_embedder_answers(app):
    client = Client(app.port)
    EmbeddingHandler.fail_next = 2  # the embedder is down for the first two attempts
    await client.save("trip", message("user", "pack the tent", 1000))
    await asyncio.wait_for(drained(app.vectors), 30)
    stats = await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())
    assert sum(m.count for m in stats.models) == 1
    assert len(EmbeddingHandler.requests) == 3 and app.vectors.positions.retries >= 2
    await client.channel.close()


async def converged_stats(client: Client, done) -> pb.GetVectorStatsResponse:
    """GetVectorStats, polled (bounded: an upper bound, not a timing) until `done(stats)`."""
    async with asyncio.timeout(30):
        while not done(stats := await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())):
            await asyncio.sleep(0.05)
    return stats


@on_recall_targets
async def test_the_embeddings_converge_to_the_store_after_an_embedder_outage(app):
    """While the embedder answers nothing but 503, 50 messages are saved, a batch-mate of one
    save deleted and one message rewritten: the writes succeed, the keyword points come, the
    synchronizer's position stays behind the log. Once the embedder is back, the model's
    points are exactly the store's indexable messages (0 missing, 0 orphans), as stored now."""
    client = Client(app.port)
    EmbeddingHandler.down = True
    saved = []
    for n in range(10):  # five batch-mates per save, sharing a timestamp
        saved += await client.save(f"s{n % 3}", *(message("user", f"outage note {n}-{k}", 1000 * (n + 1)) for k in range(5)))
    await client.memory.DeleteMessages(mem_pb.DeleteMessagesRequest(session_id="s0", ids=[saved[1].id]))
    changed = await client.memory.UpdateMessageContent(
        mem_pb.UpdateMessageContentRequest(session_id="s1", old_text="outage note 1-2", new_text="rewritten while down")
    )
    assert changed.changed_count == 1

    # The keyword index proceeds; the batch's embedder request follows its keyword points.
    down = await converged_stats(client, lambda s: s.keyword_points == 49 and bool(EmbeddingHandler.requests))
    assert down.indexed_through_seq < down.event_seq  # lag: the log is not applied past the outage
    assert sum(m.count for m in down.models) == 0 and EmbeddingHandler.requests

    EmbeddingHandler.down = False
    await converged_stats(client, lambda s: s.indexed_through_seq == s.event_seq)
    for dimension in (DIMS, 0):  # the model's points, then the keyword points, vs the store
        diff = await difference(app.vectors.indexer, "default", dimension=dimension)
        assert (len(diff.missing), len(diff.orphans)) == (0, 0), (dimension, diff)
    stats = await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())
    assert [(m.model_id, m.count) for m in stats.models] == [("openai:bow", 49)]
    response = await client.vectors.SearchMemory(pb.SearchMemoryRequest(query_text="rewritten while down", context_window=0))
    assert response.model_id == "openai:bow" and response.hits[0].message_id == saved[7].id
    assert response.hits[0].text == "rewritten while down"
    await client.channel.close()


@on_recall_targets
async def test_a_message_deleted_while_it_is_embedded_leaves_no_vector(app):
    client = Client(app.port)
    [slow] = await client.save("trip", message("user", "a slow message", 1000))
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, EmbeddingHandler.slow_started.wait, 30)  # embedding in flight
    await client.memory.DeleteMessages(mem_pb.DeleteMessagesRequest(session_id="trip", ids=[slow.id]))
    EmbeddingHandler.slow_release.set()
    await drained(app.vectors)
    stats = await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())
    assert sum(m.count for m in stats.models) == 0
    await client.channel.close()
