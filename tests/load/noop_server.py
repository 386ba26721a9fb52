"""A do-nothing grpc.aio server for the memoryd.v1 services: the transport ceiling.

Every unary RPC answers without doing any work. By default the answer has the shape
memoryd would send (`--responses shaped`): GetHistory and GetRecentAcrossSessions
return `limit` prebuilt messages like the load suite's seeded ones, SaveMessage
returns the stored message, SearchMemory `top_k` hits with their context windows like
memoryd's answers to the vector phase's searches (vector_load.py), so the ceiling includes
the cost of moving a response of that size through grpc and protobuf and nothing else.
`--responses empty` answers empty messages (the bare RPC ceiling). Watch holds the
stream open and sends nothing. It registers every service
found in the generated `memoryd.v1.*_service_pb2_grpc` modules (so new services such
as vector search are covered as soon as their stubs exist), with reflection and
health on, exactly like memoryd, so the same ghz configs run against both; like memoryd's,
its handlers are registered as generic ones only (memoryd.transport.rpc.GenericOnly), so
the ceiling pays what memoryd's transport pays.

    python tests/load/noop_server.py --listen 127.0.0.1:0 --port-file FILE
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib
import pkgutil
import random
import signal
import uuid
from pathlib import Path

import grpc
from google.protobuf import message_factory
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

import memoryd.v1
import vector_load
from memoryd.v1 import memory_service_pb2, message_pb2, vector_service_pb2
from memoryd.transport.reflection import enable_reflection
from memoryd.transport.rpc import GenericOnly


def _service_modules():
    for info in pkgutil.iter_modules(memoryd.v1.__path__):
        if info.name.endswith("_service_pb2_grpc"):
            grpc_module = importlib.import_module(f"memoryd.v1.{info.name}")
            pb2_module = importlib.import_module(f"memoryd.v1.{info.name.removesuffix('_grpc')}")
            yield grpc_module, pb2_module


def _stored_message(n: int) -> message_pb2.Message:
    """A message as memoryd returns it for the load suite's seeded data."""
    msg = message_pb2.Message(
        id=f"{n:032x}",
        seq=n,
        role="user" if n % 2 == 0 else "assistant",
        content=(
            f"Load-test message {n}: the quick brown fox jumps over the lazy dog while the agent "
            "remembers what the user said about their travel plans."
        ),
        timestamp=1_700_000_000_000 + n,
    )
    msg.metadata.update({"platform": "common", "sender": {"id": f"user-{n % 97}"}})
    return msg


@functools.cache
def _history(limit: int) -> memory_service_pb2.GetHistoryResponse:
    return memory_service_pb2.GetHistoryResponse(messages=[_stored_message(n) for n in range(limit)])


@functools.cache
def _recent(limit: int) -> memory_service_pb2.GetRecentAcrossSessionsResponse:
    return memory_service_pb2.GetRecentAcrossSessionsResponse(
        messages=[message_pb2.SessionMessage(session_id=f"load-recent-{n}", message=_stored_message(n)) for n in range(limit)]
    )


def _search_text(n: int) -> str:
    return vector_load.message_text(random.Random(n), n)


def _context_message(n: int) -> message_pb2.Message:
    """A context message as memoryd returns it for the vector phase's seeded data."""
    return message_pb2.Message(
        id=uuid.UUID(int=n).hex, seq=n, role="user" if n % 2 == 0 else "assistant", content=_search_text(n),
        timestamp=1_700_000_000_000 + n,
    )


@functools.cache
def _search(top_k: int, window: int) -> vector_service_pb2.SearchMemoryResponse:
    """top_k hits, each with `window` context messages before and after it, with the fields
    and sizes of memoryd's answers to the vector phase's searches (vector_load.py: hybrid,
    384 dimensions; bench_search.py compares the two replies' sizes)."""
    hits = []
    for n in range(top_k):
        anchor = 50 * n + 25
        hits.append(
            vector_service_pb2.MemoryHit(
                score=0.13, semantic_score=0.22, point_id=str(uuid.UUID(int=anchor)), model_id=vector_load.MAIN_MODEL,
                session_id=f"load-vec-a-{n}", message_id=uuid.UUID(int=anchor).hex, timestamp=1_700_000_000_000 + anchor,
                role="user", platform="common", text=_search_text(anchor), keyword_score=10.9, relevance=0.1,
                semantic_match=True, keyword_match=True,
                before=[vector_service_pb2.ContextMessage(message=_context_message(anchor - k)) for k in range(window, 0, -1)],
                after=[vector_service_pb2.ContextMessage(message=_context_message(anchor + k)) for k in range(1, window + 1)],
            )
        )
    return vector_service_pb2.SearchMemoryResponse(
        hits=hits, model_id=vector_load.MAIN_MODEL, retrieval=vector_service_pb2.RECALL_RETRIEVAL_HYBRID
    )


_SAVED = memory_service_pb2.SaveMessageResponse(message=_stored_message(1))

# Prebuilt responses with memoryd's shape, by service and method; everything else answers empty.
SHAPED = {
    "MemoryService": {
        "SaveMessage": lambda request: _SAVED,
        "GetHistory": lambda request: _history(min(request.limit or 50, 1000)),
        "GetRecentAcrossSessions": lambda request: _recent(min(request.limit or 50, 1000)),
    },
    "VectorService": {
        "SearchMemory": lambda request: _search(
            min(request.top_k or 5, 100), request.context_window if request.HasField("context_window") else 2
        ),
    },
}


def _unary(response_class, shape=None):
    if shape is None:

        async def handler(self, request, context):
            return response_class()

    else:

        async def handler(self, request, context):
            return shape(request)

    return handler


def _stream():
    async def handler(self, request, context):
        # Hold the stream open until the client goes away; let cancellation propagate.
        await asyncio.Event().wait()
        yield  # pragma: no cover - makes this an async generator

    return handler


def _noop_servicer(grpc_module, service_descriptor, shaped: bool):
    base = getattr(grpc_module, f"{service_descriptor.name}Servicer")
    methods = {}
    for method in service_descriptor.methods:
        if method.server_streaming:
            methods[method.name] = _stream()
        else:
            shape = SHAPED.get(service_descriptor.name, {}).get(method.name) if shaped else None
            methods[method.name] = _unary(message_factory.GetMessageClass(method.output_type), shape)
    return type(f"Noop{service_descriptor.name}", (base,), methods)()


async def serve(listen: str, port_file: Path | None, shaped: bool) -> None:
    # One process on purpose: a second server on the same port must fail, not share it.
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    names = [reflection.SERVICE_NAME, health.SERVICE_NAME]
    for grpc_module, pb2_module in _service_modules():
        for service in pb2_module.DESCRIPTOR.services_by_name.values():
            add = getattr(grpc_module, f"add_{service.name}Servicer_to_server")
            add(_noop_servicer(grpc_module, service, shaped), GenericOnly(server))
            names.append(service.full_name)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, GenericOnly(server))
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    enable_reflection(names, server)
    port = server.add_insecure_port(listen)
    await server.start()
    if port_file is not None:
        tmp = port_file.with_suffix(".tmp")
        tmp.write_text(str(port))
        tmp.rename(port_file)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", default="127.0.0.1:0")
    parser.add_argument("--port-file", type=Path)
    parser.add_argument("--responses", choices=("shaped", "empty"), default="shaped")
    args = parser.parse_args()
    asyncio.run(serve(args.listen, args.port_file, args.responses == "shaped"))


if __name__ == "__main__":
    main()
