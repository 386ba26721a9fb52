"""The recall benchmark: evidence recall@k of SearchMemory through a real memoryd, with
all-MiniLM-L6-v2 as its server-side embedder, on LoCoMo, REALTALK, KdConv-memory and the
recency set (tests/recall/datasets.py, kdconv.py, recency_set.py).

    scripts/bootstrap --test && .venv/bin/pip install -e '.[bench]'
    .venv/bin/python -m tests.recall.bench --locomo <dir of LoCoMo's per-conversation JSON, or locomo10.json> \
        --realtalk <REALTALK's data/ folder> --kdconv <KdConv's data/ folder>
    .venv/bin/python -m tests.recall.bench --locomo … --sweep      # also the grids of earlier rounds
    .venv/bin/python -m tests.recall.bench --locomo … --no-recency --slices   # session summaries as slices

The grids the defaults are chosen on run in the offline replica (tests/recall/sweep.py).

What it does (docs/RECALL.md has the results and the choices they justify):
1. Starts the embedder (tests/recall/embedder.py) and `memoryd serve` on a fresh data dir
   (SQLite + Qdrant Edge) with MEMORYD_EMBEDDER_URL pointing at it; every conversation is
   its own tenant (its own token).
2. Saves every turn with SaveMessages, one call per session, and waits until the server's
   recall index's log consumer has given each a keyword point and a vector.
3. Asks every question with SearchMemory(query_text=…, top_k=k, reference_time=the day
   after the conversation) under each configuration, and scores the hits: evidence recall
   = the share of a question's evidence turns among the hits, averaged over the questions;
   evidence shown counts the hits' context messages too, beside how many messages that is.
4. Prints the tables (overall and per category) and SearchMemory's latency p50/p99.

Fetches nothing; the dataset path is an argument. Not part of scripts/test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from memoryd.v1 import memory_service_pb2 as mem_pb
from memoryd.v1 import memory_service_pb2_grpc, message_pb2
from memoryd.v1 import summary_service_pb2 as sum_pb
from memoryd.v1 import summary_service_pb2_grpc
from memoryd.v1 import vector_service_pb2 as pb
from memoryd.v1 import vector_service_pb2_grpc
from tests.events.bench_watch import percentile, serve
from tests.recall import embedder, recency_set
from tests.recall.datasets import Conversation, load_locomo, load_realtalk
from tests.recall.kdconv import load_kdconv
from tests.recall.replica import EmbeddingCache

KS = (5, 10, 25)
DAY_HOURS = 24.0
# The LoCoMo paper's DRAGON retriever over dialog turns, all categories (its Table 3).
DRAGON = {5: 58.8, 10: 67.5, 25: 79.9}


@dataclass(frozen=True)
class Setting:
    """One configuration: the request fields it sets (unset ones take the server's defaults)."""

    name: str
    fields: dict[str, Any] = field(default_factory=dict)


def main_settings() -> list[Setting]:
    """Every retrieval at the server's defaults (context windows too) and without recency;
    hybrid without each rule a request can turn off; the reference system's time weight.
    (Hit recall does not depend on the context window: `cw 0` rows of earlier runs equal
    their `cw default` rows, docs/RECALL.md.)"""
    made = []
    for retrieval, weight in (("dense", {"keyword_weight": 0.0}), ("keyword", {"keyword_weight": 1.0}), ("hybrid", {})):
        made.append(Setting(f"{retrieval}, defaults", weight))
        made.append(Setting(f"{retrieval}, tw 0", {**weight, "time_weight": 0.0}))
    made.append(Setting("hybrid, neighbor_weight 0 (no conversation lift)", {"neighbor_weight": 0.0}))
    made.append(Setting("hybrid, date_weight 0 (no dates)", {"date_weight": 0.0}))
    made.append(Setting("dense, reference ranking (tw 0.3, 7-day half-life), cw 0",
                        {"keyword_weight": 0.0, "time_weight": 0.3, "half_life_hours": 7 * DAY_HOURS, "context_window": 0}))
    made.append(Setting("hybrid, reference time weight (tw 0.3, 7-day half-life), cw 0",
                        {"time_weight": 0.3, "half_life_hours": 7 * DAY_HOURS, "context_window": 0}))
    return made


def sweep_settings() -> list[Setting]:
    made = []
    for fusion, name in ((pb.RECALL_FUSION_RELATIVE_SCORE, "relative"), (pb.RECALL_FUSION_RECIPROCAL_RANK, "rrf")):
        for weight in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
            made.append(Setting(f"fusion {name}, keyword_weight {weight}, tw 0",
                                {"fusion": fusion, "keyword_weight": weight, "time_weight": 0.0, "context_window": 0}))
    for weight in (0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0):
        for retrieval, fields in (("hybrid", {}), ("dense", {"keyword_weight": 0.0}), ("keyword", {"keyword_weight": 1.0})):
            made.append(Setting(f"{retrieval}, neighbor_weight {weight}, cw 0",
                                {**fields, "neighbor_weight": weight, "context_window": 0}))  # fmt: skip
    for weight in (0.05, 0.1, 0.2, 0.3):
        for days in (7, 30, 90, 365):
            made.append(Setting(f"hybrid, tw {weight}, half-life {days} d",
                                {"time_weight": weight, "half_life_hours": days * DAY_HOURS, "context_window": 0}))
            made.append(Setting(f"dense, tw {weight}, half-life {days} d",
                                {"keyword_weight": 0.0, "time_weight": weight, "half_life_hours": days * DAY_HOURS,
                                 "context_window": 0}))  # fmt: skip
    return made


def slice_settings() -> list[Setting]:
    """--slices: messages only against slices then messages and both fused, hybrid at the
    defaults, every one without context windows, so each shows exactly its k hits (equal
    messages shown)."""
    return [
        Setting("hybrid, messages only, cw 0", {"context_window": 0}),
        Setting("hybrid, slices first (RECALL_SLICES_FIRST), cw 0", {"context_window": 0, "slices": pb.RECALL_SLICES_FIRST}),
        Setting("hybrid, slices fused (RECALL_SLICES_FUSED), cw 0", {"context_window": 0, "slices": pb.RECALL_SLICES_FUSED}),
    ]


# -- the server ---------------------------------------------------------------------
def token(tenant: str) -> str:
    return f"bench-token-for-{tenant}"


class Client:
    def __init__(self, port: int) -> None:
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        self.memory = memory_service_pb2_grpc.MemoryServiceStub(self.channel)
        self.vectors = vector_service_pb2_grpc.VectorServiceStub(self.channel)
        self.summaries = summary_service_pb2_grpc.SummaryServiceStub(self.channel)

    @staticmethod
    def auth(tenant: str) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {token(tenant)}"),)


async def load(client: Client, conversation: Conversation) -> dict[str, str]:
    """Saves the conversation, one SaveMessages per session; returns message id -> turn id."""
    by_session: dict[str, list] = defaultdict(list)
    for turn in conversation.turns:
        by_session[turn.session].append(turn)
    turn_of: dict[str, str] = {}
    for session, turns in by_session.items():
        messages = [
            message_pb2.Message(role=t.role, content=t.content, timestamp=t.timestamp,
                                metadata={"senderLabel": t.speaker, "senderId": t.speaker})
            for t in turns
        ]  # fmt: skip
        saved = await client.memory.SaveMessages(
            mem_pb.SaveMessagesRequest(session_id=session, messages=messages), metadata=client.auth(conversation.name)
        )
        turn_of.update((m.id, t.id) for m, t in zip(saved.messages, turns))
        summary = conversation.summaries.get(session) if SAVE_SLICES else None
        if summary:  # a slice over the whole session (its seqs are 1..n)
            await client.summaries.SaveSummary(
                sum_pb.SaveSummaryRequest(session_id=session, from_seq=1, to_seq=len(turns), text=summary),
                metadata=client.auth(conversation.name),
            )
    return turn_of


SAVE_SLICES = False  # --slices


async def indexed(client: Client, conversation: Conversation, timeout: float = 1800) -> None:
    """Waits until every turn has a keyword point and a vector of the embedder's model."""
    deadline = time.monotonic() + timeout
    while True:
        stats = await client.vectors.GetVectorStats(pb.GetVectorStatsRequest(), metadata=client.auth(conversation.name))
        vectors = sum(m.count for m in stats.models if m.model_id == embedder.MODEL_ID)
        if stats.keyword_points == vectors == len(conversation.turns):
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"{conversation.name}: {stats.keyword_points} keyword points, {vectors} vectors")
        await asyncio.sleep(0.5)


# -- measuring ----------------------------------------------------------------------
@dataclass
class Outcome:
    recall: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))  # category -> per question
    # The same with each hit's context messages counted as found (what the agent is shown).
    shown: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    messages_shown: list[int] = field(default_factory=list)  # distinct messages per question
    latencies: list[float] = field(default_factory=list)

    def mean(self, category: str | None = None, of: str = "recall") -> float:
        by_category = getattr(self, of)
        values = by_category[category] if category else [v for vs in by_category.values() for v in vs]
        return 100 * statistics.fmean(values) if values else float("nan")


async def measure(
    client: Client, data: list[tuple[Conversation, dict[str, str]]], setting: Setting, k: int, concurrency: int
) -> Outcome:
    outcome = Outcome()
    gate = asyncio.Semaphore(concurrency)

    async def ask(conversation: Conversation, turn_of: dict[str, str], question) -> None:
        request = pb.SearchMemoryRequest(query_text=question.text, top_k=k, reference_time=conversation.asked_at,
                                         **setting.fields)  # fmt: skip
        async with gate:
            started = time.perf_counter()
            response = await client.vectors.SearchMemory(request, metadata=client.auth(conversation.name))
            outcome.latencies.append(time.perf_counter() - started)
        found = {turn_of.get(h.message_id) for h in response.hits}
        ids = {h.message_id for h in response.hits}
        ids.update(c.message.id for h in response.hits for c in (*h.before, *h.after))
        shown = {turn_of.get(i) for i in ids}
        outcome.recall[question.category].append(sum(e in found for e in question.evidence) / len(question.evidence))
        outcome.shown[question.category].append(sum(e in shown for e in question.evidence) / len(question.evidence))
        outcome.messages_shown.append(len(ids))

    await asyncio.gather(*(ask(c, t, q) for c, t in data for q in c.questions))
    return outcome


def table(title: str, rows: list[tuple[str, dict[int, Outcome]]], categories: list[str]) -> str:
    lines = [f"\n{title}", "", "| configuration | R@5 | R@10 | R@25 |", "|---|---|---|---|"]
    for name, by_k in rows:
        lines.append(f"| {name} | " + " | ".join(f"{by_k[k].mean():.1f}" for k in KS) + " |")
    if len(categories) > 1:
        lines += ["", "| configuration (R@10 per category) | " + " | ".join(categories) + " |",
                  "|---|" + "---|" * len(categories)]  # fmt: skip
        for name, by_k in rows:
            lines.append(f"| {name} | " + " | ".join(f"{by_k[10].mean(c):.1f}" for c in categories) + " |")
    lines += ["", "| configuration (hits and their context: evidence shown %, messages shown) | k = 5 | k = 10 | k = 25 |",
              "|---|---|---|---|"]  # fmt: skip
    for name, by_k in rows:
        cells = (f"{by_k[k].mean(of='shown'):.1f}, {statistics.fmean(by_k[k].messages_shown):.1f}" for k in KS)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


async def run_set(
    client: Client,
    name: str,
    conversations: list[Conversation],
    settings: list[Setting],
    concurrency: int,
    report: dict,
    out: Path | None = None,
) -> str:
    started = time.monotonic()
    data = [(c, await load(client, c)) for c in conversations]
    for conversation in conversations:
        await indexed(client, conversation)
    turns, questions = sum(len(c.turns) for c in conversations), sum(len(c.questions) for c in conversations)
    print(f"{name}: {turns} turns saved and indexed in {time.monotonic() - started:.0f} s; {questions} questions",
          file=sys.stderr)  # fmt: skip
    rows = []
    for setting in settings:
        by_k = {k: await measure(client, data, setting, k, concurrency) for k in KS}
        rows.append((setting.name, by_k))
        report.setdefault(name, {})[setting.name] = {
            str(k): {"all": o.mean(), **{c: o.mean(c) for c in sorted(o.recall)}, "shown": o.mean(of="shown"),
                     "messages_shown": statistics.fmean(o.messages_shown)}
            for k, o in by_k.items()
        }  # fmt: skip
        print(f"  {setting.name}: " + " / ".join(f"{by_k[k].mean():.1f}" for k in KS), file=sys.stderr)
        if out is not None:
            out.write_text(json.dumps(report, indent=1))  # what is measured so far survives an interrupt
    categories = sorted({c for _, by_k in rows for c in by_k[10].recall})
    return table(f"{name}: evidence recall % ({questions} questions)", rows, categories)


async def latency(client: Client, conversations: list[Conversation], report: dict) -> str:
    """SearchMemory one call at a time (k = 10, context windows at their default)."""
    data = [(c, {}) for c in conversations]
    lines = ["\nSearchMemory latency, one call at a time, top_k 10, context_window default", "",
             "| retrieval | calls | p50 ms | p99 ms |", "|---|---|---|---|"]  # fmt: skip
    retrievals = (("dense", {"keyword_weight": 0.0}), ("keyword", {"keyword_weight": 1.0}), ("hybrid", {}),
                  ("hybrid, neighbor_weight 0 (no adjacency read)", {"neighbor_weight": 0.0}))  # fmt: skip
    for name, fields in retrievals:
        outcome = await measure(client, data, Setting(name, fields), 10, 1)
        p50, p99 = percentile(outcome.latencies, 50) * 1000, percentile(outcome.latencies, 99) * 1000
        report.setdefault("latency", {})[name] = {"p50_ms": p50, "p99_ms": p99, "calls": len(outcome.latencies)}
        lines.append(f"| {name} | {len(outcome.latencies)} | {p50:.2f} | {p99:.2f} |")
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> None:
    # A terminated run still stops its server and embedder (the `finally` below).
    current = asyncio.current_task()
    assert current is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, current.cancel)
    with tempfile.TemporaryDirectory(prefix="memoryd-minilm-") as unpacked:
        model = embedder.load_model(Path(unpacked), args.embedder_threads)
    embeddings = embedder.Embedder(model)
    if args.cache:
        embeddings.store = EmbeddingCache(args.cache, embeddings.encode)
    http, url = embedder.serve(embeddings)
    sets: list[tuple[str, list[Conversation]]] = []
    if args.locomo:
        sets.append(("LoCoMo", load_locomo(args.locomo)))
    if not args.no_recency:
        sets.append(("recency set", recency_set.generate()))
    if args.realtalk:
        sets.append(("REALTALK", load_realtalk(args.realtalk)))
    if args.kdconv:
        sets.append(("KdConv-memory", load_kdconv(args.kdconv)))
    tenants = [c.name for _, conversations in sets for c in conversations]
    os.environ.update(
        MEMORYD_EMBEDDER_URL=url,
        MEMORYD_EMBEDDER_MODEL=embedder.MODEL_NAME,
        MEMORYD_EMBEDDER_MODEL_ID=embedder.MODEL_ID,
        MEMORYD_TOKENS=",".join(f"{t}: {token(t)}" for t in tenants),
    )
    global SAVE_SLICES
    SAVE_SLICES = args.slices
    settings = (slice_settings() if args.slices else main_settings()) + (sweep_settings() if args.sweep else [])
    if args.only:
        unknown = set(args.only) - {s.name for s in settings}
        if unknown:
            raise SystemExit(f"no such configuration: {', '.join(sorted(unknown))}")
        settings = [s for s in settings if s.name in args.only]
    report: dict = {"settings": {s.name: s.fields for s in settings}}
    with tempfile.TemporaryDirectory(prefix="memoryd-recall-") as folder:
        server, port = serve(Path(folder))
        client = Client(port)
        try:
            tables = [await run_set(client, name, conversations, settings, args.concurrency, report, args.out)
                      for name, conversations in sets]  # fmt: skip
            if not args.slices:
                tables.append(await latency(client, sets[0][1], report))
        finally:
            await client.channel.close()
            server.terminate()
            http.shutdown()
    print("\n".join(tables))
    print(f"\n(LoCoMo paper, DRAGON over dialog turns, all categories: {DRAGON[5]} / {DRAGON[10]} / {DRAGON[25]})")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=Path, help="LoCoMo: a folder of per-conversation JSON files, or locomo10.json")
    parser.add_argument("--realtalk", type=Path, help="REALTALK: its data/ folder of Chat_*.json files")
    parser.add_argument("--kdconv", type=Path, help="KdConv: its data/ folder (film/, music/, travel/ test.json)")
    parser.add_argument("--no-recency", action="store_true", help="skip the recency set")
    parser.add_argument("--sweep", action="store_true", help="also the fusion and time-weight grids")
    parser.add_argument("--slices", action="store_true", help="save each session's summary (LoCoMo's session_N_summary) "
                        "as a slice over its messages and compare messages only, slices first and fused")  # fmt: skip
    parser.add_argument("--concurrency", type=int, default=4, help="SearchMemory calls in flight while scoring")
    parser.add_argument("--embedder-threads", type=int, default=1, help="torch threads of the embedder")
    parser.add_argument("--out", type=Path, help="also write every number as JSON here (after each configuration)")
    parser.add_argument("--cache", type=Path, help="keep the model's vectors in this file (outside the repository) "
                        "across runs, as tests/recall/sweep.py does")  # fmt: skip
    parser.add_argument("--only", action="append", metavar="NAME", help="run only this configuration (repeatable)")
    args = parser.parse_args()
    if not (args.locomo or args.realtalk or args.kdconv) and args.no_recency:
        parser.error("nothing to run: give --locomo, --realtalk or --kdconv, or keep the recency set")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
