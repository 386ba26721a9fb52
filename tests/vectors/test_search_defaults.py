"""The search defaults in one place (domain/search_defaults.py): what a search request leaves
unset takes the server's configured recall defaults, what it sets (0 included) stays; and the
configured defaults reach SearchMemory, SearchSummaries and SearchEntries over gRPC and
HTTP/JSON (a real server: SQLite, Qdrant Edge in the engine process)."""

from __future__ import annotations

from dataclasses import fields

import grpc
import httpx
import pytest

from memoryd.app import start
from memoryd.config import Config
from memoryd.domain import recall
from memoryd.domain.search_defaults import CONTEXT_WINDOW, TOP_K, Asked, Search, half_life_ms, settle
from memoryd.v1 import entry_service_pb2 as entry_pb
from memoryd.v1 import entry_service_pb2_grpc, summary_service_pb2_grpc, vector_service_pb2_grpc
from memoryd.v1 import summary_service_pb2 as summary_pb
from memoryd.v1 import vector_service_pb2 as pb

CONFIGURED = recall.RecallDefaults(
    time_weight=0.2,
    half_life_ms=1_000,
    keyword_weight=0.7,
    fusion=recall.Fusion.RECIPROCAL_RANK,
    neighbor_weight=0.1,
)


def test_an_unset_knob_takes_the_configured_default_or_the_searchs_own():
    settled = settle(Search.MESSAGES, Asked(), CONFIGURED, ("marker",))
    assert (settled.time_weight, settled.half_life_ms, settled.keyword_weight) == (0.2, 1_000, 0.7)
    assert (settled.fusion, settled.neighbor_weight) == (recall.Fusion.RECIPROCAL_RANK, 0.1)
    assert settled.top_k == recall.DEFAULT_TOP_K
    assert settled.context_window == recall.DEFAULT_CONTEXT_WINDOW
    assert settled.date_weight == recall.DEFAULT_DATE_WEIGHT
    assert settled.user_priority_boost == recall.DEFAULT_USER_BOOST
    assert settled.expand_cross_session is True
    assert settled.control_kinds == ("marker",)
    # Each search has its own count and context; AssembleContext's recall lists hits alone.
    for search in Search:
        mine = settle(search, Asked(), CONFIGURED)
        assert (mine.top_k, mine.context_window) == (TOP_K[search], CONTEXT_WINDOW[search])
        assert mine.control_kinds == recall.DEFAULT_CONTROL_KINDS
    assert settle(Search.ENTRIES, Asked(), CONFIGURED).top_k == 10
    assert settle(Search.CONTEXT, Asked(), CONFIGURED).context_window == 0


def test_a_knob_the_request_sets_stays_zero_included():
    zeros = Asked(
        top_k=3,
        keyword_weight=0.0,
        fusion=recall.Fusion.RELATIVE_SCORE,
        time_weight=0.0,
        half_life_ms=half_life_ms(0.5),
        neighbor_weight=0.0,
        date_weight=0.0,
        user_priority_boost=0.0,
        context_window=0,
        expand_cross_session=False,
        control_kinds=("x",),
    )
    settled = settle(Search.MESSAGES, zeros, CONFIGURED)
    assert {f.name: getattr(settled, f.name) for f in fields(settled)} == {
        f.name: getattr(zeros, f.name) for f in fields(zeros)
    }
    assert settled.half_life_ms == 1_800_000
    assert half_life_ms(1e-9) == 1  # never 0: recency divides by it


def test_the_recall_query_carries_every_settled_knob():
    settled = settle(Search.MESSAGES, Asked(top_k=7, date_weight=0.25), CONFIGURED)
    query = settled.recall_query(text="when did we meet", session_id="s1")
    for f in fields(settled):
        assert getattr(query, f.name) == getattr(settled, f.name), f.name
    assert (query.text, query.session_id) == ("when did we meet", "s1")


@pytest.fixture(scope="module")
async def keyword_only_server(tmp_path_factory):
    """A server whose configured keyword weight is 1 (MEMORYD_RECALL_KEYWORD_WEIGHT): an
    unset keyword_weight makes every search keyword-only, even with a query vector."""
    app = await start(
        Config(
            listen="127.0.0.1:0",
            http_listen="127.0.0.1:0",
            data_dir=tmp_path_factory.mktemp("search-defaults"),
            recall_keyword_weight=1.0,
            log_level="warning",
        )
    )
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=30) as http:
        yield channel, http
    await channel.close()
    await app.stop(0)


async def test_the_configured_default_reaches_every_search_rpc_and_the_request_overrides_it(keyword_only_server):
    channel, http = keyword_only_server
    vectors = vector_service_pb2_grpc.VectorServiceStub(channel)
    summaries = summary_service_pb2_grpc.SummaryServiceStub(channel)
    entries = entry_service_pb2_grpc.EntryServiceStub(channel)
    vector = [1.0, 0.0, 0.0, 0.0]

    search = pb.SearchMemoryRequest(query_vector=vector, model_id="m", query_text="hello")
    assert (await vectors.SearchMemory(search)).retrieval == pb.RECALL_RETRIEVAL_KEYWORD
    search.keyword_weight = 0.0
    assert (await vectors.SearchMemory(search)).retrieval == pb.RECALL_RETRIEVAL_SEMANTIC
    search.keyword_weight = 0.5
    assert (await vectors.SearchMemory(search)).retrieval == pb.RECALL_RETRIEVAL_HYBRID

    slices = summary_pb.SearchSummariesRequest(query_vector=vector, model_id="m", query_text="hello")
    assert (await summaries.SearchSummaries(slices)).retrieval == pb.RECALL_RETRIEVAL_KEYWORD
    slices.keyword_weight = 0.0
    assert (await summaries.SearchSummaries(slices)).retrieval == pb.RECALL_RETRIEVAL_SEMANTIC

    await entries.SaveEntry(
        entry_pb.SaveEntryRequest(scope="prefs", text="hello there", embedding=vector, model_id="m")
    )
    found = entry_pb.SearchEntriesRequest(scope="prefs", query="hello", query_embedding=vector, model_id="m")
    assert (await entries.SearchEntries(found)).semantic is False
    found.keyword_weight = 0.5
    assert (await entries.SearchEntries(found)).semantic is True

    # HTTP/JSON (Connect) runs the same servicer: the same default, the same override.
    body = {"query_vector": vector, "model_id": "m", "query_text": "hello"}
    answer = await http.post("/memoryd.v1.VectorService/SearchMemory", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["retrieval"] == "RECALL_RETRIEVAL_KEYWORD"
    answer = await http.post("/memoryd.v1.VectorService/SearchMemory", json={**body, "keyword_weight": 0})
    assert answer.json()["retrieval"] == "RECALL_RETRIEVAL_SEMANTIC"
