"""Request validation: every RPC is checked here before anything touches storage.

A Check collects the violations of a request (not just the first; at most
MAX_LISTED_VIOLATIONS are kept, all are counted) and raises one InvalidArgument naming
each field, which status.py turns into a google.rpc.BadRequest.

The rules written here once (docs/SECURITY.md, "Limits"):
- Names (every id, namespace, key, role, kind, scope, tag, label, model or speaker id):
  not empty when required, and the one rule for identifiers (domain/identifiers.py, also
  applied to token claims and import files): at most max_id_length characters, not only
  whitespace, no invisible characters (controls, zero-width and bidi controls, line and
  paragraph separators), no spaces but the ASCII one, no fillers or blanks, no combining
  mark or variation selector standing alone: two ids that print alike are the same id.
- JSON objects (google.protobuf.Struct): finite numbers, at most MAX_JSON_DEPTH nested
  objects/arrays, and keys every backend can store (no NUL, no leading `$`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from google.protobuf import struct_pb2

from memoryd.domain import recall, retention
from memoryd.domain.errors import MAX_LISTED_VIOLATIONS, FieldViolation, InvalidArgument
from memoryd.domain.identifiers import id_problem
from memoryd.domain.limits import MAX_JSON_DEPTH, Limits
from memoryd.domain.vectors import finite
from memoryd.v1 import message_pb2


def name_problem(value: str, max_length: int) -> str | None:
    """What is wrong with a non-empty name (the one rule for ids, domain/identifiers.py), if anything."""
    return id_problem(value, max_length)


class Check:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.violations: list[FieldViolation] = []
        self.count_violations = 0

    def fail(self, field: str, description: str) -> None:
        self.count_violations += 1
        if len(self.violations) < MAX_LISTED_VIOLATIONS:
            self.violations.append(FieldViolation(field, description))

    def done(self) -> None:
        if self.count_violations:
            raise InvalidArgument(self.violations, count=self.count_violations)

    # -- scalars -------------------------------------------------------------
    def name(self, field: str, value: str, *, required: bool = True) -> None:
        """Ids, namespaces, keys, roles, kinds, scopes, tags: the one rule for names (module docstring)."""
        problem = self._name_problem(value, required)
        if problem:
            self.fail(field, problem)

    def _name_problem(self, value: str, required: bool) -> str | None:
        if not value:
            return "must not be empty" if required else None
        return name_problem(value, self.limits.max_id_length)

    def non_negative(self, field: str, value: int) -> None:
        if value < 0:
            self.fail(field, "must not be negative")

    def positive(self, field: str, value: int) -> None:
        if value <= 0:
            self.fail(field, "must be positive")

    def between(self, field: str, value: float, low: float, high: float) -> None:
        """A finite number in [low, high] (NaN and infinities never are)."""
        if not math.isfinite(value) or not low <= value <= high:
            self.fail(field, f"must be between {low:g} and {high:g}")

    def fusion(self, field: str, value: int) -> None:
        """A RecallFusion: unset (the server default) or one the domain knows."""
        if value not in (0, *(f.value for f in recall.Fusion)):
            self.fail(field, f"unknown enum value {value}")

    def recall_query(self, request) -> None:
        """The query fields SearchMemory and SearchSummaries share: a vector with its model, or
        a text (model_id then optional), top_k, keyword_weight and fusion."""
        has_vector, has_text = bool(request.query_vector), bool(request.query_text)
        if not (has_vector or has_text):
            self.fail("query_vector", "one of query_vector and query_text is required")
        if has_vector:
            self.vector("query_vector", request.query_vector)
        self.name("model_id", request.model_id, required=has_vector)
        if has_text:
            self.text_bytes("query_text", request.query_text, self.limits.max_text_bytes)
        if not 0 <= request.top_k <= recall.MAX_TOP_K:
            self.fail("top_k", f"must be between 1 and {recall.MAX_TOP_K} (0 means {recall.DEFAULT_TOP_K})")
        if request.HasField("keyword_weight"):
            self.between("keyword_weight", request.keyword_weight, 0.0, 1.0)
        self.fusion("fusion", request.fusion)

    def enum_value(self, field: str, value: int, known: Sequence[int]) -> None:
        """A singular enum field: unset (0, the default) or one of `known`."""
        if value not in (0, *known):
            self.fail(field, f"unknown enum value {value}")

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

    def struct(self, field: str, struct) -> None:
        """A JSON object (google.protobuf.Struct): finite numbers, bounded nesting, storable keys."""
        problem = _struct_problem(struct)
        if problem:
            self.fail(field, problem)

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

    def vector(self, field: str, values: Sequence[float], *, required: bool = True) -> None:
        """A vector or embedding: at most max_vector_dimension finite numbers (empty: when not required)."""
        if not values:
            if required:
                self.fail(field, "must not be empty")
        elif len(values) > self.limits.max_vector_dimension:
            self.fail(field, f"must hold at most {self.limits.max_vector_dimension} numbers")
        elif not finite(values):
            self.fail(field, "must hold finite numbers only (no NaN or Inf)")

    def page_size(self, field: str, value: int) -> None:
        self.non_negative(field, value)

    # -- session attributes ----------------------------------------------------
    def labels(self, field: str, labels) -> None:
        """A labels map (proto map<string, string>): bounded count, keys and values like names
        (a value may be empty). A violation names the map: its keys may be anything."""
        if self.count(field, labels, self.limits.max_filter_items):
            for key, value in sorted(labels.items()):
                problem = self._name_problem(key, True)
                if problem:
                    self.fail(field, f"label keys {problem}")
                elif problem := self._name_problem(value, False):
                    self.fail(field, f"the value of label {key!r} {problem}")

    def session_attributes(self, field: str, attributes) -> None:
        self.name(f"{field}.user_id", attributes.user_id, required=False)
        self.name(f"{field}.agent_id", attributes.agent_id, required=False)
        self.labels(f"{field}.labels", attributes.labels)
        if retention.RETENTION_LABEL in attributes.labels:
            problem = retention.label_problem(attributes.labels[retention.RETENTION_LABEL])
            if problem:
                self.fail(f"{field}.labels", f"the value of label {retention.RETENTION_LABEL!r} {problem}")

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
        self.struct(f"{field}.metadata", msg.metadata)
        for i, segment in enumerate(msg.segments):
            self.struct(f"{field}.segments[{i}].data", segment.data)

    def messages(self, field: str, messages: Sequence[message_pb2.Message], *, minimum: int) -> None:
        if self.count(field, messages, self.limits.max_batch_messages, minimum=minimum):
            for i, msg in enumerate(messages):
                self.message(f"{field}[{i}]", msg)


def _struct_problem(struct) -> str | None:
    """What is wrong with a Struct, or None. One walk; depth counts objects and arrays."""
    stack = [(struct, 1)]
    while stack:
        container, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return f"must nest at most {MAX_JSON_DEPTH} objects/arrays deep"
        if isinstance(container, struct_pb2.Struct):
            for key in container.fields:
                if "\x00" in key or key.startswith("$"):
                    return "keys must not contain NUL or start with '$'"
            values = container.fields.values()
        else:
            values = container.values
        for value in values:
            kind = value.WhichOneof("kind")
            if kind == "number_value":
                if not math.isfinite(value.number_value):
                    return "numbers must be finite"
            elif kind == "struct_value":
                stack.append((value.struct_value, depth + 1))
            elif kind == "list_value":
                stack.append((value.list_value, depth + 1))
    return None
