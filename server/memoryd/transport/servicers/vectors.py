"""memoryd.v1.VectorService: validate, call VectorRecall, build the response."""

from __future__ import annotations

from dataclasses import replace

from memoryd.domain import recall, search_defaults
from memoryd.domain.models import now_ms
from memoryd.domain.sessions import owner_stamps
from memoryd.domain.vectors import VectorPoint, VectorRecord, VectorSelector
from memoryd.transport.access import Gate
from memoryd.transport.convert import message_to_proto
from memoryd.transport.rpc import unary
from memoryd.transport.validation import Check
from memoryd.v1 import vector_service_pb2 as pb
from memoryd.v1 import vector_service_pb2_grpc as pb_grpc
from memoryd.vectors.recall import SearchResult, VectorRecall

MAX_POINTS = 1000
MAX_EXCLUDED_IDS = 1000
MAX_BOOST = 100.0
SCOPES = [s.value for s in recall.RecallScope]
SLICE_MODES = [m.value for m in recall.SliceMode]
ROLES = list(pb.RecallRoles.values())
MAX_HALF_LIFE_HOURS = 87_600.0  # ten years
RETRIEVALS = {  # (semantic part ran, keyword part ran)
    (True, False): pb.RECALL_RETRIEVAL_SEMANTIC,
    (False, True): pb.RECALL_RETRIEVAL_KEYWORD,
    (True, True): pb.RECALL_RETRIEVAL_HYBRID,
    (False, False): pb.RECALL_RETRIEVAL_UNSPECIFIED,
}


class VectorServicer(pb_grpc.VectorServiceServicer):
    def __init__(self, vectors: VectorRecall, auth: Gate, limits) -> None:
        self.vectors = vectors
        self.auth = auth
        self.limits = limits

    @unary
    async def UpsertVectors(self, request: pb.UpsertVectorsRequest, context, tenant: str) -> pb.UpsertVectorsResponse:
        check = Check(self.limits)
        points = []
        if check.count("points", request.points, MAX_POINTS, minimum=1):
            for i, p in enumerate(request.points):
                field = f"points[{i}]"
                # Each field read once: every read of a upb field builds a new Python object.
                record = VectorRecord(
                    session_id=p.session_id,
                    timestamp=p.timestamp,
                    model_id=None if p.legacy else p.model_id,
                    message_id=p.message_id,
                    role=p.role,
                    platform=p.platform,
                    sender_id=p.sender_id,
                    mentioned_ids=tuple(p.mentioned_ids),
                    speaker_label=p.speaker_label,
                    text=p.text,
                )
                if p.legacy:
                    if p.model_id:
                        check.fail(f"{field}.model_id", "must be empty for a legacy point")
                else:
                    check.name(f"{field}.model_id", p.model_id)
                vector = p.vector[:]  # one pass over the repeated field: a list to check and store
                check.vector(f"{field}.vector", vector)
                check.name(f"{field}.session_id", record.session_id)
                check.name(f"{field}.message_id", record.message_id, required=False)
                check.positive(f"{field}.timestamp", record.timestamp)
                for name in ("role", "platform", "sender_id", "speaker_label"):
                    check.name(f"{field}.{name}", getattr(record, name), required=False)
                check.names(f"{field}.mentioned_ids", record.mentioned_ids)
                check.text_bytes(f"{field}.text", record.text, self.limits.max_content_bytes)
                points.append(VectorPoint(tenant, vector, record))
        check.done()
        # Each point carries its session's owner (sessions.record_owner), as a summary slice does.
        stamps = await owner_stamps(self.auth.store, tenant, (p.record.session_id for p in points))
        points = [replace(p, record=replace(p.record, owner=stamps[p.record.session_id])) for p in points]
        # A write keyed by the sessions: retention's idle counts it (domain/retention.py). First,
        # so that a store that cannot take it refuses the call before any point is written.
        await self.auth.store.touch_sessions(tenant, [p.record.session_id for p in points], now_ms())
        ids = await self.vectors.upsert(tenant, points)
        return pb.UpsertVectorsResponse(point_ids=ids)

    @unary
    async def SearchMemory(self, request: pb.SearchMemoryRequest, context, tenant: str) -> pb.SearchMemoryResponse:
        scope = check_search(Check(self.limits), request, self.vectors.embedder)
        settled = search_defaults.settle(
            search_defaults.Search.MESSAGES, asked(request), self.vectors.defaults, self.vectors.control_kinds
        )
        query = settled.recall_query(
            vector=list(request.query_vector),
            model_id=request.model_id,
            text=request.query_text,
            min_score=request.min_score,
            reference_time=request.reference_time if request.HasField("reference_time") else None,
            scope=scope,
            session_id=request.session_id,
            platform=request.platform,
            speaker_ids=tuple(request.speaker_ids),
            others_only=request.recall_roles == pb.RECALL_ROLES_OTHERS_ONLY,
            per_item_max_chars=request.per_item_max_chars,
            exclude_message_ids=frozenset(request.exclude_message_ids),
            keep_repeated_texts=request.keep_repeated_texts,
            sessions=await self.auth.user_sessions(context.caller),  # in the index query
            slices=recall.SliceMode(request.slices or recall.SliceMode.OFF),
            reader=context.caller.user_id,  # its points only, in the index query too
        )
        await self.vectors.wait_indexed(tenant, request.wait_for_event_seq)
        return search_response(query, await self.vectors.search(tenant, query))

    @unary
    async def DeleteVectors(self, request: pb.DeleteVectorsRequest, context, tenant: str) -> pb.DeleteVectorsResponse:
        check = Check(self.limits)
        which = request.WhichOneof("selector")
        selector = VectorSelector(tenant)
        if which is None:
            check.fail("selector", "one of session, timestamps, model or all is required")
        elif which == "session":
            check.name("session.session_id", request.session.session_id)
            selector = VectorSelector(tenant, session_id=request.session.session_id)
        elif which == "timestamps":
            by = request.timestamps
            check.name("timestamps.session_id", by.session_id)
            if check.count("timestamps.timestamps", by.timestamps, self.limits.max_delete_items, minimum=1):
                if any(t < 0 for t in by.timestamps):
                    check.fail("timestamps.timestamps", "must not be negative")
            selector = VectorSelector(tenant, session_id=by.session_id, timestamps=tuple(sorted(set(by.timestamps))))
        elif which == "model":
            check.name("model.model_id", request.model.model_id)
            selector = VectorSelector(tenant, model_id=request.model.model_id)
        check.done()
        deleted = await self.vectors.delete(selector, clear_marker=which == "all")
        return pb.DeleteVectorsResponse(deleted_count=deleted.vectors, keyword_points_deleted=deleted.keywords)

    @unary
    async def GetVectorStats(
        self, request: pb.GetVectorStatsRequest, context, tenant: str
    ) -> pb.GetVectorStatsResponse:
        stats = await self.vectors.stats(tenant)
        response = pb.GetVectorStatsResponse(
            legacy_model=stats.legacy_model,
            embedder_configured=self.vectors.embedder is not None,
            index_queue_length=max(0, stats.event_seq - stats.indexed_through_seq),
            keyword_points=stats.keyword_points,
            indexed_through_seq=stats.indexed_through_seq,
            event_seq=stats.event_seq,
            rebuilding=stats.rebuilding,
        )
        for m in stats.models:
            response.models.add(model_id=m.model_id or "", count=m.count, dimension=m.dimension)
        for c in stats.collections:
            response.collections.add(collection=c.collection, dimension=c.dimension, count=c.count)
        return response


def check_search(check: Check, request: pb.SearchMemoryRequest, embedder) -> recall.RecallScope:
    """Refuses a SearchMemory request that is not valid (INVALID_ARGUMENT, every problem
    named); returns its scope."""
    check.recall_query(request)
    text_only = bool(request.query_text) and not request.query_vector
    if text_only and request.model_id and embedder is not None and request.model_id != embedder.model_id:
        check.fail("model_id", f"query_text is embedded with {embedder.model_id!r}")
    check.between("min_score", request.min_score, -1.0, 1.0)
    if request.wait_for_event_seq < 0:
        check.fail("wait_for_event_seq", "must be 0 (no wait) or an event seq")
    for name in ("time_weight", "neighbor_weight", "date_weight"):
        if request.HasField(name):
            check.between(name, getattr(request, name), 0.0, 1.0)
    if request.HasField("user_priority_boost"):
        check.between("user_priority_boost", request.user_priority_boost, 0.0, MAX_BOOST)
    if request.HasField("half_life_hours"):
        check.between("half_life_hours", request.half_life_hours, 0.0, MAX_HALF_LIFE_HOURS)
        if request.half_life_hours == 0:
            check.fail("half_life_hours", "must be above 0")
    if request.HasField("reference_time"):
        check.positive("reference_time", request.reference_time)
    if request.scope not in (0, *SCOPES):
        check.fail("scope", f"unknown enum value {request.scope}")
    if request.recall_roles not in ROLES:
        check.fail("recall_roles", f"unknown enum value {request.recall_roles}")
    scope = recall.RecallScope(request.scope or recall.RecallScope.ALL) if request.scope in (0, *SCOPES) else None
    check.name("session_id", request.session_id, required=scope is recall.RecallScope.SESSION)
    check.name("platform", request.platform, required=scope is recall.RecallScope.PLATFORM)
    check.names("speaker_ids", request.speaker_ids)
    if scope is recall.RecallScope.USER and not request.speaker_ids:
        check.fail("speaker_ids", "is required with RECALL_SCOPE_USER")
    if request.HasField("context_window") and not 0 <= request.context_window <= recall.MAX_CONTEXT_WINDOW:
        check.fail("context_window", f"must be between 0 and {recall.MAX_CONTEXT_WINDOW}")
    check.non_negative("per_item_max_chars", request.per_item_max_chars)
    if check.count("exclude_message_ids", request.exclude_message_ids, MAX_EXCLUDED_IDS):
        for i, value in enumerate(request.exclude_message_ids):
            check.name(f"exclude_message_ids[{i}]", value)
    check.names("control_kinds", request.control_kinds)
    check.enum_value("slices", request.slices, SLICE_MODES)
    check.done()
    assert scope is not None  # an unknown scope failed the check
    return scope


def asked(request: pb.SearchMemoryRequest) -> search_defaults.Asked:
    """The ranking knobs a SearchMemory request set (the rest are the server's defaults)."""

    def optional(name: str):
        return getattr(request, name) if request.HasField(name) else None

    return search_defaults.Asked(
        top_k=request.top_k,
        keyword_weight=optional("keyword_weight"),
        fusion=recall.Fusion(request.fusion) if request.fusion else None,
        time_weight=optional("time_weight"),
        half_life_ms=(
            search_defaults.half_life_ms(request.half_life_hours) if request.HasField("half_life_hours") else None
        ),
        neighbor_weight=optional("neighbor_weight"),
        date_weight=optional("date_weight"),
        user_priority_boost=optional("user_priority_boost"),
        context_window=optional("context_window"),
        expand_cross_session=optional("expand_cross_session"),
        control_kinds=tuple(request.control_kinds),
    )


def search_response(query: recall.RecallQuery, result: SearchResult) -> pb.SearchMemoryResponse:
    response = pb.SearchMemoryResponse(
        model_id=result.model_id,
        excluded_other_models=result.excluded_other_models,
        retrieval=RETRIEVALS[(result.semantic, result.keyword)],
        semantic_weight=recall.semantic_weight(query, result.semantic, result.keyword, [h.ranked for h in result.hits]),
    )
    for hit in result.hits:
        r, candidate = hit.record, hit.ranked.candidate
        out = response.hits.add(
            score=hit.ranked.score,
            semantic_score=candidate.semantic or 0.0,
            point_id=candidate.point_id,
            model_id=r.model_id or "",
            session_id=r.session_id,
            message_id=r.message_id,
            timestamp=r.timestamp,
            role=r.role,
            platform=r.platform,
            sender_id=r.sender_id,
            mentioned_ids=r.mentioned_ids,
            speaker_label=r.speaker_label,
            text=hit.text,
            truncated_chars=hit.truncated_chars,
            boosted=hit.ranked.boosted,
            keyword_score=candidate.keyword or 0.0,
            relevance=hit.ranked.relevance,
            semantic_match=candidate.semantic is not None,
            keyword_match=candidate.keyword is not None,
            repeats=hit.repeats,
            neighbor_lift=hit.ranked.lift,
            date_lift=hit.ranked.dated,
            slice_lift=hit.ranked.sliced,
        )
        if hit.in_context_of is not None:
            out.in_context_of = hit.in_context_of
        for items, target in ((hit.before, out.before), (hit.after, out.after)):
            for item in items:
                context_message = target.add(truncated_chars=item.truncated_chars)
                message_to_proto(item.message, context_message.message)
    return response
