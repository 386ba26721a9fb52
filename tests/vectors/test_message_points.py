"""A message's points carry its text's hash, not its text (issue 43): the engine keeps ids and
the fields filters use, and SearchMemory reads the texts it returns from the store, in the
read of its context windows; a hit whose message is gone from the store by then is dropped.
Caller vectors keep their text. Points written before hashes (text in the payload) answer
searches until the fingerprint's rebuild rewrites them. Real stores (SQLite, MongoDB) and
real Qdrant (Edge; a server when the run has one); the embedder is a deterministic stand-in
for a model (tests/load/embed_server.text_vector)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.models import Message, now_ms
from memoryd.domain.recall import RecallQuery
from memoryd.domain.transfer import point_from_json, point_json
from memoryd.domain.vectors import KeywordPoint, VectorPoint, VectorRecord, text_hash
from memoryd.storage.qdrant import points as p
from memoryd.storage.qdrant.base import QdrantIndexBase
from memoryd.vectors.recall import VectorRecall
from memoryd.vectors.records import indexed_text
from memoryd.vectors.sync import CURSOR_NAMESPACE
from tests.load.embed_server import text_vector
from tests.vectors.conftest import make_index
from tests.vectors.index_state import difference

MODEL = "test:points"
DIMS = 8
DAY = 86_400_000


class TextEmbedder:
    """The server embedder's interface (vectors/sync.Embedder): a deterministic vector per text."""

    model_id = MODEL

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [text_vector(t, DIMS) for t in texts]

    async def close(self) -> None:
        return None


@pytest.fixture
async def vectors(target, tmp_path, store, tenant):
    vectors = VectorRecall(make_index(target, tmp_path), store, embedder=TextEmbedder())
    assert vectors.runtime is not None
    vectors.runtime.tenants = {tenant}  # the session's store holds other tests' tenants
    await vectors.open()
    yield vectors
    await vectors.close()


async def synced(vectors: VectorRecall, tenant: str) -> None:
    assert vectors.runtime is not None
    await vectors.runtime.sync_tenant(tenant)
    assert (await difference(vectors.indexer, tenant)).exact


async def payloads(vectors: VectorRecall, tenant: str, space: int) -> list[dict]:
    """Every payload of the tenant's points in a space (the adapter's own scroll)."""
    index = vectors.index
    assert isinstance(index, QdrantIndexBase)
    rows, _ = await index._scroll(space, p.tenant_filter(tenant), None, 1000, False)
    return [payload for _, payload in rows]


def keyword(text: str, **fields) -> RecallQuery:
    return RecallQuery(**{"text": text, "keyword_weight": 1.0, "time_weight": 0.0, "context_window": 0, **fields})


def hybrid(text: str, **fields) -> RecallQuery:
    return RecallQuery(text=text, time_weight=0.0, context_window=0, **fields)


ENVELOPE = '{"kind": "chat", "body": "<the envelope as the platform sent it>"}'


async def _save(memory: Memory, tenant: str) -> dict[str, Message]:
    base = now_ms() - 10 * DAY
    rows = [
        Message(role="user", content="the lighthouse keeper painted the door blue", timestamp=base),
        Message(role="assistant", content="a blue lighthouse door sounds lovely", timestamp=base + 1000),
        Message(
            role="user",
            content=ENVELOPE,
            timestamp=base + 2000,
            metadata={"visibleContent": "the lighthouse lamp was lit at dusk", "senderId": "u-7"},
        ),
    ]
    saved = (await memory.save_messages(tenant, "s1", rows)).messages
    return {indexed_text(m): m for m in saved}


async def test_message_points_carry_the_hash_and_searches_read_the_text_from_the_store(vectors, store, tenant):
    by_text = await _save(Memory(store, Limits(), hooks=vectors), tenant)
    await synced(vectors, tenant)
    for space in (p.KEYWORD_SPACE, DIMS):
        found = await payloads(vectors, tenant, space)
        assert len(found) == 3
        assert all(p.TEXT_FIELD not in payload for payload in found)
        assert sorted(payload[p.TEXT_HASH_FIELD] for payload in found) == sorted(text_hash(t) for t in by_text)
        assert {payload["message_id"] for payload in found} == {m.id for m in by_text.values()}
    for query in (keyword("lighthouse"), hybrid("lighthouse")):
        hits = (await vectors.search(tenant, query)).hits
        assert {hit.text for hit in hits} == set(by_text)  # the envelope's visible text, as indexed
        assert all(by_text[hit.text].id == hit.record.message_id for hit in hits)
        enveloped = next(hit for hit in hits if hit.record.sender_id)
        assert enveloped.record.sender_id == "u-7" and ENVELOPE not in enveloped.text
    [cut] = (await vectors.search(tenant, keyword("painted", per_item_max_chars=10))).hits
    assert (
        cut.text.startswith("the lighth")
        and cut.truncated_chars == len("the lighthouse keeper painted the door blue") - 10
    )


async def test_a_hit_whose_message_is_gone_by_the_read_is_dropped_never_empty(vectors, store, tenant):
    by_text = await _save(Memory(store, Limits(), hooks=vectors), tenant)
    await synced(vectors, tenant)
    gone = by_text["a blue lighthouse door sounds lovely"]
    query = vectors.index.query

    async def deleted_after_the_index_answered(request):
        found = await query(request)
        # The store loses the message between the engine's answer and the store read (its
        # points go later, when the synchronizer applies the delete).
        await Memory(store, Limits()).delete_by_ids(tenant, "s1", [gone.id])
        return found

    vectors.index.query = deleted_after_the_index_answered  # type: ignore[method-assign]
    hits = (await vectors.search(tenant, keyword("lighthouse", top_k=3))).hits
    assert gone.id not in {hit.record.message_id for hit in hits}
    assert {hit.text for hit in hits} == set(by_text) - {gone.content}
    assert all(hit.text for hit in hits)


async def test_a_hit_of_a_kind_left_out_of_context_is_read_too(vectors, store, tenant):
    """The text read shares its context window's anchor (the query's control kinds left out);
    a hit of such a kind is read again without them, not taken for gone."""
    memory = Memory(store, Limits(), hooks=vectors)
    base = now_ms() - DAY
    rows = [
        Message(role="user", content="before the note", timestamp=base),
        Message(role="user", content="a note about the lighthouse", timestamp=base + 1, kind="note"),
        Message(role="user", content="after the note", timestamp=base + 2),
    ]
    await memory.save_messages(tenant, "s1", rows)
    await synced(vectors, tenant)
    for kinds in (("note",), ()):
        query = keyword("lighthouse", session_id="s1", context_window=1, control_kinds=kinds)
        [hit] = (await vectors.search(tenant, query)).hits
        assert hit.text == "a note about the lighthouse"
        assert [i.message.content for i in hit.before] == ["before the note"]


async def test_caller_vectors_keep_their_text(vectors, tenant):
    record = VectorRecord("s1", now_ms(), MODEL, "caller-1", "user", text="a caller's own words about a lighthouse")
    await vectors.upsert(tenant, [VectorPoint(tenant, text_vector(record.text, DIMS), record)])
    [dense] = await payloads(vectors, tenant, DIMS)
    [sparse] = await payloads(vectors, tenant, p.KEYWORD_SPACE)
    for payload in (dense, sparse):
        assert payload[p.TEXT_FIELD] == record.text and p.TEXT_HASH_FIELD not in payload
    [hit] = (await vectors.search(tenant, hybrid("lighthouse"))).hits  # no stored message: its own text
    assert hit.text == record.text


async def test_repeats_and_dates_read_what_they_need(vectors, store, tenant):
    """Repeated texts collapse by hash across sessions; a question asking when lifts the
    candidate that says when (its text read from the store before ranking)."""
    memory = Memory(store, Limits(), hooks=vectors)
    base = now_ms() - 30 * DAY
    for i, session in enumerate(("a", "b", "c")):
        await memory.save_messages(
            tenant, session, [Message(role="user", content="see you at the harbour", timestamp=base + i)]
        )
    await memory.save_messages(
        tenant,
        "d",
        [
            Message(role="user", content="the harbour festival was great", timestamp=base + 10),
            Message(role="user", content="we went to the harbour festival yesterday", timestamp=base + 20),
        ],
    )
    await synced(vectors, tenant)
    hits = (await vectors.search(tenant, keyword("harbour", top_k=5))).hits
    repeated = [hit for hit in hits if hit.text == "see you at the harbour"]
    assert len(repeated) == 1 and repeated[0].repeats == 2
    hits = (await vectors.search(tenant, keyword("When was the harbour festival?", top_k=2))).hits
    dated = {hit.text: hit.ranked.dated for hit in hits}
    assert dated["we went to the harbour festival yesterday"] > 0 == dated.get("the harbour festival was great", 0)


async def test_points_written_before_hashes_answer_until_the_fingerprint_rebuild_rewrites_them(
    target, tmp_path, store, tenant
):
    first = VectorRecall(make_index(target, tmp_path), store)
    assert first.runtime is not None
    first.runtime.tenants = {tenant}
    await first.open()
    try:
        by_text = await _save(Memory(store, Limits(), hooks=first), tenant)
        await synced(first, tenant)
        # As the release before wrote them: the text in the payload, no hash; its cursor's
        # fingerprint was "v1;...".
        old = [
            KeywordPoint(tenant, VectorRecord("s1", m.timestamp, None, m.id, m.role, text=text))
            for text, m in by_text.items()
        ]
        await first.index.upsert_keywords(old, now_ms())
        system = first.runtime.system_tenant
        entry = await store.get_metadata(system, CURSOR_NAMESPACE, tenant)
        assert entry is not None and entry.data["fingerprint"].startswith("v2;")
        data = {**entry.data, "fingerprint": "v1;" + entry.data["fingerprint"].split(";", 1)[1]}
        await store.save_metadata(system, CURSOR_NAMESPACE, tenant, data, now_ms())
        found = await payloads(first, tenant, p.KEYWORD_SPACE)
        assert all(p.TEXT_FIELD in payload and p.TEXT_HASH_FIELD not in payload for payload in found)
        hits = (await first.search(tenant, keyword("lighthouse"))).hits
        assert {hit.text for hit in hits} == set(by_text)  # the old points' own texts meanwhile
    finally:
        await first.close()
    second = VectorRecall(make_index(target, tmp_path), store)
    assert second.runtime is not None
    second.runtime.tenants = {tenant}
    await second.open()
    try:
        await synced(second, tenant)
        assert second.indexer.rebuilt == {tenant: 3}
        found = await payloads(second, tenant, p.KEYWORD_SPACE)
        assert len(found) == 3 and all(p.TEXT_FIELD not in payload for payload in found)
        hits = (await second.search(tenant, keyword("lighthouse"))).hits
        assert {hit.text for hit in hits} == set(by_text)
    finally:
        await second.close()


def test_an_exported_message_point_keeps_its_hash_and_a_caller_point_its_text():
    """Export with --vectors writes a message's dense point with its hash (its text is the
    exported message's); import restores it as a message's point (domain/transfer.py)."""
    message = VectorRecord("s1", 1_000, MODEL, "m1", "user", text_hash=text_hash("said once"))
    caller = VectorRecord("s1", 2_000, MODEL, "c1", "user", text="the caller's words")
    for record in (message, caller):
        data = point_json(VectorPoint("t", text_vector("said once", DIMS), record))
        assert ("text" in data) is (record.text_hash is None)
        assert point_from_json("t", data).record == record
