"""No message text, token or personal data in logs above debug: a real `memoryd serve` at
log level info gets RPCs carrying distinctive strings in every free-text field (and a
wrong token, and rejected requests); none of those strings may appear in its stderr."""

from __future__ import annotations

import os
import uuid

import grpc
from google.protobuf import struct_pb2

from memoryd.v1 import entry_service_pb2 as ent
from memoryd.v1 import event_pb2
from memoryd.v1 import event_service_pb2 as ev
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import message_pb2
from memoryd.v1 import metadata_service_pb2 as meta
from memoryd.v1 import summary_service_pb2 as summ
from memoryd.v1 import vector_service_pb2 as vec
from tests.processes import MemorydServer
from tests.security.harness import Caller, new_token
from tests import processes


def _struct(**fields) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(fields)
    return s


async def test_info_logs_carry_no_content_tokens_or_personal_data(tmp_path):
    token, wrong = new_token(), new_token()
    mark = uuid.uuid4().hex[:10]
    secrets = {name: f"{name}-{mark}" for name in (
        "content", "reasoning", "sender", "visible", "segment", "toolargs", "metadata", "summary",
        "entry", "query", "newtext", "compress", "pointtext", "speaker",
    )}
    server = MemorydServer(tmp_path, "--log-level", "info", env={"MEMORYD_TOKENS": f"acme: {token}"})
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            caller = Caller(channel, token, "acme")
            message = message_pb2.Message(
                role="user",
                content=secrets["content"],
                reasoning_content=secrets["reasoning"],
                metadata=_struct(sender={"name": secrets["sender"]}, visibleContent=secrets["visible"], platform="qq"),
                segments=[message_pb2.Segment(type="text", data=_struct(text=secrets["segment"]))],
                tool_calls=[message_pb2.ToolCall(id="c1", name="search", arguments=f'{{"q": "{secrets["toolargs"]}"}}')],
            )
            saved = await caller.call("memory", "SaveMessage", mem.SaveMessageRequest(session_id="s", message=message))
            await caller.call("memory", "GetHistory", mem.GetHistoryRequest(session_id="s"))
            await caller.call(
                "memory",
                "UpdateMessageContent",
                mem.UpdateMessageContentRequest(session_id="s", old_text=secrets["content"], new_text=secrets["newtext"]),
            )
            await caller.call(
                "metadata", "SaveMetadata", meta.SaveMetadataRequest(namespace="n", key="k", data=_struct(v=secrets["metadata"]))
            )
            await caller.call(
                "events",
                "PublishEvent",
                ev.PublishEventRequest(session_id="s", compress_requested=event_pb2.CompressRequested(reason=secrets["compress"])),
            )
            await caller.call(
                "summaries",
                "SaveSummary",
                summ.SaveSummaryRequest(session_id="s", from_seq=1, to_seq=saved.message.seq, text=secrets["summary"]),
            )
            await caller.call("entries", "SaveEntry", ent.SaveEntryRequest(scope="u", text=secrets["entry"]))
            await caller.call("entries", "SearchEntries", ent.SearchEntriesRequest(scope="u", query=secrets["query"]))
            point = vec.VectorPoint(
                model_id="m:x", vector=[1, 0, 0], session_id="s", timestamp=5, text=secrets["pointtext"], speaker_label=secrets["speaker"]
            )
            await caller.call("vectors", "UpsertVectors", vec.UpsertVectorsRequest(points=[point]))
            await caller.call("vectors", "SearchMemory", vec.SearchMemoryRequest(query_vector=[1, 0, 0], model_id="m:x"))
            # Failures are logged too: a wrong token, rejected input carrying the secrets.
            for bad in (
                Caller(channel, wrong, "acme").call("memory", "GetHistory", mem.GetHistoryRequest(session_id="s")),
                caller.call("memory", "SaveMessage", mem.SaveMessageRequest(session_id="s", message=message_pb2.Message(content=secrets["content"]))),
                caller.call("memory", "UpdateMessageContent", mem.UpdateMessageContentRequest(session_id="s", old_text=secrets["content"] * 9999)),
                caller.call("vectors", "SearchMemory", vec.SearchMemoryRequest(query_text=secrets["query"])),
            ):
                try:
                    await bad
                except grpc.aio.AioRpcError:
                    pass
        assert server.terminate() == 0
    finally:
        server.stop()
    log = server.log()
    assert '"serving"' in log and '"rpc_failed"' in log  # the log was captured, failures included
    leaked = [name for name, value in {**secrets, "token": token, "wrong token": wrong}.items() if value in log]
    assert not leaked, f"found in info logs: {leaked}"


# -- every stderr line is one JSON object ----------------------------------------------------
import base64
import json
import sys
from pathlib import Path

MEMORYD = str(Path(sys.executable).with_name("memoryd"))


def _json_lines(text: str) -> list[dict]:
    records = []
    for line in text.splitlines():
        record = json.loads(line)  # fails the test on any line that is not JSON
        assert isinstance(record, dict), line
        assert {"event", "level", "logger", "timestamp"} <= record.keys(), line
        records.append(record)
    return records


def _failed_start(tmp_path, *args: str, env: dict[str, str] | None = None) -> tuple[int, list[dict]]:
    process = processes.run(
        [MEMORYD, "serve", "--data-dir", str(tmp_path / "data"), "--vectors-enabled", "false", *args],
        capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})},
    )
    return process.returncode, _json_lines(process.stderr)


async def test_every_stderr_line_of_a_server_run_is_json_and_forged_tokens_log_no_error(tmp_path):
    token = new_token()
    mark = uuid.uuid4().hex[:12]
    forged = base64.urlsafe_b64encode(json.dumps({"q": "x", "p": {"ts": mark}}).encode()).decode()
    server = MemorydServer(tmp_path, "--log-level", "info", env={"MEMORYD_TOKENS": f"acme: {token}"})
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            caller = Caller(channel, token, "acme")
            await caller.call("memory", "SaveMessage", mem.SaveMessageRequest(session_id="s", message=message_pb2.Message(role="user")))
            for request in (
                mem.GetFullHistoryRequest(session_id="s", page_token=forged),
                mem.GetFullHistoryRequest(session_id="s", page_token=mark),
            ):
                try:
                    await caller.call("memory", "GetFullHistory", request)
                    raise AssertionError("a forged token was accepted")
                except grpc.aio.AioRpcError as error:
                    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
            undecodable = channel.unary_unary("/memoryd.v1.MetadataService/SaveMetadata", request_serializer=None)
            try:
                await undecodable(bytes.fromhex("0a03fffec312016b"), metadata=caller.auth, timeout=10)
            except grpc.aio.AioRpcError as error:
                assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and "Error" not in error.details()
        assert server.terminate() == 0
    finally:
        server.stop()
    records = _json_lines(server.log())
    events = {r["event"] for r in records}
    assert {"serving", "rpc_failed", "stopped"} <= events
    assert {r["logger"] for r in records} >= {"memoryd.app", "memoryd.rpc"}
    assert not [r for r in records if r["level"] in ("error", "critical")], "forged or malformed input logged as an error"
    assert mark not in server.log()


def test_stdlib_records_are_json_with_their_extra_fields(tmp_path):
    server = MemorydServer(tmp_path, "--workers", "2", "--vectors-enabled", "false")
    server.start()
    try:
        assert server.terminate() == 0
    finally:
        server.stop()
    records = _json_lines(server.log())
    serving = [r for r in records if r["logger"] == "memoryd.workers" and r["event"] == "workers serving"]
    assert serving and serving[0]["workers"] == 2 and serving[0]["level"] == "info"  # an `extra=` field


def test_startup_failures_are_json_and_a_port_in_use_says_so(tmp_path):
    first = MemorydServer(tmp_path / "first", "--vectors-enabled", "false")
    (tmp_path / "first").mkdir()
    first.start()
    try:
        code, records = _failed_start(tmp_path / "second", "--listen", first.target)
    finally:
        first.stop()
    assert code == 1
    assert any("address already in use" in r.get("error", "") for r in records), records
    code, records = _failed_start(tmp_path / "third", "--listen", "0.0.0.0:0")
    assert code == 2 and records[-1]["event"] == "startup_refused"
    code, records = _failed_start(tmp_path / "fourth", "--no-such-flag")
    assert code == 2 and records[-1]["event"] == "usage_error"
    code, records = _failed_start(tmp_path / "fifth", env={"MEMORYD_TOKENS": "acme: short"})
    assert code == 2 and records[-1]["event"] == "startup_refused"
    code, records = _failed_start(tmp_path / "sixth", env={"MEMORYD_WORKERS": "many"})
    assert code == 2 and records[-1]["event"] == "startup_refused"
    # Settings outside their bounds and addresses that are not host:port: refused, never a traceback.
    for name, argv in [
        ("below-minimum", ["--watch-buffer-size", "0"]),
        ("limit-below-minimum", ["--max-page-size", "0"]),
        ("above-maximum", ["--max-vector-dimension", "70000"]),
        ("not-host-port", ["--listen", "localhost"]),
    ]:
        code, records = _failed_start(tmp_path / name, *argv)
        assert code == 2 and records[-1]["event"] == "startup_refused", (name, records)
        assert "bad setting" in records[-1]["error"], records[-1]
    (tmp_path / "seventh").mkdir()
    (tmp_path / "seventh" / "data").write_text("a file where the data directory should be")
    code, records = _failed_start(tmp_path / "seventh")
    assert code == 1 and records[-1]["event"] in ("startup_failed", "uncaught_exception")
