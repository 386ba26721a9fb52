"""Two memoryd processes on one MongoDB: a change made through one reaches watchers on the other."""

from __future__ import annotations

import pytest

from memoryd.v1 import event_pb2
from memoryd.v1 import memory_service_pb2 as pb
from memoryd.domain.models import DEFAULT_TENANT

from tests.conftest import mongo_targets

T = event_pb2


@pytest.fixture(params=mongo_targets())
def backend(request) -> str:
    return request.param


@pytest.mark.parametrize(
    "wakeups",
    [
        pytest.param([], id="change-stream"),
        pytest.param(["--mongodb-change-streams", "poll", "--watch-poll-interval-seconds", "0.2"], id="polling"),
    ],
)
async def test_deletion_through_one_process_reaches_a_watcher_on_another(servers, session_id, wakeups):
    app_a, a = await servers.start()  # this process
    app_a.hub.safety_interval = 3600  # only the change stream (or polling) can deliver B's writes in time
    b = await servers.spawn(*wakeups)  # a second `memoryd serve` process on the same database
    saved = await a.save(session_id, "one", "two", "three", timestamps=[10, 20, 30])

    on_b = await b.watch(session_ids=[session_id]).started()
    on_a = await a.watch(session_ids=[session_id]).started()
    await a.memory.DeleteMessagesByTimestamps(
        pb.DeleteMessagesByTimestampsRequest(session_id=session_id, timestamps=[20, 30])
    )
    await on_b.wait_for_type(T.EVENT_TYPE_HISTORY_CHANGED)
    deleted, changed = on_b.events
    assert deleted.type == T.EVENT_TYPE_MESSAGES_DELETED
    assert list(deleted.messages_deleted.ids) == [saved[1].id, saved[2].id]
    assert list(deleted.messages_deleted.timestamps) == [20, 30]
    assert changed.history_changed.cause == T.EVENT_TYPE_MESSAGES_DELETED

    # And back: writes through B reach A's watcher, and both saw the same log.
    await b.save(session_id, "from b")
    await b.memory.DeleteMessages(pb.DeleteMessagesRequest(session_id=session_id, ids=[saved[0].id]))
    stored = await app_a.store.read_events(DEFAULT_TENANT, on_a.progress[0], 1000)
    await on_a.wait_for_seq(stored[-1].seq)
    await on_b.wait_for_seq(stored[-1].seq)
    assert on_a.seqs == on_b.seqs == [e.seq for e in stored]
    await on_a.close()
    await on_b.close()


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_sqlite_workers_wake_each_other(servers, session_id):
    # Two servers on one SQLite file, as `--workers 2` runs them (each in its own process there).
    shared = {"workers": 2, "vectors_enabled": False}
    _, a = await servers.start(**shared)
    app_b, b = await servers.start(**shared)
    app_b.hub.safety_interval = 3600  # only the cross-process wake-up can deliver in time
    on_b = await b.watch(session_ids=[session_id]).started()
    saved = await a.save(session_id, "one", "two", timestamps=[10, 20])
    await a.memory.DeleteMessages(pb.DeleteMessagesRequest(session_id=session_id, ids=[saved[1].id]))
    await on_b.wait_for_type(T.EVENT_TYPE_HISTORY_CHANGED)
    assert [e.type for e in on_b.events] == [
        T.EVENT_TYPE_MESSAGES_APPENDED, T.EVENT_TYPE_MESSAGES_DELETED, T.EVENT_TYPE_HISTORY_CHANGED
    ]  # fmt: skip
    assert list(on_b.events[1].messages_deleted.ids) == [saved[1].id]
    await on_b.close()
