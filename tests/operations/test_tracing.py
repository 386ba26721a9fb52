"""--tracing: OpenTelemetry server spans for gRPC and HTTP calls, continuing the caller's trace; off by default."""

from __future__ import annotations

import grpc
import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from memoryd.v1 import memory_service_pb2, memory_service_pb2_grpc, message_pb2
from memoryd.app import start
from memoryd.config import Config

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
SAVE = {"session_id": "traced", "message": {"role": "user", "content": "hi"}}


@pytest.fixture(scope="module")
def exporter():
    """The process's tracer provider (memoryd uses the one already set), with an in-memory exporter."""
    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


async def _save_over_both(app) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        await memory_service_pb2_grpc.MemoryServiceStub(channel).SaveMessage(
            memory_service_pb2.SaveMessageRequest(session_id="traced", message=message_pb2.Message(role="user", content="hi")),
            metadata=(("traceparent", TRACEPARENT),),
        )
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}") as http:
        response = await http.post("/memoryd.v1.MemoryService/SaveMessage", json=SAVE, headers={"traceparent": TRACEPARENT})
        assert response.status_code == 200


async def test_calls_over_grpc_and_http_produce_server_spans(exporter, tmp_path):
    app = await start(Config(listen="127.0.0.1:0", data_dir=tmp_path, tracing=True, vectors_enabled=False))
    try:
        exporter.clear()
        await _save_over_both(app)
    finally:
        await app.stop(0)
    spans = {span.name: span for span in exporter.get_finished_spans() if span.kind == SpanKind.SERVER}
    over_grpc = spans["/memoryd.v1.MemoryService/SaveMessage"]
    over_http = spans["memoryd.v1.MemoryService/SaveMessage"]
    assert over_grpc.attributes["rpc.system"] == "grpc"
    assert over_grpc.attributes["rpc.grpc.status_code"] == grpc.StatusCode.OK.value[0]
    assert (over_http.attributes["rpc.system"], over_http.attributes["rpc.method"]) == ("connect_rpc", "SaveMessage")
    for span in (over_grpc, over_http):  # both continue the caller's trace
        assert format(span.context.trace_id, "032x") == TRACE_ID


async def test_tracing_is_off_by_default(exporter, tmp_path):
    app = await start(Config(listen="127.0.0.1:0", data_dir=tmp_path, vectors_enabled=False))
    try:
        exporter.clear()
        await _save_over_both(app)
    finally:
        await app.stop(0)
    assert [span for span in exporter.get_finished_spans() if span.kind == SpanKind.SERVER] == []
