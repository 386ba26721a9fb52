"""memoryd.v1.SummaryService: summary slices, the summary cursor and AssembleContext."""

from __future__ import annotations

from typing import Any, cast

from memoryd.domain import recall, search_defaults
from memoryd.domain.summaries import ContextRequest, SliceQuery, Summaries, Summary
from memoryd.transport.access import Gate
from memoryd.transport.convert import dict_to_struct, message_to_proto, struct_to_dict
from memoryd.transport.rpc import unary
from memoryd.transport.validation import Check
from memoryd.v1 import summary_service_pb2 as pb
from memoryd.v1 import summary_service_pb2_grpc as pb_grpc
from memoryd.v1 import vector_service_pb2 as vector_pb

MAX_RECALL_TOP_K = 100
SLICE_MODES = [m.value for m in recall.SliceMode]
SLICE_SCOPES = (vector_pb.RECALL_SCOPE_ALL, vector_pb.RECALL_SCOPE_SESSION)
RETRIEVALS = {  # (semantic part ran, keyword part ran)
    (True, False): vector_pb.RECALL_RETRIEVAL_SEMANTIC,
    (False, True): vector_pb.RECALL_RETRIEVAL_KEYWORD,
    (True, True): vector_pb.RECALL_RETRIEVAL_HYBRID,
    (False, False): vector_pb.RECALL_RETRIEVAL_UNSPECIFIED,
}


def summary_to_proto(summary: Summary, target: pb.Summary) -> None:
    target.id = summary.id
    target.session_id = summary.session_id
    target.from_seq = summary.from_seq
    target.to_seq = summary.to_seq
    target.text = summary.text
    dict_to_struct(summary.metadata, target.metadata)
    target.create_time = summary.create_time
    target.saved_message_count = summary.saved_message_count
    target.present_message_count = summary.present_message_count
    target.archived_message_count = summary.archived_message_count
    target.coverage = cast(pb.SummaryCoverage, int(summary.coverage or 0))


class SummaryServicer(pb_grpc.SummaryServiceServicer):
    def __init__(self, summaries: Summaries, auth: Gate, profiles: Any = None) -> None:
        self.summaries = summaries
        self.auth = auth
        self.limits = summaries.limits
        # formation.engine.Formation: AssembleContext adds the session owner's profile.
        self.profiles = profiles

    def _check(self, session_id: str) -> Check:
        check = Check(self.limits)
        check.name("session_id", session_id)
        return check

    @unary
    async def SaveSummary(self, request: pb.SaveSummaryRequest, context, tenant: str) -> pb.SaveSummaryResponse:
        check = self._check(request.session_id)
        check.positive("from_seq", request.from_seq)
        if request.to_seq < request.from_seq:
            check.fail("to_seq", "must be at least from_seq")
        if not request.text.strip():
            check.fail("text", "must not be blank")
        check.text_bytes("text", request.text, self.limits.max_content_bytes)
        if request.metadata.ByteSize() > self.limits.max_metadata_bytes:
            check.fail("metadata", f"must be at most {self.limits.max_metadata_bytes} bytes")
        check.struct("metadata", request.metadata)
        if request.vector:
            check.vector("vector", request.vector)
            check.name("model_id", request.model_id)
        else:
            check.name("model_id", request.model_id, required=False)
        check.done()
        summary, cursor, deduplicated = await self.summaries.save(
            tenant,
            request.session_id,
            request.from_seq,
            request.to_seq,
            request.text,
            struct_to_dict(request.metadata),
            list(request.vector),
            request.model_id,
        )
        response = pb.SaveSummaryResponse(cursor=cursor, deduplicated=deduplicated)
        summary_to_proto(summary, response.summary)
        return response

    @unary
    async def ListSummaries(self, request: pb.ListSummariesRequest, context, tenant: str) -> pb.ListSummariesResponse:
        check = self._check(request.session_id)
        check.page_size("page_size", request.page_size)
        check.done()
        summaries, token = await self.summaries.list_summaries(
            tenant, request.session_id, request.page_size, request.page_token, context.caller.user_id
        )
        response = pb.ListSummariesResponse(next_page_token=token)
        for summary in summaries:
            summary_to_proto(summary, response.summaries.add())
        return response

    @unary
    async def GetSummaryCursor(
        self, request: pb.GetSummaryCursorRequest, context, tenant: str
    ) -> pb.GetSummaryCursorResponse:
        self._check(request.session_id).done()
        state = await self.summaries.get_cursor(tenant, request.session_id, context.caller.user_id)
        response = pb.GetSummaryCursorResponse(
            cursor=state.cursor, summary_count=state.summary_count, last_seq=state.last_seq
        )
        if state.latest is not None:
            summary_to_proto(state.latest, response.latest)
        return response

    @unary
    async def AssembleContext(
        self, request: pb.AssembleContextRequest, context, tenant: str
    ) -> pb.AssembleContextResponse:
        check = self._check(request.session_id)
        check.non_negative("budget_chars", request.budget_chars)
        check.non_negative("recent_raw_n", request.recent_raw_n)
        if request.recent_raw_n > self.limits.max_page_size:
            check.fail("recent_raw_n", f"must be at most {self.limits.max_page_size}")
        check.non_negative("recall_top_k", request.recall_top_k)
        if request.recall_top_k > MAX_RECALL_TOP_K:
            check.fail("recall_top_k", f"must be at most {MAX_RECALL_TOP_K}")
        if request.recall_query_vector:
            check.vector("recall_query_vector", request.recall_query_vector)
            check.name("recall_model_id", request.recall_model_id)
        else:
            check.name("recall_model_id", request.recall_model_id, required=False)
        check.enum_value("recall_slices", request.recall_slices, SLICE_MODES)
        check.done()
        result = await self.summaries.assemble(
            tenant,
            ContextRequest(
                session_id=request.session_id,
                budget_chars=request.budget_chars,
                recent_raw_n=request.recent_raw_n,
                include_recall=request.include_recall,
                recall_top_k=request.recall_top_k,
                recall_query_vector=tuple(request.recall_query_vector),
                recall_model_id=request.recall_model_id,
                recall_sessions=await self.auth.user_sessions(context.caller) if request.include_recall else None,
                recall_slices=recall.SliceMode(request.recall_slices or recall.SliceMode.OFF),
                reader=context.caller.user_id,  # its records only (sessions.readable_by)
            ),
        )
        assembly = result.assembly
        response = pb.AssembleContextResponse(
            summary_truncated=assembly.summary_truncated,
            recall_status=cast(pb.RecallStatus, int(result.recall_status)),
            recall_detail=result.recall_detail,
            cursor=result.cursor,
            used_chars=assembly.used_chars,
            deduplicated_count=assembly.deduplicated_count,
        )
        if result.summary is not None and assembly.summary_text is not None:
            summary_to_proto(result.summary, response.summary)
            response.summary.text = assembly.summary_text
        for item in assembly.messages:
            out = response.messages.add(part=int(item.part), truncated=item.truncated)
            message_to_proto(item.message, out.message)
        for recalled, truncated in assembly.recalled:
            response.recalled.add(
                id=recalled.id,
                session_id=recalled.session_id,
                text=recalled.text,
                score=recalled.score,
                timestamp=recalled.timestamp,
                role=recalled.role,
                truncated=truncated,
            )
        for cut in assembly.cuts:
            response.cuts.add(
                part=int(cut.part), reason=int(cut.reason), id=cut.id, cut_chars=cut.cut_chars, truncated=cut.truncated
            )
        await self._profile(tenant, request.session_id, response.profile)
        return response

    async def _profile(self, tenant: str, session_id: str, target) -> None:
        """The formed profile of the session's owner (docs/MEMORY.md), when there is one; with
        formation off, nothing is read (the default path pays nothing)."""
        if self.profiles is None or not self.profiles.enabled:
            return
        info = await self.summaries.store.get_session(tenant, session_id)
        user = info.attributes.user_id if info is not None else ""
        profile = await self.profiles.get_profile(tenant, user) if user else None
        if profile is not None:
            target.user_id = profile.user_id
            target.text = profile.text
            target.fact_ids.extend(profile.fact_ids)
            target.update_time = profile.update_time

    @unary
    async def SearchSummaries(
        self, request: pb.SearchSummariesRequest, context, tenant: str
    ) -> pb.SearchSummariesResponse:
        check = Check(self.limits)
        check.recall_query(request)
        if request.scope not in (0, *SLICE_SCOPES):
            check.fail(
                "scope", "must be RECALL_SCOPE_ALL or RECALL_SCOPE_SESSION (slices have no platform or speakers)"
            )
        session_scope = request.scope == vector_pb.RECALL_SCOPE_SESSION
        check.name("session_id", request.session_id, required=session_scope)
        if not 0 <= request.max_messages_per_hit <= self.limits.max_page_size:
            check.fail("max_messages_per_hit", f"must be between 0 and {self.limits.max_page_size}")
        check.done()
        settled = search_defaults.settle(
            search_defaults.Search.SLICES,
            search_defaults.Asked(
                top_k=request.top_k,
                keyword_weight=request.keyword_weight if request.HasField("keyword_weight") else None,
                fusion=recall.Fusion(request.fusion) if request.fusion else None,
            ),
            self.summaries.recall_defaults,
        )
        query = SliceQuery(
            text=request.query_text,
            vector=tuple(request.query_vector),
            model_id=request.model_id,
            top_k=settled.top_k,
            keyword_weight=settled.keyword_weight,
            fusion=settled.fusion,
            session_id=request.session_id if session_scope else "",
            sessions=await self.auth.user_sessions(context.caller),  # in the index query
            reader=context.caller.user_id,  # its slices only, in the index query too
        )
        hits, found = await self.summaries.search(
            tenant, query, request.include_messages, request.max_messages_per_hit or search_defaults.MESSAGES_PER_HIT
        )
        response = pb.SearchSummariesResponse(
            retrieval=RETRIEVALS[(found.semantic, found.keyword)], model_id=found.model_id
        )
        for hit in hits:
            ranked = hit.found.ranked
            candidate = ranked.candidate
            out = response.hits.add(
                score=ranked.score,
                semantic_score=candidate.semantic or 0.0,
                keyword_score=candidate.keyword or 0.0,
                semantic_match=candidate.semantic is not None,
                keyword_match=candidate.keyword is not None,
                messages_truncated=hit.messages_truncated,
            )
            summary_to_proto(hit.summary, out.summary)
            for message in hit.messages:
                message_to_proto(message, out.messages.add())
        return response
