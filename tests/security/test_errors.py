"""The status table and the size of errors: every domain error class answers with its own
status (never INTERNAL), and a request with very many bad elements still gets a small
INVALID_ARGUMENT that a default client can read."""

from __future__ import annotations

import importlib
import pkgutil

import grpc
import pytest
from google.rpc import error_details_pb2

import memoryd
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import message_pb2
from memoryd.domain import errors
from memoryd.domain.errors import MAX_LISTED_VIOLATIONS
from memoryd.transport.status import status_codes, to_status
from tests.security.harness import Caller, new_token, rich_status, start_app

# Default gRPC clients refuse response metadata (trailers included) over 8 KiB.
DEFAULT_CLIENT_METADATA_LIMIT = 8 << 10


def _all_subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_all_subclasses(sub)}
    return found


def _import_every_module() -> None:
    for module in pkgutil.walk_packages(memoryd.__path__, "memoryd."):
        if module.name.startswith(("memoryd.v1", "memoryd_client")) or module.name.endswith("__main__"):
            continue
        importlib.import_module(module.name)


def _instance(cls: type[errors.MemorydError]) -> errors.MemorydError:
    if issubclass(cls, errors.InvalidArgument):
        return cls([errors.FieldViolation("f", "bad")])
    return cls("boom")


def test_every_domain_error_class_maps_to_a_status_other_than_internal():
    _import_every_module()  # subclasses live beside the code that raises them (EmbedderUnavailable ...)
    classes = _all_subclasses(errors.MemorydError)
    assert len(classes) >= 8
    internal = [c.__qualname__ for c in classes if status_codes(_instance(c))[0] == grpc.StatusCode.INTERNAL]
    assert not internal, f"answer INTERNAL: {internal}"


def test_a_subclass_answers_as_its_parent_with_its_details():
    from memoryd.vectors.embedder import EmbedderUnavailable

    status = to_status(EmbedderUnavailable("embedder down"))
    assert status.code == grpc.StatusCode.UNAVAILABLE
    details = dict(status.trailing_metadata)["grpc-status-details-bin"]
    assert b"RetryInfo" in details  # clients retry it


@pytest.fixture(scope="module")
async def default_server(tmp_path_factory):
    token = new_token()
    app = await start_app(tmp_path_factory.mktemp("errors"), {"acme": token})
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")  # default client limits
    yield Caller(channel, token, "acme")
    await channel.close()
    await app.stop(0)


@pytest.mark.parametrize("bad", [101, 100_000])
async def test_many_bad_elements_answer_a_small_invalid_argument(default_server, bad):
    message = message_pb2.Message(role="user", content="hi")
    message.tool_calls.extend([message_pb2.ToolCall(id="c", name="")] * bad)  # name is required
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await default_server.call("memory", "SaveMessage", mem.SaveMessageRequest(session_id="s", message=message))
    error = caught.value
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    trailers = sum(len(k) + len(v) for k, v in error.trailing_metadata() or ())
    assert trailers + len(error.details().encode()) < DEFAULT_CLIENT_METADATA_LIMIT / 2
    status = rich_status(error)
    info, bad_request = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
    for detail in status.details:
        detail.Unpack(info) if detail.Is(info.DESCRIPTOR) else detail.Unpack(bad_request)
    assert len(bad_request.field_violations) == MAX_LISTED_VIOLATIONS
    assert bad_request.field_violations[0].field == "message.tool_calls[0].name"
    assert int(info.metadata["violation_count"]) >= bad
    assert "more" in error.details()


def _deep(target, depth: int) -> None:
    """`depth` nested JSON objects: the costliest nesting for a decoder (3 messages a level)."""
    for _ in range(depth - 1):
        target = target.fields["o"].struct_value
    target.fields["leaf"].number_value = 1


async def test_records_at_the_depth_limit_read_back_in_every_response(default_server):
    """No poison records: whatever is accepted, Python clients decode in every response."""
    from memoryd.v1 import metadata_service_pb2 as meta
    from memoryd.domain.limits import MAX_JSON_DEPTH

    save = meta.SaveMetadataRequest(namespace="deep", key="k")
    _deep(save.data, MAX_JSON_DEPTH)
    await default_server.call("metadata", "SaveMetadata", save)
    assert (await default_server.call("metadata", "GetMetadata", meta.GetMetadataRequest(namespace="deep", key="k"))).found
    assert len((await default_server.call("metadata", "ListMetadata", meta.ListMetadataRequest(namespace="deep"))).entries) == 1
    message = message_pb2.Message(role="user", content="deep")
    _deep(message.metadata, MAX_JSON_DEPTH)
    _deep(message.segments.add(type="x").data, MAX_JSON_DEPTH)
    await default_server.call("memory", "SaveMessage", mem.SaveMessageRequest(session_id="deep", message=message))
    assert (await default_server.call("memory", "GetHistory", mem.GetHistoryRequest(session_id="deep"))).messages
    assert (await default_server.call("memory", "GetFullHistory", mem.GetFullHistoryRequest(session_id="deep"))).messages
    recent = await default_server.call("memory", "GetRecentAcrossSessions", mem.GetRecentAcrossSessionsRequest(limit=5))
    assert recent.messages


def test_every_reason_the_server_sends_is_in_the_contract():
    # Clients switch on ErrorInfo.reason: each one the source can raise (a class default
    # or a reason= at the raise) is a value of memoryd.v1.ErrorReason, and the enum lists
    # nothing the server never sends.
    import re
    from pathlib import Path

    from memoryd.v1 import error_reason_pb2

    sources = Path(__file__).resolve().parents[2] / "server" / "memoryd"
    sent = {
        reason
        for path in sources.rglob("*.py")
        for reason in re.findall(r'reason\s*=\s*"([A-Z][A-Z0-9_]*)"', path.read_text())
    }
    _import_every_module()
    sent |= {cls.reason for cls in _all_subclasses(errors.MemorydError)} | {errors.MemorydError.reason}
    values = error_reason_pb2.ErrorReason.DESCRIPTOR.values
    # A deprecated value stays in the enum for older clients; the server no longer sends it.
    contract = {v.name.removeprefix("ERROR_REASON_") for v in values if not v.GetOptions().deprecated} - {"UNSPECIFIED"}
    assert sent == contract, (sorted(sent - contract), sorted(contract - sent))
