"""The way from the embedded default to MongoDB and a Qdrant server, and back, with the commands
a user runs (docs/OPERATIONS.md): every read RPC answers the same on each side."""

from __future__ import annotations

import os
import shlex
import uuid
from dataclasses import replace

import grpc
import pytest

from memoryd.config import Config
from memoryd.domain.transfer import Exporter, Importer
from tests.conftest import mongo_targets, mongo_uri_for
from tests.lifecycle.api import INDEXED_PER_SESSION, Stubs, command, event, fill_user, indexed, memoryd, read_everything
from tests.processes import MemorydServer

QDRANT_URL_ENV = "MEMORYD_TEST_QDRANT_URL"


def rounded(value):
    """Answers with floats to 5 places: Qdrant Edge stores float32, a Qdrant server float64."""
    if isinstance(value, float):
        return round(value, 5)
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [rounded(item) for item in value]
    return value


def data_lines(path) -> list[bytes]:
    """An export's records of the store: without its header (its time differs), vectors or end."""
    return [line for line in path.read_bytes().splitlines()[1:-1] if b'"type":"vector"' not in line]


@pytest.mark.parametrize("mongo", mongo_targets())
async def test_an_embedded_deployment_moves_to_mongodb_and_back(serve, tmp_path, request, mongo):
    # 1. The embedded default, filled through the API by a running `memoryd serve`.
    server = MemorydServer(tmp_path / "embedded", "--qdrant-timeout-seconds", "30")
    online, offline = tmp_path / "online.jsonl", tmp_path / "memoryd.jsonl"
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stubs = Stubs.on(channel)
            written = await fill_user(stubs, "ann", "zebra", 90.0, big=True) + await fill_user(stubs, "bob", "walrus", 0.0)
            await indexed(stubs, 4 * INDEXED_PER_SESSION + 1)
            source = rounded(await read_everything(stubs, written, keyword_index=False))
            assert len(source["GetFullHistory ann-s0"]) == 7 and len(source["ListMetadata memoryd."]) == 14
        # 2. Exported while it serves, to stdout (a snapshot: the server may go on writing).
        await memoryd(shell=f"{command('export', '--data-dir', str(server.data_dir))} > {shlex.quote(str(online))}")
    finally:
        server.terminate()
    # Stopped, its vectors too (Qdrant Edge is the server's while it runs): the same data.
    logs = await memoryd("export", "--data-dir", str(server.data_dir), "--vectors", "--output", str(offline))
    done = event(logs, "export_done")
    assert (done["sessions"], done["messages"], done["vectors"]) == (4, 4 * 6 + 1, 4 * 2)
    assert data_lines(online) == data_lines(offline)

    # 3. Imported into MongoDB, served there with a Qdrant server: the same answers.
    uri, database = mongo_uri_for(mongo, request), f"memoryd_moved_{uuid.uuid4().hex[:8]}"
    logs = await memoryd("import", "--mongodb-uri", uri, "--mongodb-database", database, "--input", str(offline))
    assert event(logs, "import_done")["messages_written"] == done["messages"]
    qdrant = os.environ.get(QDRANT_URL_ENV, ":memory:")  # the in-process stand-in lives in the server's process
    config = Config(
        listen="127.0.0.1:0", http_listen="off", data_dir=tmp_path / "unused", mongodb_uri=uri, mongodb_database=database,
        qdrant_url=qdrant, qdrant_collection_prefix=f"m{uuid.uuid4().hex[:8]}", qdrant_timeout_seconds=30.0,
    )  # fmt: skip
    moved = tmp_path / "moved.jsonl"
    async with serve("mongo", config) as (app, stubs):
        with offline.open("rb") as lines:  # `memoryd import --vectors` into that index: the store's part is skipped
            again = await Importer(app.store, vectors=app.vectors.index).run(lines)
        assert (again.messages_written, again.vectors_written) == (0, done["vectors"])
        assert rounded(await read_everything(stubs, written, keyword_index=False)) == source
        with moved.open("wb") as out:  # `memoryd export --vectors` of that deployment, while it serves
            await Exporter(app.store, out.write, vectors=app.vectors.index).run()

    # 4. And back into a fresh embedded data dir, from stdin.
    fresh = tmp_path / "fresh"
    logs = await memoryd(shell=f"{command('import', '--data-dir', str(fresh), '--vectors')} < {shlex.quote(str(moved))}")
    assert event(logs, "import_done")["vectors_written"] == done["vectors"]
    assert data_lines(moved) == data_lines(offline)
    embedded = replace(config, mongodb_uri="", data_dir=fresh, qdrant_url="", qdrant_collection_prefix="memoryd")
    async with serve("sqlite", embedded) as (_, stubs):
        assert rounded(await read_everything(stubs, written, keyword_index=False)) == source
