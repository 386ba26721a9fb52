"""The way from the embedded default to MongoDB and a Qdrant server (the real one of
tests/qdrant_server.py), and back, with the commands a user runs (docs/OPERATIONS.md): every
read RPC answers the same on each side."""

from __future__ import annotations

import shlex
import uuid
from dataclasses import replace

import grpc
import pytest

from memoryd.config import Config
from tests.conftest import mongo_targets, mongo_uri_for
from tests.lifecycle.api import INDEXED_PER_SESSION, Stubs, command, event, fill_user, indexed, memoryd, read_everything
from tests.processes import MemorydServer

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
async def test_an_embedded_deployment_moves_to_mongodb_and_back(serve, tmp_path, request, mongo, qdrant):
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
            # memoryd.* holds the two users' entries, slices and cursors (no per-scope entry counter since 641eeef)
            assert len(source["GetFullHistory ann-s0"]) == 7 and len(source["ListMetadata memoryd."]) == 12
        # 2. Exported while it serves, to stdout (a snapshot: the server may go on writing).
        await memoryd(shell=f"{command('export', '--data-dir', str(server.data_dir))} > {shlex.quote(str(online))}")
    finally:
        server.terminate()
    # Stopped, its vectors too (Qdrant Edge is the server's while it runs): the same data.
    logs = await memoryd("export", "--data-dir", str(server.data_dir), "--vectors", "--output", str(offline))
    done = event(logs, "export_done")
    assert (done["sessions"], done["messages"], done["vectors"]) == (4, 4 * 6 + 1, 4 * 2)
    assert data_lines(online) == data_lines(offline)

    # 3. Imported into MongoDB and a Qdrant server, served there: the same answers.
    uri, database = mongo_uri_for(mongo, request), f"memoryd_moved_{uuid.uuid4().hex[:8]}"
    vectors = qdrant.settings("server-grpc")  # a collection prefix of its own
    mongodb = ["--mongodb-uri", uri, "--mongodb-database", database, *(f"--{k.replace('_', '-')}={v}" for k, v in vectors.items())]
    logs = await memoryd("import", *mongodb, "--vectors", "--input", str(offline))
    done_import = event(logs, "import_done")
    assert (done_import["messages_written"], done_import["vectors_written"]) == (done["messages"], done["vectors"])
    config = Config(
        listen="127.0.0.1:0", http_listen="off", data_dir=tmp_path / "unused", mongodb_uri=uri, mongodb_database=database,
        qdrant_timeout_seconds=30.0, **vectors,
    )  # fmt: skip
    fresh = tmp_path / "fresh"
    async with serve("mongo", config) as (_, stubs):
        assert rounded(await read_everything(stubs, written, keyword_index=False)) == source
        # 4. And back into a fresh embedded data dir while it serves: export to stdout, import from stdin.
        logs = await memoryd(shell=f"{command('export', *mongodb, '--vectors')} | {command('import', '--data-dir', str(fresh), '--vectors')}")
    assert event(logs, "import_done")["vectors_written"] == done["vectors"]
    embedded = replace(config, mongodb_uri="", data_dir=fresh, qdrant_url="", qdrant_collection_prefix="memoryd")
    async with serve("sqlite", embedded) as (_, stubs):
        assert rounded(await read_everything(stubs, written, keyword_index=False)) == source
