"""The bad-input corpus, part 1: generated from the served descriptors.

For every RPC of every memoryd service, starting from one valid request, every field of
the request message (nested messages, oneof branches and repeated elements included) is
mutated in turn with values sampled by its type:

- strings: invalid UTF-8 on the wire; for names (ids, keys, roles, kinds, scopes, tags):
  NUL, zero-width, bidi-control, whitespace-only, max_id_length +1 (and exactly at it);
  for free text: far over every text bound, and a NUL;
- integers: -1, the type's minimum and maximum; enums: unknown values;
- floats: NaN, +Inf, -Inf, 1e30; repeated fields: far over every list bound;
- google.protobuf.Struct: nesting one past MAX_JSON_DEPTH, nesting past the protobuf
  decoder's own limit, NaN, keys with NUL or a leading `$`;
- page tokens: a real token re-encoded with a forged position (`{"ts":"abc"}`, `{}`, nulls,
  10**30), unsigned, its tag or its base64 padding bits altered, cut short, or a real
  token of another query.

Mutations that can never be valid (the "strict" ones) must answer INVALID_ARGUMENT naming
the mutated field (or MALFORMED_REQUEST when the bytes cannot be decoded at all); the
others may be accepted. Whatever is rejected must have stored nothing: every change to
stored state commits events in the same transaction, so the tenant's event log bounds and
vector counts stay as they were. No mutation may answer UNKNOWN or INTERNAL.

Every field is mutated on SQLite; on MongoDB (slower) each field gets one sampled
mutation per run, every field still at least once. Counts per status are printed.
"""

from __future__ import annotations

import base64
import collections
import copy
import json
import math
import os
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import grpc
import pytest
from google.protobuf import message_factory, struct_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from memoryd.v1 import entry_service_pb2 as ent
from memoryd.v1 import event_pb2
from memoryd.v1 import event_service_pb2 as ev
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import message_pb2
from memoryd.v1 import metadata_service_pb2 as meta
from memoryd.v1 import summary_service_pb2 as summ
from memoryd.v1 import vector_service_pb2 as vec
from memoryd.domain.limits import MAX_JSON_DEPTH
from tests.conftest import BACKENDS, mongo_uri_for
from tests.security.conftest import CORPUS_LIMITS as L
from tests.security.harness import Caller, error_details, new_token, rich_status, start_app

MODEL = "test:model-3d"
SEEDED = "seeded"
NS = "corpus"
SCOPE = "corpus"
MODULES = (mem, meta, ev, vec, summ, ent)
SERVICES = [s for m in MODULES for s in m.DESCRIPTOR.services_by_name.values()]

# Free-text fields (bounded in bytes, any characters); every other string field is a name.
TEXT_FIELDS = {"content", "reasoning_content", "arguments", "old_text", "new_text", "reason", "error", "text",
               "query_text", "query"}
# Output-only fields of memoryd.v1.Message: the server ignores what a caller puts there.
OUTPUT_ONLY = {"memoryd.v1.Message.id", "memoryd.v1.Message.seq", "memoryd.v1.Message.archived"}
# Cross-field rules: a mutation of the key is answered by naming the value.
NAMED_INSTEAD = {("SearchMemory", "query_text"): "query_vector", ("SearchSummaries", "query_text"): "query_vector"}
INT_RANGES = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
}
FLOAT_TYPES = {FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE}
OVERSIZE_TEXT = 8192  # over every text bound of CORPUS_LIMITS, well under max_request_bytes
MANY = 1001  # over every list bound
DECODER_DEPTH = 60  # JSON levels past what the protobuf decoder reads (each costs 2-3 messages)


def _msg(**kw) -> message_pb2.Message:
    message = message_pb2.Message(role="user", content="hello", kind="chat", reasoning_content="r", tool_call_id="c1", **kw)
    message.segments.add(type="text").data.update({"text": "hi"})
    message.metadata.update({"platform": "qq"})
    message.tool_calls.add(id="c1", name="search", arguments="{}")
    return message


def _attributes() -> message_pb2.SessionAttributes:
    return message_pb2.SessionAttributes(user_id="u1", agent_id="a1", labels={"k": "v"})


def baselines() -> dict[str, object]:
    """One valid request per RPC, every repeated field holding one element."""
    return {
        "SaveMessage": mem.SaveMessageRequest(session_id="gen", message=_msg(), session_attributes=_attributes()),
        "SaveMessages": mem.SaveMessagesRequest(session_id="gen", messages=[_msg()], session_attributes=_attributes()),
        "GetHistory": mem.GetHistoryRequest(session_id=SEEDED, limit=10),
        "GetFullHistory": mem.GetFullHistoryRequest(session_id=SEEDED, page_size=1),
        "ListMessagesInRange": mem.ListMessagesInRangeRequest(
            session_id=SEEDED, from_ts=0, to_ts=10**6, roles=["user"], exclude_kinds=["x"], page_size=1
        ),
        "GetRecentAcrossSessions": mem.GetRecentAcrossSessionsRequest(
            limit=5, since_ts=0, platform="qq", exclude_session_ids=["other"], roles=["user"], kinds=["chat"],
            exclude_kinds=["x"],
        ),
        "TrimHistory": mem.TrimHistoryRequest(session_id="gen-trim", keep_recent=10),
        "ReplaceHistory": mem.ReplaceHistoryRequest(session_id="gen-replace", messages=[_msg()]),
        "UpdateMessageContent": mem.UpdateMessageContentRequest(
            session_id="gen", old_text="zzz", new_text="y", recent_limit=10
        ),
        "DeleteMessagesByTimestamps": mem.DeleteMessagesByTimestampsRequest(session_id="gen-none", timestamps=[1]),
        "DeleteMessages": mem.DeleteMessagesRequest(session_id="gen-none", ids=["nope"]),
        "ClearSession": mem.ClearSessionRequest(session_id="gen-none", targets=[mem.CLEAR_TARGET_MESSAGES]),
        "ClearAll": mem.ClearAllRequest(targets=[mem.CLEAR_TARGET_VECTORS]),
        "ListSessions": mem.ListSessionsRequest(page_size=1),
        "PopMessages": mem.PopMessagesRequest(session_id="gen-pop", n=1),
        "GetSession": mem.GetSessionRequest(session_id=SEEDED),
        "UpdateSession": mem.UpdateSessionRequest(session_id="gen-attr", attributes=_attributes(), remove_labels=["old"]),
        "ForgetUser": mem.ForgetUserRequest(user_id="gen-nobody"),
        "GetCaller": mem.GetCallerRequest(),
        "GetMemoryStats": mem.GetMemoryStatsRequest(),
        "SaveMetadata": meta.SaveMetadataRequest(namespace="gen", key="k", data={"a": 1}),
        "GetMetadata": meta.GetMetadataRequest(namespace=NS, key="a"),
        "ListMetadata": meta.ListMetadataRequest(namespace=NS, page_size=1),
        "DeleteMetadata": meta.DeleteMetadataRequest(namespace="gen", key="nope"),
        "ListNamespaces": meta.ListNamespacesRequest(prefix=NS[:4], page_size=1),
        "Watch": ev.WatchRequest(
            session_ids=["gen"], types=[event_pb2.EVENT_TYPE_MESSAGES_APPENDED], after_seq=0
        ),
        "PublishEvent": ev.PublishEventRequest(
            session_id="gen", compress_progress=event_pb2.CompressProgress(phase="p", progress=0.5, error="e")
        ),
        "UpsertVectors": vec.UpsertVectorsRequest(points=[vec.VectorPoint(
            model_id=MODEL, vector=[0.1, 0.2, 0.3], session_id="gen", message_id="m1", timestamp=1000, role="user",
            platform="qq", sender_id="u1", mentioned_ids=["u2"], speaker_label="Ann", text="hello",
        )]),
        "SearchMemory": vec.SearchMemoryRequest(
            query_vector=[0.1, 0.2, 0.3], model_id=MODEL, top_k=5, min_score=0.0, time_weight=0.3,
            scope=vec.RECALL_SCOPE_ALL, session_id=SEEDED, platform="qq", speaker_ids=["u1"], user_priority_boost=1.0,
            recall_roles=vec.RECALL_ROLES_ALL, context_window=1, expand_cross_session=True, per_item_max_chars=100,
            exclude_message_ids=["x"], control_kinds=["summary"], slices=vec.RECALL_SLICES_FUSED,
        ),
        "DeleteVectors": vec.DeleteVectorsRequest(session=vec.DeleteVectorsRequest.BySession(session_id="gen-none")),
        "GetVectorStats": vec.GetVectorStatsRequest(),
        "SaveSummary": summ.SaveSummaryRequest(session_id=SEEDED, from_seq=3, to_seq=3, text="s", metadata={"a": 1},
                                               vector=[0.1, 0.2, 0.3], model_id=MODEL),
        "SearchSummaries": summ.SearchSummariesRequest(
            query_vector=[0.1, 0.2, 0.3], query_text="trip", model_id=MODEL, top_k=5, scope=vec.RECALL_SCOPE_SESSION,
            session_id=SEEDED, keyword_weight=0.5, fusion=vec.RECALL_FUSION_RELATIVE_SCORE, include_messages=True,
            max_messages_per_hit=10,
        ),
        "ListSummaries": summ.ListSummariesRequest(session_id=SEEDED, page_size=1),
        "GetSummaryCursor": summ.GetSummaryCursorRequest(session_id=SEEDED),
        "AssembleContext": summ.AssembleContextRequest(
            session_id=SEEDED, budget_chars=1000, recent_raw_n=5, include_recall=True, recall_top_k=3,
            recall_query_vector=[0.1, 0.2, 0.3], recall_model_id=MODEL, recall_slices=vec.RECALL_SLICES_FIRST,
        ),
        "SaveEntry": ent.SaveEntryRequest(scope="gen", text="likes tea", tags=["drink"], embedding=[0.1, 0.2, 0.3],
                                          model_id=MODEL),
        "SearchEntries": ent.SearchEntriesRequest(scope=SCOPE, query="tea", limit=5, query_embedding=[0.1, 0.2, 0.3],
                                                  model_id=MODEL),
        "ForgetEntry": ent.ForgetEntryRequest(scope="gen", entry_id="nope"),
        "ListEntries": ent.ListEntriesRequest(scope=SCOPE, page_size=1),
    }


# -- mutations ---------------------------------------------------------------------------------
Step = tuple[str, int | None]  # (field name, index into a repeated field or None)


@dataclass(frozen=True)
class Mutation:
    method: str
    path: tuple[Step, ...]
    kind: str
    strict: bool  # never a valid request: must be INVALID_ARGUMENT naming the field
    apply: Callable  # (request) -> bytes on the wire

    @property
    def field(self) -> str:
        """The field path as memoryd names it in a BadRequest (`messages[0].role`)."""
        return ".".join(name + ("" if index is None else f"[{index}]") for name, index in self.path)

    @property
    def id(self) -> str:
        return f"{self.method}:{self.field}:{self.kind}"


def _parent(request, path: tuple[Step, ...]):
    """The message holding the last field of `path`; repeated elements missing on the way
    (a oneof branch the baseline does not set) are added empty."""
    target = request
    for name, index in path[:-1]:
        target = getattr(target, name)
        if index is not None:
            while len(target) <= index:
                target.add()
            target = target[index]
    return target


def _set(request, path: tuple[Step, ...], value) -> None:
    parent = _parent(request, path)
    name, index = path[-1]
    if index is None:
        field = parent.DESCRIPTOR.fields_by_name[name]
        if field.message_type is not None:  # a sub-message: replace it whole
            getattr(parent, name).CopyFrom(value)
        else:
            setattr(parent, name, value)
    else:
        values = getattr(parent, name)
        if len(values) <= index:
            values.append(value)
        else:
            values[index] = value


def _setter(path, value) -> Callable:
    def apply(request) -> bytes:
        _set(request, path, value)
        return request.SerializeToString()

    return apply


def _cleared(path) -> Callable:
    def apply(request) -> bytes:
        _parent(request, path).ClearField(path[-1][0])
        return request.SerializeToString()

    return apply


def _emptied(path) -> Callable:
    def apply(request) -> bytes:
        target = getattr(_parent(request, path), path[-1][0])
        target.Clear()
        target.SetInParent()  # present (selects its oneof branch), every field at its default
        return request.SerializeToString()

    return apply


def _invalid_utf8(path) -> Callable:
    def apply(request) -> bytes:
        marker = "zq" + uuid.uuid4().hex
        _set(request, path, marker)
        raw = request.SerializeToString()
        return raw.replace(marker.encode(), b"\xc3\x28" + b"\xff" * (len(marker) - 2))

    return apply


def _repeat_many(path, element) -> Callable:
    def apply(request) -> bytes:
        parent = _parent(request, path)
        name, _ = path[-1]
        values = getattr(parent, name)
        del values[:]
        if isinstance(element, (str, int, float)):
            values.extend([element] * MANY)
        else:
            for _ in range(MANY):
                values.add().CopyFrom(element)
        return request.SerializeToString()

    return apply


def _nested_struct(depth: int, lists: bool = False) -> Callable[[struct_pb2.Struct], None]:
    def fill(target: struct_pb2.Struct) -> None:
        if lists:
            value = target.fields["a"]
            for _ in range(depth - 1):
                value = value.list_value.values.add()
            value.number_value = 1
            return
        for _ in range(depth - 1):
            target = target.fields["a"].struct_value
        target.fields["leaf"].number_value = 1

    return fill


def _struct(path, fill: Callable[[struct_pb2.Struct], None]) -> Callable:
    def apply(request) -> bytes:
        parent = _parent(request, path)
        name, index = path[-1]
        target = getattr(parent, name) if index is None else getattr(parent, name)[index]
        target.Clear()
        fill(target)  # built in place: too deep to copy through the decoder
        return request.SerializeToString()

    return apply


def _struct_value(key: str, number: float = 1.0) -> Callable[[struct_pb2.Struct], None]:
    def fill(target: struct_pb2.Struct) -> None:
        target.fields["ok"].struct_value.fields[key].number_value = number

    return fill


def _b64(data) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def _reencoded(token: str, position) -> str:
    """`token` with its position replaced, everything else kept: in the unsigned format memoryd
    once used (base64 JSON {"q": <query fingerprint>, "p": <position>}) that kept the query's
    fingerprint, so the server read the forged position; a signed token keeps its tag."""
    body, dot, tag = token.partition(".")
    try:
        decoded = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except ValueError:
        decoded = None
    if isinstance(decoded, dict) and "q" in decoded:
        return _b64({**decoded, "p": position})
    return _b64(position) + dot + tag


def _token_mutations(method: str, path, real: dict[str, str]) -> Iterator[tuple[str, bool, Callable]]:
    token = real[method]
    for name, position in (("position-ts-abc", {"ts": "abc", "seq": 1, "after": 5}), ("position-empty", {}),
                           ("position-null", None), ("position-nulls", {"ts": None, "seq": None, "after": None}),
                           ("position-huge", {"ts": 10**30, "seq": 10**30, "after": "a", "t": 10**30, "id": 1})):
        yield name, True, _setter(path, _reencoded(token, position))
    yield "unsigned", True, _setter(path, _b64({"q": "000000000000", "p": {"ts": 1, "seq": 1}}))
    yield "garbage", True, _setter(path, "%%%not-a-token")
    body, _, tag = token.partition(".")
    if tag:
        yield "tag-padding-bits", True, _setter(path, f"{body}.{tag[:-1]}{'B' if tag[-1] == 'A' else 'A'}")
        yield "tag-altered", True, _setter(path, f"{body}.{'A' if tag[0] != 'A' else 'B'}{tag[1:]}")
    other = next(m for m in sorted(real) if m != method)
    yield "other-query", True, _setter(path, real[other])
    yield "truncated", True, _setter(path, token[: len(token) // 2])


# Ids that print like another id or like nothing (domain/identifiers.py): refused in every id field.
LOOK_ALIKES = (
    ("lone-combining-mark", "\u0301"),
    ("nbsp", "a\u00a0b"),
    ("hangul-filler", "\u3164"),
    ("braille-blank", "\u2800"),
    ("lone-variation-selector", "\ufe0f"),
)


def _element_default(field: FieldDescriptor):
    if field.type == FieldDescriptor.TYPE_STRING:
        return "x"
    if field.type == FieldDescriptor.TYPE_ENUM:
        return field.enum_type.values[1].number
    if field.type in FLOAT_TYPES:
        return 0.5
    if field.type == FieldDescriptor.TYPE_BOOL:
        return True
    return 1


def _scalar_mutations(method: str, field: FieldDescriptor, path, real) -> Iterator[tuple[str, bool, Callable]]:
    output_only = field.full_name in OUTPUT_ONLY
    if field.type == FieldDescriptor.TYPE_STRING:
        yield "invalid-utf8", True, _invalid_utf8(path)
        if field.name == "page_token":
            yield from _token_mutations(method, path, real)
        elif field.name in TEXT_FIELDS:
            yield "oversize", True, _setter(path, "t" * OVERSIZE_TEXT)
            yield "nul", False, _setter(path, "a\x00b")
        else:
            for kind, value in (("nul", "a\x00b"), ("zero-width", "a\u200bb"), ("bidi", "\u202eab"),
                                ("whitespace", "  \u3000 "), ("too-long", "x" * (L.max_id_length + 1)), *LOOK_ALIKES):
                yield kind, not output_only, _setter(path, value)
            yield "at-limit", False, _setter(path, "x" * L.max_id_length)
    elif field.type == FieldDescriptor.TYPE_ENUM:
        yield "unknown-enum", True, _setter(path, 999)
        yield "negative-enum", True, _setter(path, -1)
    elif field.type in INT_RANGES or field.type in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_UINT64):
        low, high = INT_RANGES.get(field.type, (0, 2**32 - 1))
        if low < 0:
            yield "minus-one", not output_only, _setter(path, -1)
            yield "minimum", not output_only, _setter(path, low)
        yield "maximum", False, _setter(path, high)
    elif field.type in FLOAT_TYPES:
        for kind, value in (("nan", math.nan), ("inf", math.inf), ("minus-inf", -math.inf)):
            yield kind, True, _setter(path, value)
        yield "huge", False, _setter(path, 1e30)
    elif field.type == FieldDescriptor.TYPE_BOOL:
        yield "true", False, _setter(path, True)
        yield "false", False, _setter(path, False)


def _map_entry(path, key: str, value: str) -> Callable:
    """The map<string, string> at `path` holding just key -> value (invalid UTF-8 for "\\xff")."""

    def apply(request) -> bytes:
        target = getattr(_parent(request, path), path[-1][0])
        target.clear()
        marker = "zq" + uuid.uuid4().hex
        target[key.replace("\xff", marker)] = value.replace("\xff", marker)
        return request.SerializeToString().replace(marker.encode(), b"\xc3\x28" + b"\xff" * (len(marker) - 2))

    return apply


def _map_mutations(path) -> Iterator[tuple[str, str, bool, Callable]]:
    """(key, value or None for the map itself, kind, strict, apply) of a map<string, string>
    (session labels): its keys and values follow the name rule (an empty value is allowed),
    and its size the item limit."""
    def many(request) -> bytes:
        target = getattr(_parent(request, path), path[-1][0])
        target.update({f"k{i}": "v" for i in range(MANY)})
        return request.SerializeToString()

    yield None, "too-many", False, many
    for kind, bad in (("invalid-utf8", "\xff"), ("nul", "a\x00b"), ("zero-width", "a\u200bb"), ("bidi", "\u202eab"),
                      ("whitespace", "  \u3000 "), ("too-long", "x" * (L.max_id_length + 1)), *LOOK_ALIKES):
        yield "key", kind, True, _map_entry(path, bad, "v")
        yield "value", kind, True, _map_entry(path, "k", bad)
    yield "key", "empty", True, _map_entry(path, "", "v")
    yield "value", "empty", False, _map_entry(path, "k", "")
    yield "key", "at-limit", False, _map_entry(path, "x" * L.max_id_length, "v")
    yield "value", "at-limit", False, _map_entry(path, "k", "x" * L.max_id_length)


def _struct_mutations(path) -> Iterator[tuple[str, bool, Callable]]:
    yield "struct-too-deep", True, _struct(path, _nested_struct(MAX_JSON_DEPTH + 1))
    yield "list-too-deep", True, _struct(path, _nested_struct(MAX_JSON_DEPTH + 1, lists=True))
    yield "struct-at-depth-limit", False, _struct(path, _nested_struct(MAX_JSON_DEPTH))
    yield "struct-past-decoder", True, _struct(path, _nested_struct(DECODER_DEPTH))
    yield "struct-nan", True, _struct(path, _struct_value("n", math.nan))
    yield "struct-inf", True, _struct(path, _struct_value("n", math.inf))
    yield "key-nul", True, _struct(path, _struct_value("a\x00b"))
    yield "key-dollar", True, _struct(path, _struct_value("$where"))
    yield "key-dotted", False, _struct(path, _struct_value("a.b"))


def generate(base: dict[str, object], real_tokens: dict[str, str]) -> list[Mutation]:
    mutations: list[Mutation] = []

    def walk(method: str, descriptor: Descriptor, path: tuple[Step, ...], holder) -> None:
        for field in descriptor.fields:
            step = (field.name, None)
            if field.message_type is not None and field.message_type.full_name == "google.protobuf.Struct":
                for kind, strict, apply in _struct_mutations(path + (step,)):
                    mutations.append(Mutation(method, path + (step,), kind, strict, apply))
                continue
            if field.message_type is not None and field.message_type.GetOptions().map_entry:
                for part, kind, strict, apply in _map_mutations(path + (step,)):
                    at = path + (step,) + (((part, None),) if part else ())
                    mutations.append(Mutation(method, at, kind, strict, apply))
                continue
            if field.is_repeated:
                values = getattr(holder, field.name)
                if values:
                    element = values[0]
                elif field.message_type is not None:
                    element = message_factory.GetMessageClass(field.message_type)()
                else:  # in a oneof branch the baseline does not set
                    element = _element_default(field)
                many = copy.deepcopy(element) if field.message_type is not None else element
                mutations.append(Mutation(method, path + (step,), "too-many", False, _repeat_many(path + (step,), many)))
                item = (field.name, 0)
                if field.message_type is not None:
                    walk(method, field.message_type, path + (item,), element)
                else:
                    for kind, strict, apply in _scalar_mutations(method, field, path + (item,), real_tokens):
                        mutations.append(Mutation(method, path + (item,), kind, strict, apply))
                continue
            if field.message_type is not None:
                for kind, apply in (("absent", _cleared(path + (step,))), ("empty", _emptied(path + (step,)))):
                    mutations.append(Mutation(method, path + (step,), kind, False, apply))
                walk(method, field.message_type, path + (step,), getattr(holder, field.name))
                continue
            for kind, strict, apply in _scalar_mutations(method, field, path + (step,), real_tokens):
                mutations.append(Mutation(method, path + (step,), kind, strict, apply))

    for service in SERVICES:
        for method in service.methods:
            walk(method.name, method.input_type, (), base[method.name])
    return mutations


def every_field(service_methods) -> set[tuple[str, str]]:
    """(method, field path without indexes) of every field of every request message."""
    found: set[tuple[str, str]] = set()

    def walk(method: str, descriptor: Descriptor, prefix: str) -> None:
        for field in descriptor.fields:
            path = prefix + field.name
            found.add((method, path))
            if field.message_type is not None and field.message_type.full_name != "google.protobuf.Struct":
                walk(method, field.message_type, path + ".")

    for method in service_methods:
        walk(method.name, method.input_type, "")
    return found


def _plain(path: str) -> str:
    return path.replace("[0]", "")


def test_every_field_of_every_request_is_mutated():
    methods = [m for s in SERVICES for m in s.methods]
    real = {m: "body.tag" for m in ("GetFullHistory", "ListMessagesInRange", "ListSessions", "ListMetadata",
                                    "ListSummaries", "ListEntries", "ListNamespaces")}
    mutated = {(m.method, _plain(m.field)) for m in generate(baselines(), real)}
    assert every_field(methods) <= mutated, sorted(every_field(methods) - mutated)
    assert len(methods) >= 32


# -- running them --------------------------------------------------------------------------------
def _related(named: str, field: str, aliases: tuple[str, ...]) -> bool:
    for want in (field, *aliases):
        if named == want or want.startswith((named + ".", named + "[")) or named.startswith((want + ".", want + "[")):
            return True
    return False


def _aliases(mutation: Mutation, request) -> tuple[str, ...]:
    """Names that also count as naming the mutated field: its oneof group, a cross-field rule."""
    aliases = []
    parent = _parent(request, mutation.path)
    if not hasattr(parent, "DESCRIPTOR"):  # a map's key or value: the map is the field
        return ()
    field = parent.DESCRIPTOR.fields_by_name[mutation.path[-1][0]]
    prefix = mutation.field.rpartition(".")[0]
    if field.containing_oneof is not None and not field.containing_oneof.name.startswith("_"):
        aliases.append((prefix + "." if prefix else "") + field.containing_oneof.name)
    if (instead := NAMED_INSTEAD.get((mutation.method, mutation.field))) is not None:
        aliases.append(instead)
    return tuple(aliases)


class Wire:
    """Raw-bytes callables for every RPC: the generator sends exactly the bytes it built."""

    def __init__(self, channel: grpc.aio.Channel, token: str) -> None:
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.methods = {}
        for service in SERVICES:
            for method in service.methods:
                response = message_factory.GetMessageClass(method.output_type)
                make = channel.unary_stream if method.server_streaming else channel.unary_unary
                self.methods[method.name] = (
                    make(f"/{service.full_name}/{method.name}", request_serializer=None,
                         response_deserializer=response.FromString),
                    method.server_streaming,
                )

    async def call(self, method: str, raw: bytes) -> grpc.StatusCode:
        """OK when the server took the request; a refusal raises its AioRpcError. A stream is
        taken when its first message arrives: Watch opens with a progress, nothing else."""
        stub, streaming = self.methods[method]
        if not streaming:
            await stub(raw, metadata=self.metadata, timeout=15)
            return grpc.StatusCode.OK
        stream = stub(raw, metadata=self.metadata, timeout=15)
        try:
            first = await stream.read()
        finally:
            stream.cancel()
        if first is grpc.aio.EOF or not first.HasField("progress"):
            raise AssertionError(f"{method}: a stream the server took did not open with a progress: {first}")
        return grpc.StatusCode.OK


async def seed(caller: Caller) -> dict[str, str]:
    """Data every baseline reads, and one real page token of each listing RPC."""
    for session in (SEEDED, "seeded-2"):
        await caller.call("memory", "SaveMessages", mem.SaveMessagesRequest(
            session_id=session, messages=[message_pb2.Message(role="user", content="hello", timestamp=1000 + i, kind="chat")
                                          for i in range(3)]))
    for key in ("a", "b"):
        await caller.call("metadata", "SaveMetadata", meta.SaveMetadataRequest(namespace=NS, key=key, data={"v": 1}))
        await caller.call("entries", "SaveEntry", ent.SaveEntryRequest(scope=SCOPE, text=f"likes {key}"))
    await caller.call("metadata", "SaveMetadata", meta.SaveMetadataRequest(namespace=NS + "-2", key="a", data={"v": 1}))
    for seq in (1, 2):
        await caller.call("summaries", "SaveSummary", summ.SaveSummaryRequest(session_id=SEEDED, from_seq=seq, to_seq=seq, text="s"))
    await caller.call("vectors", "UpsertVectors", vec.UpsertVectorsRequest(points=[vec.VectorPoint(
        model_id=MODEL, vector=[0.1, 0.2, 0.3], session_id=SEEDED, timestamp=1000, role="user", text="hello")]))
    requests = {
        "GetFullHistory": ("memory", mem.GetFullHistoryRequest(session_id=SEEDED, page_size=1)),
        "ListMessagesInRange": ("memory", mem.ListMessagesInRangeRequest(session_id=SEEDED, to_ts=10**6, page_size=1)),
        "ListSessions": ("memory", mem.ListSessionsRequest(page_size=1)),
        "ListMetadata": ("metadata", meta.ListMetadataRequest(namespace=NS, page_size=1)),
        "ListNamespaces": ("metadata", meta.ListNamespacesRequest(prefix=NS[:4], page_size=1)),
        "ListSummaries": ("summaries", summ.ListSummariesRequest(session_id=SEEDED, page_size=1)),
        "ListEntries": ("entries", ent.ListEntriesRequest(scope=SCOPE, page_size=1)),
    }
    tokens = {}
    for method, (service, request) in requests.items():
        tokens[method] = (await caller.call(service, method, request)).next_page_token
        assert tokens[method], method
    return tokens


@pytest.fixture(scope="module", params=BACKENDS)
async def generated_target(request, tmp_path_factory):
    uri = "" if request.param == "sqlite" else mongo_uri_for(request.param, request)
    token = new_token()
    app = await start_app(tmp_path_factory.mktemp("generated"), {"gen": token}, mongodb_uri=uri, limits=L)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    caller = Caller(channel, token, "gen")
    tokens = await seed(caller)
    yield request.param, app, channel, caller, Wire(channel, token), tokens
    await channel.close()
    await app.stop(0)



async def _stored_state(app, caller: Caller):
    stats = await caller.call("vectors", "GetVectorStats", vec.GetVectorStatsRequest())
    return await app.store.event_bounds(caller.tenant), sorted((m.model_id, m.count) for m in stats.models)


def _sample(mutations: list[Mutation], backend: str) -> list[Mutation]:
    """All of them on SQLite; one per field on MongoDB (a different one each run, strict first)."""
    if backend == "sqlite":
        return mutations
    rnd = random.Random(os.environ.get("MEMORYD_GENERATOR_SEED") or uuid.uuid4().int)
    by_field: dict[tuple[str, str], list[Mutation]] = collections.defaultdict(list)
    for m in mutations:
        by_field[(m.method, m.field)].append(m)
    return [rnd.choice([m for m in group if m.strict] or group) for group in by_field.values()]


async def test_generated_mutations_are_rejected_with_the_field_named(generated_target, capsys):
    backend, app, _, caller, wire, tokens = generated_target
    base = baselines()
    mutations = _sample(generate(base, tokens), backend)
    counts: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    for mutation in mutations:
        request = copy.deepcopy(base[mutation.method])
        raw = mutation.apply(request)
        before = await _stored_state(app, caller)
        try:
            code = await wire.call(mutation.method, raw)
        except grpc.aio.AioRpcError as error:
            code = error.code()
            reason, fields = error_details(error)
            counts[code.name] += 1
            if code == grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in (error.details() or ""):
                continue  # gRPC's own receive limit (max_request_bytes): nothing ran
            if code in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL) or rich_status(error) is None:
                failures.append(f"{mutation.id}: {code.name} {error.details()}")
                continue
            if await _stored_state(app, caller) != before:
                failures.append(f"{mutation.id}: rejected with {code.name} but stored something")
            if mutation.strict:
                if code != grpc.StatusCode.INVALID_ARGUMENT:
                    failures.append(f"{mutation.id}: {code.name}, not INVALID_ARGUMENT")
                elif reason == "MALFORMED_REQUEST":
                    if mutation.kind not in ("invalid-utf8", "struct-past-decoder"):
                        failures.append(f"{mutation.id}: MALFORMED_REQUEST for a decodable request")
                elif not any(_related(f, mutation.field, _aliases(mutation, request)) for f in fields):
                    failures.append(f"{mutation.id}: named {fields}, not {mutation.field}")
            elif code == grpc.StatusCode.INVALID_ARGUMENT and reason != "MALFORMED_REQUEST" and not fields:
                failures.append(f"{mutation.id}: INVALID_ARGUMENT without a field")
            continue
        counts[code.name] += 1
        if mutation.strict:
            failures.append(f"{mutation.id}: accepted")
    with capsys.disabled():
        print(f"\n[{backend}] {len(mutations)} generated mutations: {dict(sorted(counts.items()))}")
    assert not failures, "\n".join(failures)
