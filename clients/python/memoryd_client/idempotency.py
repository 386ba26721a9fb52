"""Idempotency keys on appends, so that gRPC may retry them.

SaveMessage and SaveMessages are in the retried set of the service config: a
retry after a lost acknowledgement must not store the message twice, and the
server stores once per (session, idempotency key). These interceptors give
every append that lacks a key a fresh one, once per call: gRPC's retries
happen below the interceptor, so every attempt carries the same key.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

import grpc

from memoryd.v1 import memory_service_pb2

APPENDS = (memory_service_pb2.SaveMessageRequest, memory_service_pb2.SaveMessagesRequest)


def with_idempotency_key(request: Any) -> Any:
    """`request`, or a copy of it carrying a new key when it is an append without one."""
    if not isinstance(request, APPENDS) or request.idempotency_key:
        return request
    keyed = copy.deepcopy(request)
    keyed.idempotency_key = uuid.uuid4().hex
    return keyed


class IdempotencyKeyInterceptor(grpc.UnaryUnaryClientInterceptor):
    """For sync channels (grpc.intercept_channel)."""

    def intercept_unary_unary(self, continuation, client_call_details, request):
        return continuation(client_call_details, with_idempotency_key(request))


class AsyncIdempotencyKeyInterceptor(grpc.aio.UnaryUnaryClientInterceptor):
    """For grpc.aio channels (the `interceptors=` argument)."""

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        return await continuation(client_call_details, with_idempotency_key(request))
