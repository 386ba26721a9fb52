"""Optional OpenTelemetry tracing (`--tracing`; off by default; the `tracing` extra: in a
checkout, `.venv/bin/pip install -e '.[tracing]'`).

Server spans come from the OpenTelemetry instrumentations, not from memoryd code:
opentelemetry-instrumentation-grpc's aio server interceptor for gRPC, and
opentelemetry-instrumentation-asgi around the HTTP (Connect) app, whose spans are named and
attributed like RPCs (`rpc.system = connect_rpc`). Both continue the caller's trace from
the `traceparent` header / metadata.

When the process already has a tracer provider (set by an embedding application or by
`opentelemetry-instrument memoryd serve`), that one is used. Otherwise memoryd installs
the SDK's provider with a batching OTLP/gRPC exporter, configured entirely by the standard
OTEL_* environment variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, ...).
"""

from __future__ import annotations

import os
from typing import Any


class TracingUnavailable(RuntimeError):
    """--tracing was asked for without the tracing extra installed."""


def require() -> None:
    """Raises TracingUnavailable, whose message says how to install the extra, without it."""
    try:
        import opentelemetry.exporter.otlp.proto.grpc.trace_exporter  # noqa: F401
        import opentelemetry.instrumentation.asgi  # noqa: F401
        import opentelemetry.instrumentation.grpc  # noqa: F401
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError as error:
        from memoryd_client.extras import missing

        raise TracingUnavailable(missing("--tracing", "memoryd", "tracing", error)) from None


def _ensure_provider() -> None:
    from opentelemetry import trace

    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return  # someone configured tracing already: use theirs
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # Resource.create reads OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES; name memoryd only when they don't.
    named = "OTEL_SERVICE_NAME" in os.environ or "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    provider = TracerProvider(resource=Resource.create({} if named else {"service.name": "memoryd"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)


def grpc_interceptors() -> list[Any]:
    """The gRPC server interceptors that trace every call (raises TracingUnavailable without the extra)."""
    require()
    _ensure_provider()
    from opentelemetry.instrumentation.grpc import aio_server_interceptor

    return [aio_server_interceptor()]


def _rpc_span_details(scope: dict[str, Any]) -> tuple[str, dict[str, str]]:
    path = scope.get("path", "")
    service, _, method = path.lstrip("/").partition("/")
    if not method:
        return f"{scope.get('method', 'GET')} {path}", {}
    return f"{service}/{method}", {"rpc.system": "connect_rpc", "rpc.service": service, "rpc.method": method}


def traced_asgi(app: Any) -> Any:
    """`app` wrapped so that every HTTP call is a server span named like its RPC."""
    require()
    _ensure_provider()
    from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

    return OpenTelemetryMiddleware(app, default_span_details=_rpc_span_details, exclude_spans=["receive", "send"])
