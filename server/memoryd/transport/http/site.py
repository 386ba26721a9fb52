"""The ASGI application on the HTTP port.

    POST /<package>.<Service>/<Method>   every RPC (transport/http/connect.py)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memoryd.domain.limits import Limits
from memoryd.transport.http.connect import ConnectApp


def build(servicers: Mapping[str, Any], limits: Limits, *, metrics: bool = False, tracing: bool = False) -> Any:
    interceptors = []
    if metrics:
        from memoryd.observability.metrics import ConnectMetricsInterceptor

        interceptors.append(ConnectMetricsInterceptor())
    app: Any = ConnectApp(servicers, read_max_bytes=limits.max_request_bytes, interceptors=interceptors)
    if tracing:
        from memoryd.observability.tracing import traced_asgi

        app = traced_asgi(app)
    return app
