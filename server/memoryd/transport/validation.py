"""Request validation: every RPC is checked here before anything touches storage.

A Check collects every violation of a request (not just the first) and raises one
InvalidArgument naming each field, which status.py turns into a google.rpc.BadRequest.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from memoryd.v1 import message_pb2
from memoryd.domain.errors import FieldViolation, InvalidArgument
from memoryd.domain.limits import Limits

_CONTROL_CHARACTER = re.compile(r"[\x00-\x1f\x7f]")


class Check:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.violations: list[FieldViolation] = []

    def fail(self, field: str, description: str) -> None:
        self.violations.append(FieldViolation(field, description))

    def done(self) -> None:
        if self.violations:
            raise InvalidArgument(self.violations)

    # -- scalars -------------------------------------------------------------
    def name(self, field: str, value: str, *, required: bool = True) -> None:
        """Ids, namespaces, keys, roles, kinds: bounded length, no control characters."""
        if not value:
            if required:
                self.fail(field, "must not be empty")
            return
        if len(value) > self.limits.max_id_length:
            self.fail(field, f"must be at most {self.limits.max_id_length} characters")
        elif _CONTROL_CHARACTER.search(value):
            self.fail(field, "must not contain control characters")

    def non_negative(self, field: str, value: int) -> None:
        if value < 0:
            self.fail(field, "must not be negative")

    def positive(self, field: str, value: int) -> None:
        if value <= 0:
            self.fail(field, "must be positive")

    def text_bytes(self, field: str, value: str, maximum: int) -> None:
        if len(value) > maximum // 4 and len(value.encode("utf-8")) > maximum:
            self.fail(field, f"must be at most {maximum} bytes of UTF-8")

    def names(self, field: str, values: Sequence[str]) -> None:
        self.count(field, values, self.limits.max_filter_items)
        for i, value in enumerate(values):
            self.name(f"{field}[{i}]", value)

    def kinds(self, field: str, values: Sequence[str]) -> None:
        """Kind filters: "" is a real kind (present but empty), so only count and length are bounded."""
        if self.count(field, values, self.limits.max_filter_items):
            for i, value in enumerate(values):
                if value:
                    self.name(f"{field}[{i}]", value)

    def finite(self, field: str, struct) -> None:
        """JSON objects (google.protobuf.Struct) must not hold NaN or infinities."""
        if _has_non_finite(struct):
            self.fail(field, "numbers must be finite")

    def count(self, field: str, values: Sequence, maximum: int, *, minimum: int = 0) -> bool:
        if len(values) < minimum:
            self.fail(field, f"must hold at least {minimum} item(s)")
            return False
        if len(values) > maximum:
            self.fail(field, f"must hold at most {maximum} items")
            return False
        return True

    def enum(self, field: str, values: Iterable[int], known: Iterable[int]) -> None:
        allowed = set(known)
        for i, value in enumerate(values):
            if value not in allowed:
                self.fail(f"{field}[{i}]", f"unknown enum value {value}")

    def page_size(self, field: str, value: int) -> None:
        self.non_negative(field, value)

    # -- messages ------------------------------------------------------------
    def message(self, field: str, msg: message_pb2.Message) -> None:
        limits = self.limits
        self.name(f"{field}.role", msg.role)
        if msg.HasField("kind"):
            self.name(f"{field}.kind", msg.kind, required=False)
        self.non_negative(f"{field}.timestamp", msg.timestamp)
        self.text_bytes(f"{field}.content", msg.content, limits.max_content_bytes)
        self.text_bytes(f"{field}.reasoning_content", msg.reasoning_content, limits.max_content_bytes)
        self.name(f"{field}.tool_call_id", msg.tool_call_id, required=False)
        for i, segment in enumerate(msg.segments):
            self.name(f"{field}.segments[{i}].type", segment.type)
        for i, call in enumerate(msg.tool_calls):
            self.name(f"{field}.tool_calls[{i}].name", call.name)
            self.name(f"{field}.tool_calls[{i}].id", call.id, required=False)
        if msg.ByteSize() > limits.max_message_bytes:
            self.fail(field, f"serialized message must be at most {limits.max_message_bytes} bytes")
        self.finite(f"{field}.metadata", msg.metadata)
        for i, segment in enumerate(msg.segments):
            self.finite(f"{field}.segments[{i}].data", segment.data)

    def messages(self, field: str, messages: Sequence[message_pb2.Message], *, minimum: int) -> None:
        if self.count(field, messages, self.limits.max_batch_messages, minimum=minimum):
            for i, msg in enumerate(messages):
                self.message(f"{field}[{i}]", msg)


def _has_non_finite(struct) -> bool:
    stack = list(struct.fields.values())
    while stack:
        value = stack.pop()
        kind = value.WhichOneof("kind")
        if kind == "number_value" and not math.isfinite(value.number_value):
            return True
        if kind == "struct_value":
            stack.extend(value.struct_value.fields.values())
        elif kind == "list_value":
            stack.extend(value.list_value.values)
    return False
