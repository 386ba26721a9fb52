"""Message semantics (README, Message semantics), identical on every adapter."""

from __future__ import annotations

import pytest

from memoryd.domain.models import ClearOutcome, ClearTarget, Message, RecentQuery
from memoryd.domain.models import now_ms


def msg(content: str, ts: int, role: str = "user", **kw) -> Message:
    platform = kw.pop("platform", None)
    metadata = {"platform": platform} if platform else kw.pop("metadata", {})
    return Message(role=role, content=content, timestamp=ts, metadata=metadata, **kw)


async def save(memory, tenant, session, *messages, key=""):
    return (await memory.save_messages(tenant, session, list(messages), key)).messages


def contents(messages) -> list[str]:
    return [m.content for m in messages]


async def test_append_assigns_id_seq_and_server_time(memory, tenant):
    before = now_ms()
    stored = await save(memory, tenant, "s", msg("a", 0), msg("b", 5))
    assert [m.seq for m in stored] == [1, 2]
    assert all(m.id for m in stored) and stored[0].id != stored[1].id
    assert stored[0].timestamp >= before and stored[1].timestamp == 5
    more = await save(memory, tenant, "s", msg("c", 6))
    assert more[0].seq == 3


async def test_all_fields_round_trip(memory, tenant):
    original = Message(
        role="assistant",
        content="hello",
        kind="",
        timestamp=10,
        segments=[{"type": "image", "data": {"url": "https://x/y.png"}}, {"type": "text", "data": {"text": "hi"}}],
        metadata={"platform": "qq", "visibleContent": "hi", "sender": {"id": "u1", "name": "Ann"}},
        reasoning_content="thinking",
        tool_calls=[{"id": "c1", "name": "search", "arguments": '{"q": 1}'}],
        tool_call_id="",
    )
    await save(memory, tenant, "s", original, msg("tool out", 11, role="tool", tool_call_id="c1"))
    got = await memory.get_history(tenant, "s", 0)
    assert got[0].kind == "" and got[1].kind is None  # empty kind differs from absent
    assert got[0].segments == original.segments
    assert got[0].metadata == original.metadata
    assert got[0].reasoning_content == "thinking"
    assert got[0].tool_calls == original.tool_calls
    assert got[1].tool_call_id == "c1"
    assert not got[0].archived


async def test_history_newest_n_oldest_first_with_ties_by_seq(memory, tenant):
    await save(memory, tenant, "s", msg("t5a", 5), msg("t3", 3), msg("t5b", 5), msg("t1", 1), msg("t5c", 5))
    assert contents(await memory.get_history(tenant, "s", 3)) == ["t5a", "t5b", "t5c"]
    assert contents(await memory.get_history(tenant, "s", 4)) == ["t3", "t5a", "t5b", "t5c"]
    assert contents(await memory.get_history(tenant, "s", 0)) == ["t1", "t3", "t5a", "t5b", "t5c"]


async def test_history_default_limit_is_50(memory, tenant):
    await save(memory, tenant, "s", *[msg(str(i), i + 1) for i in range(60)])
    got = await memory.get_history(tenant, "s", 0)
    assert len(got) == 50 and got[0].content == "10" and got[-1].content == "59"


async def test_history_skips_archived_and_trim_counts(memory, tenant):
    await save(memory, tenant, "s", *[msg(str(i), i + 1) for i in range(6)])
    assert await memory.trim_history(tenant, "s", 2) == 4
    assert contents(await memory.get_history(tenant, "s", 0)) == ["4", "5"]
    assert await memory.trim_history(tenant, "s", 2) == 0
    assert await memory.trim_history(tenant, "s", 100) == 0
    full, _ = await memory.get_full_history(tenant, "s", 0, "")
    assert [m.archived for m in full] == [True] * 4 + [False] * 2
    assert await memory.trim_history(tenant, "s", 0) == 2
    assert await memory.get_history(tenant, "s", 0) == []


async def test_full_history_pages_oldest_first(memory, tenant):
    await save(memory, tenant, "s", *[msg(str(i), 100 - (i % 3)) for i in range(10)])
    await memory.trim_history(tenant, "s", 3)
    seen, token, pages = [], "", 0
    while True:
        page, token = await memory.get_full_history(tenant, "s", 4, token)
        seen += page
        pages += 1
        if not token:
            break
    assert pages == 3 and len(seen) == 10
    keys = [(m.timestamp, m.seq) for m in seen]
    assert keys == sorted(keys)
    assert sum(m.archived for m in seen) == 7


async def test_page_token_bound_to_its_query(memory, tenant):
    from memoryd.domain.errors import InvalidArgument

    await save(memory, tenant, "s", *[msg(str(i), i + 1) for i in range(3)])
    _, token = await memory.get_full_history(tenant, "s", 1, "")
    with pytest.raises(InvalidArgument) as err:
        await memory.get_full_history(tenant, "other", 1, token)
    assert err.value.violations[0].field == "page_token"
    with pytest.raises(InvalidArgument):
        await memory.get_full_history(tenant, "s", 1, "not-a-token!")


async def test_range_inclusive_with_role_and_kind_filters(memory, tenant):
    await save(
        memory,
        tenant,
        "s",
        msg("before", 9),
        msg("from", 10),
        msg("ctrl", 12, kind="control"),
        msg("nokind", 12),
        msg("emptykind", 13, kind=""),
        msg("sys", 14, role="system"),
        msg("to", 15, role="assistant"),
        msg("after", 16),
    )
    await memory.trim_history(tenant, "s", 1)  # archived messages are still in range results
    got, token = await memory.list_in_range(tenant, "s", 10, 15, [], [], 0, "")
    assert contents(got) == ["from", "ctrl", "nokind", "emptykind", "sys", "to"] and token == ""
    got, _ = await memory.list_in_range(tenant, "s", 10, 15, ["user", "assistant"], ["control", ""], 0, "")
    assert contents(got) == ["from", "nokind", "to"]
    got, token = await memory.list_in_range(tenant, "s", 10, 15, [], [], 4, "")
    rest, token2 = await memory.list_in_range(tenant, "s", 10, 15, [], [], 4, token)
    assert contents(got + rest) == ["from", "ctrl", "nokind", "emptykind", "sys", "to"] and token2 == ""


async def test_recent_across_sessions_filters_and_order(memory, tenant):
    await save(memory, tenant, "a", msg("a1", 1, platform="qq"), msg("a2", 4, role="assistant", platform="qq"))
    await save(memory, tenant, "b", msg("b1", 2, platform="tg"), msg("b-sys", 5, role="system", platform="tg"))
    await save(memory, tenant, "c", msg("c1", 3, kind="summary", platform="qq"), msg("c2", 4, kind="chat"))
    await save(memory, tenant, "d", msg("d1", 6, kind="control"))
    recent = await memory.recent_across_sessions(tenant, RecentQuery(limit=10))
    # Default roles user+assistant; ties on timestamp ordered by session id.
    assert [(r.session_id, r.message.content) for r in recent] == [
        ("a", "a1"), ("b", "b1"), ("c", "c1"), ("a", "a2"), ("c", "c2"), ("d", "d1"),
    ]
    q = RecentQuery(limit=10, platform="qq")
    assert contents(r.message for r in await memory.recent_across_sessions(tenant, q)) == ["a1", "c1", "a2"]
    q = RecentQuery(limit=10, exclude_session_ids=("a", "c"))
    assert contents(r.message for r in await memory.recent_across_sessions(tenant, q)) == ["b1", "d1"]
    q = RecentQuery(limit=10, since_ts=4, roles=("user", "assistant", "system"))
    assert contents(r.message for r in await memory.recent_across_sessions(tenant, q)) == ["a2", "c2", "b-sys", "d1"]
    q = RecentQuery(limit=10, kinds=("summary", "chat"))
    assert contents(r.message for r in await memory.recent_across_sessions(tenant, q)) == ["c1", "c2"]
    q = RecentQuery(limit=10, kinds=("summary", "chat"), exclude_kinds=("chat",))
    assert contents(r.message for r in await memory.recent_across_sessions(tenant, q)) == ["c1"]
    q = RecentQuery(limit=10, exclude_kinds=("summary", "control"))
    assert contents(r.message for r in await memory.recent_across_sessions(tenant, q)) == ["a1", "b1", "a2", "c2"]
    q = RecentQuery(limit=2)
    assert contents(r.message for r in await memory.recent_across_sessions(tenant, q)) == ["c2", "d1"]


async def test_recent_across_sessions_skips_archived(memory, tenant):
    await save(memory, tenant, "a", msg("old", 1), msg("new", 2))
    await memory.trim_history(tenant, "a", 1)
    recent = await memory.recent_across_sessions(tenant, RecentQuery(limit=10))
    assert contents(r.message for r in recent) == ["new"]


async def test_recent_across_sessions_full_page_when_99_percent_filtered(memory, tenant):
    noise = [msg(f"n{i}", 1000 + i, platform="noise") for i in range(396)]
    wanted = [msg(f"w{i}", 100 + i, platform="wanted") for i in range(4)]
    await save(memory, tenant, "noise", *noise)
    await save(memory, tenant, "wanted", *wanted)
    got = await memory.recent_across_sessions(tenant, RecentQuery(limit=3, platform="wanted"))
    assert contents(r.message for r in got) == ["w1", "w2", "w3"]
    got = await memory.recent_across_sessions(tenant, RecentQuery(limit=3, exclude_session_ids=("noise",)))
    assert contents(r.message for r in got) == ["w1", "w2", "w3"]


async def test_recent_across_sessions_limit_clamped(store, tenant):
    from memoryd.domain.limits import Limits
    from memoryd.domain.memory import Memory

    memory = Memory(store, Limits(max_recent_limit=5))
    await save(memory, tenant, "s", *[msg(str(i), i + 1) for i in range(8)])
    got = await memory.recent_across_sessions(tenant, RecentQuery(limit=1000))
    assert contents(r.message for r in got) == ["3", "4", "5", "6", "7"]


async def test_replace_history_swaps_unarchived_and_keeps_archived(memory, tenant):
    await save(memory, tenant, "s", *[msg(str(i), i + 1) for i in range(5)])
    await memory.trim_history(tenant, "s", 3)
    stored, removed = await memory.replace_history(tenant, "s", [msg("summary", 10, role="system"), msg("last", 11)])
    assert removed == 3 and [m.seq for m in stored] == [6, 7]
    assert contents(await memory.get_history(tenant, "s", 0)) == ["summary", "last"]
    full, _ = await memory.get_full_history(tenant, "s", 0, "")
    assert contents(full) == ["0", "1", "summary", "last"]
    _, removed = await memory.replace_history(tenant, "s", [])
    assert removed == 2 and await memory.get_history(tenant, "s", 0) == []


async def test_update_content_within_recent_limit(memory, tenant):
    await save(memory, tenant, "s", msg("x old x", 1), msg("old", 2), msg("none", 3), msg("old old", 4))
    assert await memory.update_message_content(tenant, "s", "old", "new", 3) == 2
    assert contents(await memory.get_history(tenant, "s", 0)) == ["x old x", "new", "none", "new new"]
    assert await memory.update_message_content(tenant, "s", "old", "new", 0) == 1
    assert await memory.update_message_content(tenant, "s", "absent", "z", 0) == 0


async def test_delete_by_timestamps_in_batches(memory, tenant):
    await save(memory, tenant, "s", *[msg(str(i), i + 1) for i in range(30)], msg("dup", 5))
    await save(memory, tenant, "other", msg("keep", 5))
    # 20 timestamps with delete_batch=7 → three storage transactions.
    deleted = await memory.delete_by_timestamps(tenant, "s", list(range(1, 21)) + [5, 999])
    assert deleted == 21
    assert contents(await memory.get_history(tenant, "s", 0)) == [str(i) for i in range(20, 30)]
    assert contents(await memory.get_history(tenant, "other", 0)) == ["keep"]


async def test_delete_by_ids(memory, tenant):
    stored = await save(memory, tenant, "s", msg("a", 1), msg("b", 2), msg("c", 3))
    other = await save(memory, tenant, "o", msg("x", 1))
    assert await memory.delete_by_ids(tenant, "s", [stored[0].id, stored[2].id, other[0].id, "nope"]) == 2
    assert contents(await memory.get_history(tenant, "s", 0)) == ["b"]
    assert contents(await memory.get_history(tenant, "o", 0)) == ["x"]


async def test_clear_session_and_seq_never_reused(memory, tenant):
    await save(memory, tenant, "s", msg("a", 1), msg("b", 2))
    await save(memory, tenant, "o", msg("x", 1))
    await memory.save_metadata(tenant, "summary", "s", {"text": "sum"})
    await memory.save_metadata(tenant, "summary", "o", {"text": "keep"})
    results = await memory.clear(tenant, "s", [ClearTarget.MESSAGES, ClearTarget.METADATA, ClearTarget.VECTORS])
    assert [(r.target, r.outcome, r.removed_count) for r in results] == [
        (ClearTarget.MESSAGES, ClearOutcome.CLEARED, 2),
        (ClearTarget.METADATA, ClearOutcome.CLEARED, 1),
        (ClearTarget.VECTORS, ClearOutcome.SKIPPED, 0),
    ]
    assert await memory.get_history(tenant, "s", 0) == []
    assert await memory.get_metadata(tenant, "summary", "s") is None
    assert (await memory.get_metadata(tenant, "summary", "o")).data == {"text": "keep"}
    again = await save(memory, tenant, "s", msg("c", 3))
    assert again[0].seq == 3


async def test_clear_all_only_clears_the_tenant(memory, tenant):
    other_tenant = tenant + "-other"
    await save(memory, tenant, "s1", msg("a", 1))
    await save(memory, tenant, "s2", msg("b", 1))
    await save(memory, other_tenant, "s1", msg("keep", 1))
    await memory.save_metadata(tenant, "ns", "k", {"v": 1})
    results = await memory.clear(tenant, None, [])
    assert [(r.target, r.removed_count) for r in results] == [(ClearTarget.MESSAGES, 2)]
    assert await memory.get_history(tenant, "s1", 0) == []
    assert (await memory.get_metadata(tenant, "ns", "k")) is not None  # metadata not targeted
    assert contents(await memory.get_history(other_tenant, "s1", 0)) == ["keep"]
    sessions, _ = await memory.list_sessions(tenant, 0, "")
    assert sessions == []
    await memory.clear(tenant, None, [ClearTarget.METADATA])
    assert (await memory.get_metadata(tenant, "ns", "k")) is None


async def test_list_sessions_pages_with_counts(memory, tenant):
    for name in ["b", "a", "c", "d", "e"]:
        await save(memory, tenant, name, msg("1", 1), msg("2", 7))
    await memory.trim_history(tenant, "c", 1)
    first, token = await memory.list_sessions(tenant, 2, "")
    second, token2 = await memory.list_sessions(tenant, 2, token)
    third, token3 = await memory.list_sessions(tenant, 2, token2)
    assert [s.session_id for s in first + second + third] == ["a", "b", "c", "d", "e"] and token3 == ""
    c = second[0]
    assert (c.message_count, c.unarchived_count) == (2, 1) and c.last_activity > 0


async def test_idempotent_retry_stores_once(memory, tenant):
    first = await memory.save_messages(tenant, "s", [msg("a", 1)], "key-1")
    retry = await memory.save_messages(tenant, "s", [msg("a", 1)], "key-1")
    assert retry.deduplicated and not first.deduplicated
    assert retry.messages[0].id == first.messages[0].id and retry.messages[0].seq == first.messages[0].seq
    assert len(await memory.get_history(tenant, "s", 0)) == 1
    other = await memory.save_messages(tenant, "s2", [msg("a", 1)], "key-1")  # keys are per session
    assert not other.deduplicated


async def test_tenants_are_isolated(memory, tenant):
    other = tenant + "-b"
    stored = await save(memory, tenant, "s", msg("secret", 1))
    assert await memory.get_history(other, "s", 0) == []
    assert await memory.delete_by_ids(other, "s", [stored[0].id]) == 0
    assert await memory.trim_history(other, "s", 0) == 0
    assert await memory.update_message_content(other, "s", "secret", "x", 0) == 0
    assert await memory.recent_across_sessions(other, RecentQuery(limit=10)) == []
    assert contents(await memory.get_history(tenant, "s", 0)) == ["secret"]


async def test_history_limit_above_maximum_is_clamped(store, tenant):
    from memoryd.domain.limits import Limits
    from memoryd.domain.memory import Memory

    memory = Memory(store, Limits(max_page_size=4))
    await save(memory, tenant, "s", *[msg(str(i), i + 1) for i in range(6)])
    assert contents(await memory.get_history(tenant, "s", 10_000)) == ["2", "3", "4", "5"]
    page, token = await memory.get_full_history(tenant, "s", 10_000, "")
    assert len(page) == 4 and token
