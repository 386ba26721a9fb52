"""memoryd.v1.EntryService: long-term memory entries."""

from __future__ import annotations

from collections.abc import Sequence

from memoryd.domain import recall
from memoryd.domain.entries import MAX_ENTRY_CHARS, Entries, Entry, normalize
from memoryd.transport.access import Gate
from memoryd.transport.rpc import unary
from memoryd.transport.validation import Check
from memoryd.v1 import entry_service_pb2 as pb
from memoryd.v1 import entry_service_pb2_grpc as pb_grpc

MAX_TAGS = 32
# Raw text may carry extra whitespace that normalization folds away, but not without bound.
MAX_RAW_TEXT_BYTES = 64 << 10


def entry_to_proto(entry: Entry, target: pb.Entry) -> None:
    target.id = entry.id
    target.scope = entry.scope
    target.text = entry.text
    target.tags.extend(entry.tags)
    target.create_time = entry.create_time
    target.model_id = entry.model_id
    target.key = entry.key


class EntryServicer(pb_grpc.EntryServiceServicer):
    def __init__(self, entries: Entries, auth: Gate) -> None:
        self.entries = entries
        self.auth = auth
        self.limits = entries.limits

    def _check(self, scope: str) -> Check:
        check = Check(self.limits)
        check.name("scope", scope)
        return check

    @staticmethod
    def _embedding(check: Check, field: str, values: Sequence[float], model_field: str, model_id: str) -> None:
        if not values:
            check.name(model_field, model_id, required=False)
            return
        check.vector(field, values)
        check.name(model_field, model_id)

    @unary
    async def SaveEntry(self, request: pb.SaveEntryRequest, context, tenant: str) -> pb.SaveEntryResponse:
        check = self._check(request.scope)
        check.text_bytes("text", request.text, MAX_RAW_TEXT_BYTES)
        normalized = normalize(request.text)
        if not normalized:
            check.fail("text", "must not be blank")
        elif len(normalized) > MAX_ENTRY_CHARS:
            check.fail("text", f"must be at most {MAX_ENTRY_CHARS} characters after whitespace folding")
        if check.count("tags", request.tags, MAX_TAGS):
            for i, tag in enumerate(request.tags):
                check.name(f"tags[{i}]", tag)
        self._embedding(check, "embedding", request.embedding, "model_id", request.model_id)
        check.name("key", request.key, required=False)
        check.done()
        result = await self.entries.save(
            tenant,
            request.scope,
            request.text,
            list(request.tags),
            list(request.embedding),
            request.model_id,
            key=request.key,
        )
        response = pb.SaveEntryResponse(
            deduplicated=result.deduplicated,
            scope_count=result.count,
            scope_capacity=result.capacity,
            replaced=result.replaced,
        )
        entry_to_proto(result.entry, response.entry)
        return response

    @unary
    async def SearchEntries(self, request: pb.SearchEntriesRequest, context, tenant: str) -> pb.SearchEntriesResponse:
        check = self._check(request.scope)
        check.non_negative("limit", request.limit)
        check.text_bytes("query", request.query, self.limits.max_text_bytes)
        self._embedding(check, "query_embedding", request.query_embedding, "model_id", request.model_id)
        if request.HasField("keyword_weight"):
            check.between("keyword_weight", request.keyword_weight, 0.0, 1.0)
        check.fusion("fusion", request.fusion)
        check.done()
        hits, semantic = await self.entries.search(
            tenant,
            request.scope,
            request.query,
            request.limit,
            list(request.query_embedding),
            request.model_id,
            keyword_weight=request.keyword_weight if request.HasField("keyword_weight") else None,
            fusion=recall.Fusion(request.fusion) if request.fusion else None,
        )
        response = pb.SearchEntriesResponse(semantic=semantic)
        for hit in hits:
            out = response.hits.add(score=hit.score, keyword_score=hit.keyword_score, semantic_score=hit.semantic_score)
            entry_to_proto(hit.entry, out.entry)
        return response

    @unary
    async def ForgetEntry(self, request: pb.ForgetEntryRequest, context, tenant: str) -> pb.ForgetEntryResponse:
        check = self._check(request.scope)
        if request.key:
            check.name("key", request.key)
            if request.entry_id:
                check.fail("entry_id", "must be empty when key is set (give one of the two)")
        else:
            check.name("entry_id", request.entry_id)
        check.done()
        deleted = await self.entries.forget(tenant, request.scope, request.entry_id, key=request.key)
        return pb.ForgetEntryResponse(deleted=deleted)

    @unary
    async def ListEntries(self, request: pb.ListEntriesRequest, context, tenant: str) -> pb.ListEntriesResponse:
        check = self._check(request.scope)
        check.page_size("page_size", request.page_size)
        check.done()
        entries, token = await self.entries.list_entries(tenant, request.scope, request.page_size, request.page_token)
        response = pb.ListEntriesResponse(next_page_token=token)
        for entry in entries:
            entry_to_proto(entry, response.entries.add())
        return response
