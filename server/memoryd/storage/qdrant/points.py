"""What both Qdrant adapters store and filter on, written once: the point payload, the
payload indexes, and every filter as an engine-neutral tree (`Cond`) that each adapter
translates into its client's classes (qdrant_client.models / qdrant_edge).

A point's payload: `tenant`, `session_id`, `timestamp`, `indexed_at`, and those of
`message_id`, `role`, `platform`, `sender_id`, `mentioned_ids`, `speaker_label`, `text`
and `model_id` that are set (a legacy vector and a keyword point have no `model_id`); a
dense point also has `tenant_model` (its tenant and model in one key, for model filters).
A message's points have `text_hash` (TEXT_HASH_FIELD) instead of `text`: the text lives in
the store, and searches read it from there (docs/VECTORS.md, "Storage layout").

Spaces: a collection (server) or shard pair (Edge) per dense dimension, `<prefix>_d<dim>`,
and one keyword index, `<prefix>_keywords`, whose points hold a BM25 sparse vector
(keywords.py) instead of a dense one. The adapters key both by an int: the dimension, or
KEYWORD_SPACE (0, a dimension no dense vector has).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

from memoryd.domain.sessions import OWNER_KEY
from memoryd.domain.vectors import PointFilter, Scope, VectorRecord, VectorSelector

# Payload indexes, created idempotently with every collection / shard (and those no filter
# needs dropped): `tenant` is the tenant key (per-tenant HNSW graphs); the keyword fields
# only filter (no graph links of their own). `timestamp` and `indexed_at` have none: only
# deletes filter on them, beside the tenant and mostly a session, whose indexes select the
# points, and each index costs every write (docs/VECTORS.md, "Payload indexes").
TENANT_FIELD = "tenant"
# A dense point's tenant and model in one keyword (tenant_model_key): a model-filtered
# search matches one value instead of checking the tenant and the model of each point the
# model's index selects, 3-6x less engine time (docs/VECTORS.md, "Payload indexes").
TENANT_MODEL_FIELD = "tenant_model"
# (TENANT_MODEL_FIELD last: its index, created after the backfill, marks that done.)
KEYWORD_FIELDS = (
    "model_id",
    "session_id",
    "platform",
    "message_id",
    "sender_id",
    "mentioned_ids",
    "role",
    TENANT_MODEL_FIELD,
)
DENSE_ONLY_FIELDS = ("model_id", TENANT_MODEL_FIELD)
# Multitenancy (Qdrant's guide): no global graph (m=0), a graph per tenant (payload_m).
HNSW_M = 0
HNSW_PAYLOAD_M = 16
HNSW_EF_CONSTRUCT = 100
# Below this many KB of filtered vectors a search scans the payload index's matches
# exactly instead of walking a graph (Qdrant's default).
FULL_SCAN_THRESHOLD_KB = 10_000
FACET_LIMIT = 10_000
KEYWORD_SPACE = 0
TEXT_FIELD = "text"
# A message's points: its text's hash (domain.vectors.text_hash), not the text. Not indexed:
# no filter reads it.
TEXT_HASH_FIELD = "text_hash"
KEYWORD_COLLECTION = "keywords"
KEYWORD_VECTOR = "bm25"  # the keyword points' named sparse vector (IDF modifier)


# -- engine-neutral filters ---------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Match:
    key: str
    value: str | int


@dataclass(frozen=True, slots=True)
class AnyOf:
    key: str
    values: tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Below:
    key: str
    lt: int


@dataclass(frozen=True, slots=True)
class HasId:
    ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Missing:
    """The field is absent, null or empty."""

    key: str


@dataclass(frozen=True, slots=True)
class All:
    """must: every one; should: at least one (when given); must_not: none."""

    must: tuple[Cond, ...] = ()
    should: tuple[Cond, ...] = ()
    must_not: tuple[Cond, ...] = ()


Cond = Match | AnyOf | Below | HasId | Missing | All


def tenant_model_key(tenant: str, model_id: str | None) -> str:
    """The TENANT_MODEL_FIELD value: unambiguous for any tenant and model (the tenant's length
    first); a legacy vector's (no model id) ends after the tenant."""
    return f"{len(tenant)}:{tenant}:{model_id or ''}"


def with_tenant_model(payload: dict[str, Any]) -> dict[str, Any]:
    """A dense point's payload with its TENANT_MODEL_FIELD (points written before the field
    existed, read back from an operation log, lack it)."""
    if TENANT_MODEL_FIELD not in payload:
        payload = {
            **payload,
            TENANT_MODEL_FIELD: tenant_model_key(str(payload.get(TENANT_FIELD, "")), payload.get("model_id")),
        }
    return payload


@dataclass(frozen=True, slots=True)
class Count:
    """Ask: how many points `filter` admits (exactly)."""

    filter: All


@dataclass(frozen=True, slots=True)
class Facet:
    """Ask: the values of `key` among the points `filter` admits (up to FACET_LIMIT)."""

    key: str
    filter: All


@dataclass(frozen=True, slots=True)
class SetPayloadWhere:
    """Do: set `payload` on the points `filter` admits."""

    filter: All
    payload: dict[str, Any]


BackfillStep = Count | Facet | SetPayloadWhere


def tenant_model_backfill() -> Generator[BackfillStep, Any, bool]:
    """Give the points of a space written before TENANT_MODEL_FIELD existed their key, as
    steps an adapter carries out on its engine (answering a Count with an int and a Facet
    with its values); returns whether there were any. Per (tenant, model) group, by filter;
    `model_id` stored empty by an earlier release counts as legacy, as record_of reads it."""
    unkeyed = All(must=(Missing(TENANT_MODEL_FIELD),))
    remaining: int = yield Count(unkeyed)
    found = bool(remaining)
    while remaining:  # FACET_LIMIT tenants a pass
        for tenant in (yield Facet(TENANT_FIELD, unkeyed)):
            theirs = tenant_filter(tenant, unkeyed)
            models: list[str | None] = list((yield Facet("model_id", theirs)))
            if (yield Count(tenant_filter(tenant, unkeyed, Missing("model_id")))):
                models.append(None)
            for model in models:
                model_cond = Missing("model_id") if model is None else Match("model_id", model)
                yield SetPayloadWhere(
                    tenant_filter(tenant, unkeyed, model_cond), {TENANT_MODEL_FIELD: tenant_model_key(tenant, model)}
                )
        left: int = yield Count(unkeyed)
        if left >= remaining:  # points without a tenant: no search can reach them anyway
            break
        remaining = left
    return found


def tenant_filter(tenant: str, *conditions: Cond) -> All:
    return All(must=(Match(TENANT_FIELD, tenant), *conditions))


def sessions_condition(flt: PointFilter) -> tuple[Cond, ...]:
    """The filter's session boundary (a user-bound caller's sessions), if it has one, and its
    owner boundary (a user-bound caller's user: points stamped with it, or unstamped)."""
    conditions: tuple[Cond, ...] = () if flt.sessions is None else (AnyOf("session_id", tuple(flt.sessions)),)
    if flt.reader is not None:
        conditions += (All(should=(Match(OWNER_KEY, flt.reader), Missing(OWNER_KEY))),)
    return conditions


def corpus_filter(flt: PointFilter) -> All:
    """The points a keyword query's IDF is computed over: the tenant's, within the filter's
    session boundary (so a user-bound caller's scores reveal nothing of other users' texts)."""
    return tenant_filter(flt.tenant, *sessions_condition(flt))


def scope_condition(scope: Scope) -> Cond | None:
    """The scope's alternatives (any one admits a point); None when it does not restrict."""
    if scope.unrestricted:
        return None
    alternatives: list[Cond] = []
    if scope.session_id:
        alternatives.append(Match("session_id", scope.session_id))
    if scope.platform:
        alternatives.append(Match("platform", scope.platform))
    if scope.speaker_ids:
        alternatives.append(AnyOf("sender_id", tuple(scope.speaker_ids)))
        alternatives.append(AnyOf("mentioned_ids", tuple(scope.speaker_ids)))
    return All(should=tuple(alternatives))


def point_filter(flt: PointFilter, *extra: Cond) -> All:
    """The engine filter of `flt` (dense points; keyword points have no model). With a model,
    the tenant-and-model key alone selects the tenant's points of it (and, `legacy`, those
    without a model id)."""
    if flt.model_id is None:
        owner: Cond = Match(TENANT_FIELD, flt.tenant)
    elif flt.legacy:
        owner = AnyOf(
            TENANT_MODEL_FIELD, (tenant_model_key(flt.tenant, flt.model_id), tenant_model_key(flt.tenant, None))
        )
    else:
        owner = Match(TENANT_MODEL_FIELD, tenant_model_key(flt.tenant, flt.model_id))
    must: list[Cond] = [owner, *sessions_condition(flt), *extra]
    condition = scope_condition(flt.scope)
    if condition is not None:
        must.append(condition)
    must_not: list[Cond] = []
    if flt.exclude_roles:
        roles = tuple(flt.exclude_roles)
        if "user" in roles:  # a point without a role is a user
            roles += ("",)
            must_not.append(Missing("role"))
        must_not.append(AnyOf("role", roles))
    if flt.exclude_message_ids:
        must_not.append(AnyOf("message_id", flt.exclude_message_ids))
    return All(must=tuple(must), must_not=tuple(must_not))


def selector_filter(selector: VectorSelector) -> All:
    must: list[Cond] = [Match(TENANT_FIELD, selector.tenant)]
    if selector.session_id is not None:
        must.append(Match("session_id", selector.session_id))
    if selector.model_id is not None:
        must.append(Match("model_id", selector.model_id))
    if selector.indexed_before is not None:
        must.append(Below("indexed_at", selector.indexed_before))
    should: list[Cond] = []
    if selector.message_ids:
        should.append(AnyOf("message_id", tuple(selector.message_ids)))
    if selector.timestamps:
        should.append(AnyOf("timestamp", tuple(selector.timestamps)))
    if selector.unowned_timestamps:
        should.append(All(must=(Missing("message_id"), AnyOf("timestamp", tuple(selector.unowned_timestamps)))))
    return All(must=tuple(must), should=tuple(should))


def keyword_fields(space: int) -> tuple[str, ...]:
    """The keyword-indexed fields of a space: a keyword point has no model."""
    return tuple(k for k in KEYWORD_FIELDS if k not in DENSE_ONLY_FIELDS) if space == KEYWORD_SPACE else KEYWORD_FIELDS


def indexed_fields(space: int) -> frozenset[str]:
    """Every payload index a space's collection / shard should have."""
    return frozenset((TENANT_FIELD, *keyword_fields(space)))


# -- payload ------------------------------------------------------------------------
def payload_of(tenant: str, r: VectorRecord, indexed_at: int, *, keyword: bool = False) -> dict[str, Any]:
    """The point's payload. Empty fields are left out: every filter treats a missing field as
    empty (`Missing`; a `Match` / `AnyOf` of a non-empty value never matches it) and
    `record_of` reads it back empty, while each string value costs Qdrant Edge's binding
    about 2 µs to convert (docs/PERFORMANCE.md). A keyword point (`keyword`) has no
    `model_id` and no TENANT_MODEL_FIELD. A message's point (a record with `text_hash`) has
    the hash and not the text (the store has it)."""
    payload: dict[str, Any] = {
        TENANT_FIELD: tenant,
        "session_id": r.session_id,
        "timestamp": r.timestamp,
        "indexed_at": indexed_at,
    }
    for key, value in (
        ("message_id", r.message_id),
        ("role", r.role),
        ("platform", r.platform),
        ("sender_id", r.sender_id),
        ("speaker_label", r.speaker_label),
        (OWNER_KEY, r.owner),
    ):
        if value:
            payload[key] = value
    if r.text_hash is not None:
        payload[TEXT_HASH_FIELD] = r.text_hash
    elif r.text:
        payload[TEXT_FIELD] = r.text
    if r.mentioned_ids:
        payload["mentioned_ids"] = list(r.mentioned_ids)
    if not keyword:
        if r.model_id:
            payload["model_id"] = r.model_id
        payload[TENANT_MODEL_FIELD] = tenant_model_key(tenant, r.model_id)
    return payload


def record_of(payload: dict[str, Any]) -> VectorRecord:
    return VectorRecord(
        session_id=str(payload.get("session_id", "")),
        timestamp=int(payload.get("timestamp") or 0),
        model_id=payload.get("model_id") or None,
        message_id=str(payload.get("message_id") or ""),
        role=str(payload.get("role") or ""),
        platform=str(payload.get("platform") or ""),
        sender_id=str(payload.get("sender_id") or ""),
        mentioned_ids=tuple(payload.get("mentioned_ids") or ()),
        speaker_label=str(payload.get("speaker_label") or ""),
        text=str(payload.get(TEXT_FIELD) or ""),
        owner=payload.get(OWNER_KEY) or None,
        text_hash=_int_or_none(payload.get(TEXT_HASH_FIELD)),
    )


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def collection_name(prefix: str, space: int) -> str:
    return f"{prefix}_{KEYWORD_COLLECTION}" if space == KEYWORD_SPACE else f"{prefix}_d{space}"


def dimension_of(prefix: str, name: str) -> int | None:
    marker = f"{prefix}_d"
    rest = name[len(marker) :]
    return int(rest) if name.startswith(marker) and rest.isdigit() else None


def space_of(prefix: str, name: str) -> int | None:
    """The space a collection / shard folder name holds (a dimension, or KEYWORD_SPACE)."""
    if name == collection_name(prefix, KEYWORD_SPACE):
        return KEYWORD_SPACE
    dimension = dimension_of(prefix, name)
    return dimension or None


def dimensions_of(prefix: str, names: Sequence[str]) -> list[int]:
    return sorted(d for d in (dimension_of(prefix, n) for n in names) if d)
