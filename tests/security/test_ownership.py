"""A session belongs to its user for good (issue 44, row 1; docs/SECURITY.md "Session ownership").

In one tenant, a session of the tenant's (written by an unbound token) or of bob's (written by
his token) holds messages, a summary slice (with a vector) and caller vectors (with text).
Its owner empties it in every way there is: ClearSession with its default target, with
messages and metadata, with every target, DeleteMessages of every id, PopMessages of all.
Then alice's token saves to it (refused: the session is not hers, whatever it still holds)
and runs every read that once leaked what the session held: ListSummaries,
GetSummaryCursor, AssembleContext (with recall), SearchSummaries by text and by vector,
SearchMemory by vector and by text (all sessions and the session's scope). Over gRPC and
HTTP/JSON, and through the MCP server's tools; 0 reads of another owner's data.

Records the tenant derived under a session id before anyone owned it (caller vectors of a
session with no row), and a summary the tenant wrote before giving its session to alice,
carry their owner: alice, owner of the id now, reads none of them.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf.message import Message

from memoryd.app import start
from memoryd.config import Config
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import message_pb2
from memoryd.v1 import summary_service_pb2 as summ
from memoryd.v1 import vector_service_pb2 as vec
from tests.conftest import BACKENDS, mongo_uri_for
from tests.security.test_user_isolation import GrpcTransport, HttpTransport, Refusal, Tokens

MODEL = "test:model"
VECTOR = [1.0, 0.5, 0.25]
M = "memoryd.v1.MemoryService."
S = "memoryd.v1.SummaryService."
V = "memoryd.v1.VectorService."


@dataclass
class Victim:
    """A session someone other than alice wrote, and what must never reach alice: the text of
    its messages (`secret`), of its summary and of its caller vectors, its message ids and,
    unless alice may own the id now, the session id."""

    session: str
    secret: str
    ids: list[str]
    session_is_secret: bool = True
    messages_are_secret: bool = True

    @property
    def summary_text(self) -> str:
        return f"summary{self.secret}"

    @property
    def vector_text(self) -> str:
        return f"vector{self.secret}"

    @property
    def markers(self) -> list[bytes]:
        values = [*([self.secret] if self.messages_are_secret else []), self.summary_text, self.vector_text, *self.ids]
        return [v.encode() for v in (*values, *([self.session] if self.session_is_secret else []))]

    def derived_only(self) -> Victim:
        """What must not reach alice once the session itself is hers: its summary and vectors."""
        return Victim(self.session, self.secret, [], session_is_secret=False, messages_are_secret=False)


@dataclass
class Tally:
    reads: int = 0
    leaks: list[str] = field(default_factory=list)

    def check(self, what: str, result: Message | Refusal, victim: Victim, *, refusal_ok: bool) -> None:
        self.reads += 1
        if isinstance(result, Refusal):
            if not refusal_ok or (result.code, result.reason) != ("permission_denied", "USER_ACCESS_DENIED"):
                self.leaks.append(f"{what}: {result}")
            return
        raw = result.SerializeToString()
        leaked = [m.decode() for m in victim.markers if m in raw]
        if leaked:
            self.leaks.append(f"{what} read {leaked}")


async def ok(t: Any, token: str, name: str, request: Message) -> Any:
    result = await t.call(token, name, request)
    assert not isinstance(result, Refusal), (name, result)
    return result


async def write_victim(t: Any, token: str, session: str) -> Victim:
    """Messages, a summary slice with a vector, and caller vectors with text, by `token`."""
    secret = f"secret{uuid.uuid4().hex[:10]}"
    messages = [message_pb2.Message(role="user", content=f"{secret} words {i}", timestamp=10_000 + i) for i in range(4)]
    saved = await ok(t, token, M + "SaveMessages", mem.SaveMessagesRequest(session_id=session, messages=messages))
    victim = Victim(session, secret, [m.id for m in saved.messages])
    await ok(
        t,
        token,
        S + "SaveSummary",
        summ.SaveSummaryRequest(
            session_id=session, from_seq=1, to_seq=4, text=f"{victim.summary_text} words", vector=VECTOR, model_id=MODEL
        ),
    )
    points = [
        vec.VectorPoint(
            model_id=MODEL,
            vector=VECTOR,
            session_id=session,
            message_id=m.id,
            timestamp=m.timestamp,
            role="user",
            text=f"{victim.vector_text} words {i}",
        )
        for i, m in enumerate(saved.messages)
    ]
    # And one of no message, which no message delete takes (only the vectors target does).
    points.append(
        vec.VectorPoint(
            model_id=MODEL, vector=VECTOR, session_id=session, timestamp=5, text=f"{victim.vector_text} loose"
        )
    )
    await ok(t, token, V + "UpsertVectors", vec.UpsertVectorsRequest(points=points))
    return victim


async def _delete_every_id(t: Any, token: str, session: str) -> None:
    history = await ok(t, token, M + "GetFullHistory", mem.GetFullHistoryRequest(session_id=session, page_size=1000))
    await ok(
        t,
        token,
        M + "DeleteMessages",
        mem.DeleteMessagesRequest(session_id=session, ids=[m.id for m in history.messages]),
    )


def _clear(*targets: int) -> Callable[[Any, str, str], Awaitable[None]]:
    async def clear(t: Any, token: str, session: str) -> None:
        await ok(t, token, M + "ClearSession", mem.ClearSessionRequest(session_id=session, targets=list(targets)))

    return clear


async def _pop_all(t: Any, token: str, session: str) -> None:
    await ok(t, token, M + "PopMessages", mem.PopMessagesRequest(session_id=session, n=1000))


# Every way to empty a session (through the API), by the session's owner.
EMPTYING: dict[str, Callable[[Any, str, str], Awaitable[None]]] = {
    "clear-default": _clear(),
    "clear-messages-metadata": _clear(mem.CLEAR_TARGET_MESSAGES, mem.CLEAR_TARGET_METADATA),
    "clear-every-target": _clear(mem.CLEAR_TARGET_MESSAGES, mem.CLEAR_TARGET_METADATA, mem.CLEAR_TARGET_VECTORS),
    "delete-every-id": _delete_every_id,
    "pop-all": _pop_all,
}


async def alice_reads(t: Any, token: str, victim: Victim, tally: Tally, label: str) -> None:
    """Every read the issue lists, against the victim's session and across alice's sessions."""
    s = victim.session
    text = f"{victim.secret} {victim.summary_text} {victim.vector_text} words"
    session_reads = [
        ("ListSummaries", S + "ListSummaries", summ.ListSummariesRequest(session_id=s)),
        ("GetSummaryCursor", S + "GetSummaryCursor", summ.GetSummaryCursorRequest(session_id=s)),
        (
            "AssembleContext",
            S + "AssembleContext",
            summ.AssembleContextRequest(
                session_id=s,
                budget_chars=100_000,
                include_recall=True,
                recall_query_vector=VECTOR,
                recall_model_id=MODEL,
                recall_slices=vec.RECALL_SLICES_FUSED,
            ),
        ),
        ("GetHistory", M + "GetHistory", mem.GetHistoryRequest(session_id=s, limit=100)),
    ]
    for what, name, request in session_reads:
        tally.check(f"{label} {what}", await t.call(token, name, request), victim, refusal_ok=True)
    wide_reads = [
        (
            "SearchSummaries by text",
            S + "SearchSummaries",
            summ.SearchSummariesRequest(query_text=text, keyword_weight=1.0, top_k=100, include_messages=True),
        ),
        (
            "SearchSummaries by vector",
            S + "SearchSummaries",
            summ.SearchSummariesRequest(
                query_vector=VECTOR, model_id=MODEL, keyword_weight=0.0, top_k=100, include_messages=True
            ),
        ),
        (
            "SearchMemory by vector",
            V + "SearchMemory",
            vec.SearchMemoryRequest(query_vector=VECTOR, model_id=MODEL, top_k=100, min_score=-1, context_window=0),
        ),
        ("SearchMemory by text", V + "SearchMemory", vec.SearchMemoryRequest(query_text=text, top_k=100)),
        (
            "SearchMemory with slices",
            V + "SearchMemory",
            vec.SearchMemoryRequest(
                query_text=text, query_vector=VECTOR, model_id=MODEL, top_k=100, slices=vec.RECALL_SLICES_FUSED
            ),
        ),
        (
            "SearchMemory in the session",
            V + "SearchMemory",
            vec.SearchMemoryRequest(
                query_vector=VECTOR,
                model_id=MODEL,
                top_k=100,
                min_score=-1,
                scope=vec.RECALL_SCOPE_SESSION,
                session_id=s,
            ),
        ),
        (
            "SearchSummaries in the session",
            S + "SearchSummaries",
            summ.SearchSummariesRequest(
                query_text=text, keyword_weight=1.0, top_k=100, scope=vec.RECALL_SCOPE_SESSION, session_id=s
            ),
        ),
    ]
    for what, name, request in wide_reads:
        tally.check(f"{label} {what}", await t.call(token, name, request), victim, refusal_ok=False)


async def alice_claims(t: Any, tokens: Tokens, session: str, tally: Tally, label: str) -> None:
    """Alice's writes that would take the session: each must be refused."""
    for name, request in (
        (
            M + "SaveMessage",
            mem.SaveMessageRequest(session_id=session, message=message_pb2.Message(role="user", content="mine?")),
        ),
        (
            M + "SaveMessages",
            mem.SaveMessagesRequest(session_id=session, messages=[message_pb2.Message(role="user", content="x")]),
        ),
        (M + "UpdateSession", mem.UpdateSessionRequest(session_id=session)),
    ):
        tally.reads += 1
        result = await t.call(tokens.alice, name, request)
        if not isinstance(result, Refusal) or result.reason != "USER_ACCESS_DENIED":
            tally.leaks.append(f"{label} {name.rsplit('.', 1)[1]} took the session: {result}")


@pytest.fixture(scope="module", params=BACKENDS)
async def served(request, tmp_path_factory):
    tokens = Tokens()
    uri = "" if request.param == "sqlite" else mongo_uri_for(request.param, request)
    config = Config(
        listen="127.0.0.1:0",
        data_dir=tmp_path_factory.mktemp("ownership"),
        mongodb_uri=uri,
        mongodb_database=f"memoryd_ownership_{uuid.uuid4().hex[:8]}",
        tokens=tokens.text(),
        log_level="warning",
    )
    app = await start(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=60) as http:
            yield request.param, app, tokens, GrpcTransport(channel), HttpTransport(http)
    finally:
        await channel.close()
        await app.stop(0)


@pytest.mark.parametrize("transport", ["grpc", "http"])
async def test_no_emptied_session_changes_hands(served, transport):
    backend, _, tokens, grpc_t, http_t = served
    if transport == "http" and backend != "sqlite":
        pytest.skip("the HTTP transport runs the same servicers; once, on SQLite")
    t = grpc_t if transport == "grpc" else http_t
    tally = Tally()
    paths = 0
    for owner in ("tenant", "bob"):
        token = tokens.tenant if owner == "tenant" else tokens.bob
        for emptying in sorted(EMPTYING):
            label = f"{owner}/{emptying}"
            victim = await write_victim(t, token, f"{owner}-{emptying}-{uuid.uuid4().hex[:8]}")
            await EMPTYING[emptying](t, token, victim.session)
            await alice_claims(t, tokens, victim.session, tally, label)
            await alice_reads(t, tokens.alice, victim, tally, label)
            paths += 1
    # Alice's own session still reads back as hers (the reads above are not refused wholesale).
    mine = f"alice-{uuid.uuid4().hex[:8]}"
    await ok(
        t,
        tokens.alice,
        M + "SaveMessage",
        mem.SaveMessageRequest(session_id=mine, message=message_pb2.Message(role="user", content="alice's own")),
    )
    history = await ok(t, tokens.alice, M + "GetHistory", mem.GetHistoryRequest(session_id=mine))
    assert [m.content for m in history.messages] == ["alice's own"]
    crossings = len(tally.leaks)
    print(f"\n{backend}/{transport}: {paths} emptied sessions, {tally.reads} claims and reads, {crossings} crossings")
    assert not tally.leaks, "\n".join(tally.leaks)


async def test_bob_clearing_his_session_does_not_let_alice_take_it(served):
    backend, _, tokens, t, _ = served
    victim = await write_victim(t, tokens.bob, f"bobs-{uuid.uuid4().hex[:8]}")
    # Messages and metadata, as in the issue; the vectors of no message stay (not a target).
    await _clear(mem.CLEAR_TARGET_MESSAGES, mem.CLEAR_TARGET_METADATA)(t, tokens.bob, victim.session)
    tally = Tally()
    await alice_claims(t, tokens, victim.session, tally, "bob's cleared")
    await alice_reads(t, tokens.alice, victim, tally, "bob's cleared")
    assert not tally.leaks, "\n".join(tally.leaks)
    # Still bob's: listed under him, and he writes on.
    listed = await ok(t, tokens.bob, M + "ListSessions", mem.ListSessionsRequest())
    assert victim.session in [s.session_id for s in listed.sessions]
    await ok(
        t,
        tokens.bob,
        M + "SaveMessage",
        mem.SaveMessageRequest(
            session_id=victim.session, message=message_pb2.Message(role="user", content="bob again")
        ),
    )
    found = await ok(
        t, tokens.bob, V + "SearchMemory", vec.SearchMemoryRequest(query_text=victim.vector_text, top_k=100)
    )
    assert any(h.session_id == victim.session for h in found.hits), "bob's own vector is his still"


async def test_records_carry_the_owner_they_were_written_under(served):
    backend, _, tokens, t, _ = served
    tally = Tally()
    # The tenant's caller vectors under a session id nobody has written: alice may take the
    # id (it has no owner), and reads none of them.
    unowned = Victim(
        f"unowned-{uuid.uuid4().hex[:8]}", f"tenantvectors{uuid.uuid4().hex[:8]}", [], session_is_secret=False
    )
    await ok(
        t,
        tokens.tenant,
        V + "UpsertVectors",
        vec.UpsertVectorsRequest(
            points=[
                vec.VectorPoint(
                    model_id=MODEL,
                    vector=VECTOR,
                    session_id=unowned.session,
                    timestamp=5,
                    text=f"{unowned.vector_text} words",
                )
            ]
        ),
    )
    await ok(
        t,
        tokens.alice,
        M + "SaveMessage",
        mem.SaveMessageRequest(
            session_id=unowned.session, message=message_pb2.Message(role="user", content="alice here")
        ),
    )
    await alice_reads(t, tokens.alice, unowned, tally, "the tenant's vectors")
    # The tenant's session with its summary and vectors, given to alice afterwards (the
    # tenant's documented power): the messages go with it; the summary and the vectors stay
    # the tenant's, as they were written under it.
    given = await write_victim(t, tokens.tenant, f"given-{uuid.uuid4().hex[:8]}")
    await ok(
        t,
        tokens.tenant,
        M + "UpdateSession",
        mem.UpdateSessionRequest(session_id=given.session, attributes=message_pb2.SessionAttributes(user_id="alice")),
    )
    history = await ok(t, tokens.alice, M + "GetHistory", mem.GetHistoryRequest(session_id=given.session))
    assert len(history.messages) == 4  # hers now
    await alice_reads(t, tokens.alice, given.derived_only(), tally, "given")
    assert not tally.leaks, "\n".join(tally.leaks)
    assembled = await ok(
        t,
        tokens.alice,
        S + "AssembleContext",
        summ.AssembleContextRequest(session_id=given.session, budget_chars=100_000),
    )
    assert not assembled.HasField("summary") and assembled.cursor == 0
    assert len(assembled.messages) == 4  # from the first message, as the tenant's summary is not hers
    cursor = await ok(t, tokens.alice, S + "GetSummaryCursor", summ.GetSummaryCursorRequest(session_id=given.session))
    assert not cursor.HasField("latest")
    # The tenant reads all of it, as before.
    tenants = await ok(t, tokens.tenant, S + "ListSummaries", summ.ListSummariesRequest(session_id=given.session))
    assert [s.text for s in tenants.summaries] == [f"{given.summary_text} words"]
    found = await ok(
        t,
        tokens.tenant,
        V + "SearchMemory",
        vec.SearchMemoryRequest(
            query_vector=VECTOR,
            model_id=MODEL,
            top_k=100,
            min_score=-1,
            scope=vec.RECALL_SCOPE_SESSION,
            session_id=unowned.session,
        ),
    )
    assert len(found.hits) >= 1


async def test_through_the_mcp_server_no_emptied_session_changes_hands(served, tmp_path):
    from tests.clients.test_mcp_server import http_session
    from tests.processes import ServerProcess

    backend, app, tokens, t, _ = served
    if backend != "sqlite":
        pytest.skip("the MCP server is a client of the servicers above; once, on SQLite")
    victims = []
    for owner, token in (("tenant", tokens.tenant), ("bob", tokens.bob)):
        for emptying in ("clear-default", "clear-messages-metadata", "delete-every-id", "pop-all"):
            victim = await write_victim(t, token, f"mcp-{owner}-{emptying}-{uuid.uuid4().hex[:8]}")
            await EMPTYING[emptying](t, token, victim.session)
            victims.append(victim)
    # Alice tries to take each one first (the MCP server has no tool that writes a session).
    claims = Tally()
    for victim in victims:
        await alice_claims(t, tokens, victim.session, claims, "before MCP")
    mcp = ServerProcess(
        [
            str(Path(sys.executable).parent / "memoryd-mcp"),
            "--transport",
            "http",
            "--port",
            "0",
            "--target",
            f"127.0.0.1:{app.port}",
        ],
        tmp_path,
        name="memoryd-mcp",
    )
    mcp.start()
    crossings, checks = [], 0
    try:
        async with http_session(f"http://{mcp.target}/mcp", tokens.alice) as session:
            for victim in victims:
                for tool, arguments in (
                    ("history", {"session_id": victim.session}),
                    ("assemble_context", {"session_id": victim.session}),
                    (
                        "recall",
                        {"query": f"{victim.secret} {victim.summary_text} {victim.vector_text} words", "top_k": 50},
                    ),
                    ("recall", {"query": f"{victim.secret} words", "session_id": victim.session, "scope": "session"}),
                ):
                    checks += 1
                    result = await session.call_tool(tool, arguments)
                    text = result.content[0].text if result.content else ""
                    leaked = [m.decode() for m in victim.markers if m.decode() in text and m.decode() != victim.session]
                    if leaked:
                        crossings.append(f"{tool} {victim.session} leaked {leaked}")
                    elif result.is_error and "PERMISSION_DENIED USER_ACCESS_DENIED" not in text:
                        crossings.append(f"{tool} {victim.session} failed otherwise: {text}")
                    elif not result.is_error and tool != "recall":
                        crossings.append(f"{tool} {victim.session} ran")
    finally:
        mcp.terminate()
    crossings += claims.leaks
    checks += claims.reads
    print(f"\n{backend}/mcp: {len(victims)} emptied sessions, {checks} checks, {len(crossings)} crossings")
    assert not crossings, "\n".join(crossings)
