"""ForgetUser through a real server, on each message backend: afterwards every read RPC and
SearchMemory / SearchEntries (keyword and semantic) find nothing of the user, and answer
about the other user exactly as before the user existed."""

from __future__ import annotations

import json

import grpc

from memoryd.v1 import memory_service_pb2 as mpb
from tests.lifecycle.api import (
    INDEXED_PER_SESSION,
    Stubs,
    event,
    fill_user,
    hit_keys,
    indexed,
    memoryd,
    read_everything,
    search_everything,
)
from tests.processes import MemorydServer


def found(answers: dict) -> dict:
    """Answers with searches as what they found (their scores depend on the whole index)."""
    return {name: hit_keys(answer) if name.startswith("Search") else answer for name, answer in answers.items()}


async def test_forget_user_leaves_nothing_of_the_user_and_the_others_as_they_were(serve, backend):
    async with serve(backend) as (app, stubs):
        bob = await fill_user(stubs, "bob", "walrus", 0.0)
        await stubs.memory.SaveMessage(mpb.SaveMessageRequest(session_id="nobody", message={"role": "user", "content": "walrus"}))
        await indexed(stubs, 2 * INDEXED_PER_SESSION + 1)
        baseline = found(await read_everything(stubs, bob))  # bob alone

        ann = await fill_user(stubs, "ann", "zebra", 90.0, sessions=3)
        await indexed(stubs, 5 * INDEXED_PER_SESSION + 1)
        before = await read_everything(stubs, ann + bob)
        assert hit_keys(before["SearchMemory text zebra"]) and hit_keys(before["SearchEntries ann vector 90.0"])

        response = await stubs.memory.ForgetUser(mpb.ForgetUserRequest(user_id="ann"))

        assert (response.sessions_forgotten, response.entries_deleted, response.complete) == (3, 2, True)
        assert response.messages_deleted == 3 * 6  # 7 saved per session, 1 deleted
        assert response.metadata_deleted == 3 * 3 + 1  # notes, a slice, the cursor per session; users/ann/prefs
        assert response.vectors.outcome == mpb.CLEAR_OUTCOME_CLEARED
        assert response.vectors.removed_count == 3 * 2  # the caller's vectors (keyword points go uncounted)
        after = await read_everything(stubs, ann + bob)
        assert found(await read_everything(stubs, bob)) == baseline
        for sid in ann.sessions:
            assert after[f"GetFullHistory {sid}"] == [] and after[f"ListMessagesInRange {sid}"] == []
            assert after[f"GetHistory {sid}"] == {} and after[f"GetSession {sid}"] == {}
            assert after[f"ListSummaries {sid}"] == [] and after[f"GetMetadata notes {sid}"] == {}
            assert after[f"GetSummaryCursor {sid}"].get("cursor", 0) == 0
            assert "messages" not in after[f"AssembleContext {sid}"] and "summary" not in after[f"AssembleContext {sid}"]
        assert after["ListSessions ann"] == [] and after["ListEntries ann"] == []
        assert after["ListMetadata users/ann/prefs"] == []
        for name, answer in after.items():
            if name.startswith("Search"):
                assert all(scope_or_session not in ann.sessions + ["ann"] for scope_or_session, _ in hit_keys(answer)), name
        text = json.dumps(list(after.values()), ensure_ascii=False)
        assert "zebra" not in text and "ann-s" not in text

        again = await stubs.memory.ForgetUser(mpb.ForgetUserRequest(user_id="ann"))
        assert (again.sessions_forgotten, again.messages_deleted, again.entries_deleted, again.complete) == (0, 0, 0, True)
        assert again.event_seq == response.event_seq  # it wrote nothing


async def test_memoryd_forget_user_works_on_the_data_of_a_running_server(tmp_path):
    server = MemorydServer(tmp_path / "server", "--qdrant-timeout-seconds", "30", "--vector-sync-poll-seconds", "0.2")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stubs = Stubs.on(channel)
            ann = await fill_user(stubs, "ann", "zebra", 90.0)
            bob = await fill_user(stubs, "bob", "walrus", 0.0)
            await indexed(stubs, 4 * INDEXED_PER_SESSION)
            kept = of_bob(await read_everything(stubs, bob, search=False))

            logs = await memoryd("forget-user", "ann", "--data-dir", str(server.data_dir))

            done = event(logs, "user_forgotten")
            assert (done["sessions"], done["messages"], done["entries"], done["complete"]) == (2, 12, 2, True)
            after = await read_everything(stubs, ann + bob, search=False)
            assert after["ListSessions ann"] == [] and after["ListEntries ann"] == []
            assert after["ListMetadata users/ann/prefs"] == []
            assert all(after[f"GetFullHistory {sid}"] == [] for sid in ann.sessions)
            assert of_bob(await read_everything(stubs, bob, search=False)) == kept
            # The server holds the vector store; the command's clears reach it through the store.
            await indexed(stubs, 2 * INDEXED_PER_SESSION)
            assert not hit_keys(await search_everything_for(stubs, ann))
    finally:
        server.terminate()


def of_bob(answers: dict) -> dict:
    """The answers about bob's own sessions and scope (the listings of everything change)."""
    return {name: answer for name, answer in answers.items() if "bob" in name}


async def search_everything_for(stubs, written):
    answers = await search_everything(stubs, written)
    return {"hits": [hit for name, answer in answers.items() for hit in answer.get("hits", []) if name.startswith("SearchMemory")
                     and hit.get("session_id") in written.sessions]}  # fmt: skip
