"""ForgetUser under short client deadlines (issue 44 row 12): every call keeps what it did and
the next one goes on from there, so repeated calls always finish, however short the deadline
(domain/forget.py: at least one step per call; a large session goes in batches of messages)."""

from __future__ import annotations

import grpc

from memoryd.domain.limits import Limits
from memoryd.v1 import memory_service_pb2 as mpb
from memoryd.v1 import message_pb2

SESSIONS = 60
BIG = 1_300  # messages of one session: more than one batch of MEMORYD_DELETE_BATCH (200 here)


async def test_forget_user_with_short_deadlines_always_finishes(serve):
    async with serve("sqlite", limits=Limits(delete_batch=200)) as (app, stubs):
        attributes = message_pb2.SessionAttributes(user_id="hasty")
        for n in range(SESSIONS):
            messages = [message_pb2.Message(role="user", content=f"note {n} {i}") for i in range(10)]
            await stubs.memory.SaveMessages(
                mpb.SaveMessagesRequest(session_id=f"s{n}", messages=messages, session_attributes=attributes)
            )
        for start in range(0, BIG, 500):
            messages = [
                message_pb2.Message(role="user", content=f"big {i}") for i in range(start, min(BIG, start + 500))
            ]
            await stubs.memory.SaveMessages(
                mpb.SaveMessagesRequest(session_id="big", messages=messages, session_attributes=attributes)
            )
        await stubs.memory.SaveMessages(
            mpb.SaveMessagesRequest(session_id="other", messages=[message_pb2.Message(role="user", content="stays")])
        )

        sessions = messages_deleted = calls = 0
        for deadline in (0.3, 0.5, 0.8) * 200:  # ample: each call forgets at least a session or a batch
            calls += 1
            try:
                answer = await stubs.memory.ForgetUser(mpb.ForgetUserRequest(user_id="hasty"), timeout=deadline)
            except grpc.aio.AioRpcError as error:
                # The deadline passed in the network or the answer: what the call did stays.
                assert error.code() in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE), error
                continue
            sessions += answer.sessions_forgotten
            messages_deleted += answer.messages_deleted
            if answer.complete:
                break
            assert answer.sessions_forgotten or answer.messages_deleted, "a call that did nothing"
        else:
            raise AssertionError(f"ForgetUser did not finish in {calls} calls")

        listed = await stubs.memory.ListSessions(mpb.ListSessionsRequest(user_id="hasty"))
        assert list(listed.sessions) == []
        for sid in ("big", "s0", f"s{SESSIONS - 1}"):
            history = await stubs.memory.GetHistory(mpb.GetHistoryRequest(session_id=sid, limit=10))
            assert list(history.messages) == []
        other = await stubs.memory.GetHistory(mpb.GetHistoryRequest(session_id="other", limit=10))
        assert [m.content for m in other.messages] == ["stays"]
        assert sessions <= SESSIONS + 1 and messages_deleted <= SESSIONS * 10 + BIG  # nothing counted twice
