"""Memory formation on LoCoMo (docs/MEMORY.md, "Measured"): what formation costs per 1,000
messages of real long conversations, and, with a capable model, what formed memory finds.

    .venv/bin/python tests/load/bench_formation_locomo.py --locomo <locomo>/data/multimodal_dialog/locomo10_v2
    .venv/bin/python tests/load/bench_formation_locomo.py --locomo … --every-message --recall
    .venv/bin/python tests/load/bench_formation_locomo.py --locomo … --llm-url http://host:8080/v1 \\
        --llm-model NAME [--llm-api-key-file FILE] --recall

LoCoMo: github.com/snap-research/locomo, data/locomo10.zip unpacked (or data/locomo10.json);
read by tests/recall/datasets.py, nothing is fetched.

1. Starts a fresh `memoryd serve` with formation on: the instant scripted model
   (tests/formation/script.py's Model on tests/llm_server.py, in a process of its own) or the
   model of `--llm-url`. Every conversation is its own tenant (its own token); each of its
   sessions is a session (`session-N`), owned by the conversation's first speaker (`user_id`,
   so facts and the profile are about that speaker); the first speaker's turns are role `user`,
   the second's `assistant`; every turn keeps the dataset's time (turns of a session 30 s
   apart) and is saved as "<speaker>: <text>", as in the recall benchmark. Sessions are saved
   in order, one SaveMessages each, the conversations side by side.
2. Waits until formation has processed every write (WaitForFormation per tenant), then until
   every session's tail is summarized: LoCoMo's sessions (about 22 turns) stay under the
   50-message threshold, so their slices come from the idle rule (`--summary-idle-seconds`,
   default 1, checked by the server's sweep every 60 s) as they would after a day's chat, or
   from a lower threshold that `--summary-max-messages` sets for each tenant.
3. Reports (one JSON line) model calls, failures, prompt and completion tokens per 1,000
   messages per strategy (GetFormationStatus, summed over the tenants), what formed (facts,
   slices, profiles), formation throughput (messages/s from the first save until
   WaitForFormation returned for every tenant) and the server's own CPU per message over that
   time (the model runs in another process).
4. `--recall`: LoCoMo evidence recall@k (k = 5, 10, 25), per question the share of its evidence
   turns found, averaged over the questions:
   - `messages`: SearchMemory's top-k message hits (no context window, slices off): the
     raw-message baseline;
   - `formed_slices_first` / `formed_slices_fused`: the same with RECALL_SLICES_FIRST /
     RECALL_SLICES_FUSED over the formed slices (a search of the slices, then of the messages
     they cover): still k message hits, so the numbers compare at equal messages shown;
   - `formed_facts`: the owner's top-k current facts by words shared with the question (at
     least 3 letters, case-folded; ties newest first; memoryd has no facts search, and this is
     the ranking the ADK memory service uses), a turn found when it is among their sources
     (`evidence_spoken_by_owner`: the share of evidence turns the owner said, what facts about
     the owner could find at best).
   Search is keyword-only (BM25) unless MEMORYD_EMBEDDER_URL/MEMORYD_EMBEDDER_MODEL name an
   embedder in the environment. With the scripted model the formed-memory numbers measure the
   wiring only: its slices are the sessions' own texts cut short and its facts (with
   --every-message) each user turn's first words.

Token counts: with the scripted model, prompt tokens are the whitespace-separated words of the
prompt's messages and completion tokens those of the answer (tests/llm_server.py `tokens`; not
a tokenizer: English BPE gives about 1.3 tokens a word), and completions are the script's,
not a real model's; the calls and the prompts are the server's own. With `--llm-url` they are
what the model's server reported (`usage`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from loadlib import REPO, start_memoryd, tree_cpu_seconds

from memoryd.v1 import formation_service_pb2 as fpb
from memoryd.v1 import (
    formation_service_pb2_grpc,
    memory_service_pb2,
    memory_service_pb2_grpc,
    message_pb2,
    summary_service_pb2_grpc,
    vector_service_pb2_grpc,
)
from memoryd.v1 import summary_service_pb2 as spb
from memoryd.v1 import vector_service_pb2 as vpb
from tests.processes import ServerProcess
from tests.recall.datasets import Conversation, load_locomo

STRATEGIES = {1: "summary", 2: "facts", 3: "profile", 4: "custom"}
KS = (5, 10, 25)
WAIT_MS = 600_000  # WaitForFormation waits at most this long a call
WORD = re.compile(r"\w{3,}", re.UNICODE)


def token(tenant: str) -> str:
    return f"bench-token-for-{tenant}"


def auth(tenant: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token(tenant)}"),)


def model_server(workdir: Path, every_message: bool) -> ServerProcess:
    argv = [sys.executable, "-m", "tests.formation.script", *(["--every-message"] if every_message else [])]
    server = ServerProcess(argv, workdir, name="llm", cwd=REPO)
    server.start()
    return server


@dataclass
class Replayed:
    """What one conversation's replay left: message id -> turn id, session -> last seq."""

    conversation: Conversation
    owner: str
    turn_of: dict[str, str] = field(default_factory=dict)
    last_seq: dict[str, int] = field(default_factory=dict)
    event_seq: int = 0


def owner_of(conversation: Conversation) -> str:
    return next(t.speaker for t in conversation.turns if t.role == "user")


async def replay(channel: grpc.aio.Channel, conversation: Conversation, summary_max_messages: int) -> Replayed:
    memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
    done = Replayed(conversation, owner_of(conversation))
    if summary_max_messages:  # the tenant's own threshold (SetFormationSettings)
        await formation_service_pb2_grpc.FormationServiceStub(channel).SetFormationSettings(
            fpb.SetFormationSettingsRequest(settings=fpb.FormationSettings(summary_max_messages=summary_max_messages)),
            metadata=auth(conversation.name),
        )
    sessions: dict[str, list] = defaultdict(list)
    for turn in conversation.turns:
        sessions[turn.session].append(turn)
    for session, turns in sessions.items():
        messages = [
            message_pb2.Message(role=t.role, content=t.content, timestamp=t.timestamp,
                                metadata={"senderLabel": t.speaker, "senderId": t.speaker})
            for t in turns
        ]  # fmt: skip
        saved = await memory.SaveMessages(
            memory_service_pb2.SaveMessagesRequest(
                session_id=session,
                messages=messages,
                session_attributes=message_pb2.SessionAttributes(user_id=done.owner),
            ),
            metadata=auth(conversation.name),
            timeout=120,
        )
        done.turn_of.update((m.id, t.id) for m, t in zip(saved.messages, turns, strict=True))
        done.last_seq[session] = max(m.seq for m in saved.messages)
        done.event_seq = max(done.event_seq, saved.event_seq)
    return done


async def formed(channel: grpc.aio.Channel, done: Replayed, timeout_s: float) -> None:
    """Returns once formation has processed the conversation's writes."""
    formation = formation_service_pb2_grpc.FormationServiceStub(channel)
    deadline = time.monotonic() + timeout_s
    while True:
        wait = min(WAIT_MS, max(1000, int((deadline - time.monotonic()) * 1000)))
        try:
            await formation.WaitForFormation(
                fpb.WaitForFormationRequest(event_seq=done.event_seq, timeout_ms=wait),
                metadata=auth(done.conversation.name),
                timeout=wait / 1000 + 5,
            )
            return
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.DEADLINE_EXCEEDED or time.monotonic() > deadline:
                raise


async def summarized(channel: grpc.aio.Channel, done: Replayed, timeout_s: float) -> int:
    """Waits until every session's summary cursor is at its last message; returns the slices."""
    summaries = summary_service_pb2_grpc.SummaryServiceStub(channel)
    deadline = time.monotonic() + timeout_s
    while True:
        cursors = [
            await summaries.GetSummaryCursor(
                spb.GetSummaryCursorRequest(session_id=s), metadata=auth(done.conversation.name)
            )
            for s in done.last_seq
        ]
        if all(c.cursor >= done.last_seq[s] for c, s in zip(cursors, done.last_seq, strict=True)):
            return sum(c.summary_count for c in cursors)
        if time.monotonic() > deadline:
            behind = sum(c.cursor < done.last_seq[s] for c, s in zip(cursors, done.last_seq, strict=True))
            raise SystemExit(f"{done.conversation.name}: {behind} sessions not summarized after {timeout_s} s")
        await asyncio.sleep(1.0)


async def usage(channel: grpc.aio.Channel, tenant: str) -> dict[str, dict[str, int]]:
    formation = formation_service_pb2_grpc.FormationServiceStub(channel)
    status = await formation.GetFormationStatus(fpb.GetFormationStatusRequest(), metadata=auth(tenant))
    return {
        STRATEGIES[s.strategy]: {
            "calls": s.llm_calls,
            "failures": s.llm_failures,
            "prompt_tokens": s.prompt_tokens,
            "completion_tokens": s.completion_tokens,
        }
        for s in status.strategies
    }


async def facts_of(channel: grpc.aio.Channel, done: Replayed) -> list[fpb.Fact]:
    formation = formation_service_pb2_grpc.FormationServiceStub(channel)
    found: list[fpb.Fact] = []
    page = ""
    while True:
        answer = await formation.ListFacts(
            fpb.ListFactsRequest(user_id=done.owner, page_size=500, page_token=page),
            metadata=auth(done.conversation.name),
        )
        found.extend(answer.facts)
        page = answer.next_page_token
        if not page:
            return found


async def has_profile(channel: grpc.aio.Channel, done: Replayed) -> bool:
    formation = formation_service_pb2_grpc.FormationServiceStub(channel)
    try:
        answer = await formation.GetProfile(
            fpb.GetProfileRequest(user_id=done.owner), metadata=auth(done.conversation.name)
        )
    except grpc.aio.AioRpcError as error:
        if error.code() == grpc.StatusCode.NOT_FOUND:
            return False
        raise
    return bool(answer.profile.text)


# -- evidence recall ----------------------------------------------------------------
def words(text: str) -> set[str]:
    return {w.casefold() for w in WORD.findall(text)}


def top_facts(facts: list[fpb.Fact], question: str, k: int) -> list[fpb.Fact]:
    """The k facts sharing the most words with the question (ties newest first), none sharing none."""
    wanted = words(question)
    scored = [(len(wanted & words(" ".join([f.text, *f.keywords]))), f.create_time, i, f) for i, f in enumerate(facts)]
    scored.sort(key=lambda row: (-row[0], -row[1], row[2]))
    return [f for score, _, _, f in scored[:k] if score > 0]


SEARCHES = {
    "messages": vpb.RECALL_SLICES_OFF,
    "formed_slices_first": vpb.RECALL_SLICES_FIRST,
    "formed_slices_fused": vpb.RECALL_SLICES_FUSED,
}


async def recall(channel: grpc.aio.Channel, replayed: list[Replayed], concurrency: int) -> dict:
    vectors = vector_service_pb2_grpc.VectorServiceStub(channel)
    scores: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    by_category: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    gate = asyncio.Semaphore(concurrency)
    facts = {done.conversation.name: await facts_of(channel, done) for done in replayed}
    # The searches wait for the recall index to hold the log through the formed slices too.
    formation = formation_service_pb2_grpc.FormationServiceStub(channel)
    latest: dict[str, int] = {}
    for done in replayed:
        tenant = done.conversation.name
        status = await formation.GetFormationStatus(fpb.GetFormationStatusRequest(), metadata=auth(tenant))
        latest[tenant] = max(s.latest for s in status.strategies)

    async def ask(done: Replayed, question) -> None:
        tenant = done.conversation.name
        evidence = question.evidence
        for name, slices in SEARCHES.items():
            for k in KS:
                request = vpb.SearchMemoryRequest(
                    query_text=question.text, top_k=k, context_window=0, slices=slices,
                    reference_time=done.conversation.asked_at, wait_for_event_seq=latest[tenant],
                )  # fmt: skip
                async with gate:
                    answer = await vectors.SearchMemory(request, metadata=auth(tenant), timeout=60)
                found = {done.turn_of.get(h.message_id) for h in answer.hits}
                share = sum(e in found for e in evidence) / len(evidence)
                scores[name][k].append(share)
                if k == 10:
                    by_category[name][question.category].append(share)
        for k in KS:
            sources = {
                done.turn_of.get(s.message_id) for f in top_facts(facts[tenant], question.text, k) for s in f.sources
            }
            share = sum(e in sources for e in evidence) / len(evidence)
            scores["formed_facts"][k].append(share)
            if k == 10:
                by_category["formed_facts"][question.category].append(share)

    await asyncio.gather(*(ask(done, q) for done in replayed for q in done.conversation.questions))

    def mean(values: list[float]) -> float:
        return round(100 * sum(values) / len(values), 1) if values else 0.0

    # Facts are about the owner: the evidence turns the owner spoke bound what they can find.
    owner_turns = [
        sum(e in spoken for e in q.evidence) / len(q.evidence)
        for d in replayed
        for spoken in [{t.id for t in d.conversation.turns if t.speaker == d.owner}]
        for q in d.conversation.questions
    ]
    return {
        "questions": sum(len(d.conversation.questions) for d in replayed),
        "evidence_spoken_by_owner": mean(owner_turns),
        "recall_at_k": {name: {str(k): mean(v) for k, v in ks.items()} for name, ks in scores.items()},
        "recall_at_10_by_category": {
            name: {c: mean(v) for c, v in sorted(cats.items())} for name, cats in by_category.items()
        },
    }


# -- the run ------------------------------------------------------------------------
async def measure(address: str, conversations: list[Conversation], args: argparse.Namespace, pid: int) -> dict:
    async with grpc.aio.insecure_channel(address, options=[("grpc.max_receive_message_length", 64 << 20)]) as channel:
        cpu = tree_cpu_seconds(pid)
        started = time.monotonic()
        replayed = await asyncio.gather(*(replay(channel, c, args.summary_max_messages) for c in conversations))
        saved_s = time.monotonic() - started
        await asyncio.gather(*(formed(channel, d, args.formation_timeout) for d in replayed))
        formed_s = time.monotonic() - started
        cpu_formed = tree_cpu_seconds(pid) - cpu
        slices = await asyncio.gather(*(summarized(channel, d, args.formation_timeout) for d in replayed))
        summarized_s = time.monotonic() - started
        spent: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for d in replayed:
            for strategy, counts in (await usage(channel, d.conversation.name)).items():
                for name, value in counts.items():
                    spent[strategy][name] += value
        messages = sum(len(c.turns) for c in conversations)
        facts = [await facts_of(channel, d) for d in replayed]
        result = {
            "conversations": len(conversations),
            "sessions": sum(len(d.last_seq) for d in replayed),
            "messages": messages,
            "model": args.llm_model
            if args.llm_url
            else ("scripted, every message" if args.every_message else "scripted"),
            "saved_s": round(saved_s, 2),
            "formed_s": round(formed_s, 2),
            "formed_msgs_per_s": round(messages / formed_s, 1),
            "formation_cpu_us_per_msg": round(cpu_formed * 1e6 / messages),
            "summarized_s": round(summarized_s, 2),
            "formed": {
                "facts": sum(len(f) for f in facts),
                "slices": sum(slices),
                "profiles": sum([await has_profile(channel, d) for d in replayed]),
            },
            "totals": {s: dict(v) for s, v in spent.items()},
            "per_1000_messages": {
                s: {name: round(value * 1000 / messages, 1) for name, value in v.items()} for s, v in spent.items()
            },
        }
        if args.recall:
            result["recall"] = await recall(channel, replayed, args.concurrency)
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--locomo", type=Path, required=True, help="LoCoMo's per-conversation JSON folder or locomo10.json"
    )
    parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations (0: all)")
    parser.add_argument("--sessions", type=int, default=0, help="only the first N sessions of each (0: all)")
    parser.add_argument("--llm-url", default="", help="a real model instead of the instant scripted one")
    parser.add_argument("--llm-model", default="scripted-1")
    parser.add_argument("--llm-api-key-file", default="", help="file holding the model's bearer key")
    parser.add_argument("--every-message", action="store_true", help="the scripted model states a fact per user turn")
    parser.add_argument("--summary-idle-seconds", type=int, default=1, help="--formation-summary-idle-seconds")
    parser.add_argument(
        "--summary-max-messages",
        type=int,
        default=0,
        help="each tenant's summary threshold (SetFormationSettings; 0: the server's 50)",
    )
    parser.add_argument("--recall", action="store_true", help="also LoCoMo evidence recall: messages, slices, facts")
    parser.add_argument("--concurrency", type=int, default=4, help="searches in flight while scoring")
    parser.add_argument("--formation-timeout", type=float, default=1800.0)
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    conversations = load_locomo(args.locomo)
    if args.conversations:
        conversations = conversations[: args.conversations]
    if args.sessions:
        for c in conversations:
            keep = list(dict.fromkeys(t.session for t in c.turns))[: args.sessions]
            c.turns = [t for t in c.turns if t.session in keep]
            known = {t.id for t in c.turns}
            c.questions = [q for q in c.questions if all(e in known for e in q.evidence)]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-formation-locomo-"))
    workdir.mkdir(parents=True, exist_ok=True)
    model = None if args.llm_url else model_server(workdir, args.every_message)
    url = args.llm_url or f"http://127.0.0.1:{model.port}/v1"  # type: ignore[union-attr]
    flags = ["--llm-url", url, "--llm-model", args.llm_model,
             "--formation-summary-idle-seconds", str(args.summary_idle_seconds),
             *(["--llm-api-key-file", args.llm_api_key_file] if args.llm_api_key_file else []),
             *([] if args.recall else ["--vectors-enabled", "false"])]  # fmt: skip
    env = {"MEMORYD_TOKENS": ",".join(f"{c.name}: {token(c.name)}" for c in conversations)}
    try:
        server = start_memoryd("memoryd", workdir, workdir / "data", *flags, env=env)
        try:
            result = asyncio.run(measure(server.target, conversations, args, server.pid))
        finally:
            server.stop()
    finally:
        if model is not None:
            model.stop()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
