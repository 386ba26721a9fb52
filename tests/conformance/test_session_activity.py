"""ListSessions' time range on last activity and GetMemoryStats' totals (issue 41), on every
adapter: the rule is SessionFilter.matches_activity, and each adapter's query must list exactly
the sessions it admits, in session id order, over every page size."""

from __future__ import annotations

import pytest

from memoryd.domain.errors import InvalidArgument
from memoryd.domain.models import now_ms
from memoryd.domain.retention import RETENTION_LABEL
from memoryd.domain.sessions import SessionAttributes, SessionFilter, SessionTotals, SessionUpdate
from tests.conformance.test_messages import msg
from tests.conformance.test_sessions import listed

# session id -> (last activity, user, labels): written with exactly that activity time.
LAYOUT = {
    "s1": (1_000, "ann", {"plan": "pro"}),
    "s2": (2_000, "ann", {}),
    "s3": (2_000, "bob", {"plan": "pro"}),
    "s4": (3_000, "", {"plan": "pro"}),
    "s5": (4_000, "bob", {}),
    "s6": (5_000, "", {}),
}


async def write_at(store, tenant: str, session_id: str, at: int, user: str = "", **labels: str) -> None:
    update = SessionUpdate(SessionAttributes(user, "", labels))
    await store.append(tenant, session_id, [msg(f"{session_id} text", at)], None, at, update)


async def seed(store, tenant: str) -> None:
    for session_id, (at, user, labels) in LAYOUT.items():
        await write_at(store, tenant, session_id, at, user, **labels)


def expected(where: SessionFilter) -> list[str]:
    """What the rule admits, by the layout (every session matches the owner/label part when
    the filter names none)."""
    found = []
    for session_id, (at, user, labels) in LAYOUT.items():
        if where.user_id and user != where.user_id:
            continue
        if any(labels.get(k) != v for k, v in where.labels.items()):
            continue
        if where.matches_activity(at):
            found.append(session_id)
    return found


RANGES = [
    (None, None),
    (2_000, None),  # inclusive lower bound: both sessions at 2000
    (None, 2_000),  # exclusive upper bound: only s1
    (2_000, 3_000),
    (1_001, 4_001),
    (3_000, 3_001),
    (5_001, None),  # nothing that late
    (0, 1_000),  # nothing before s1
]


async def test_the_time_range_lists_exactly_what_the_rule_admits_on_every_page_size(memory, store, tenant):
    await seed(store, tenant)
    for since, before in RANGES:
        for base in (SessionFilter(), SessionFilter(user_id="ann"), SessionFilter(labels={"plan": "pro"})):
            where = SessionFilter(base.user_id, base.agent_id, base.labels, since, before)
            want = expected(where)
            for page_size in (0, 1, 2):
                assert await listed(memory, tenant, where, page_size) == want, (where, page_size)
    assert expected(SessionFilter(active_since=2_000, active_before=3_000)) == ["s2", "s3"]  # the oracle itself


async def test_a_session_written_again_moves_into_the_range(memory, store, tenant):
    await seed(store, tenant)
    recent = SessionFilter(active_since=4_000)
    assert await listed(memory, tenant, recent) == ["s5", "s6"]
    await write_at(store, tenant, "s1", 4_500, "ann")  # its last activity is now 4500
    assert await listed(memory, tenant, recent) == ["s1", "s5", "s6"]
    assert await listed(memory, tenant, SessionFilter(active_before=2_000)) == []


async def test_paging_with_a_time_range_survives_writes_between_pages(memory, store, tenant):
    await seed(store, tenant)
    where = SessionFilter(active_since=2_000)
    page, token = await memory.list_sessions(tenant, 2, "", where)
    assert [i.session_id for i in page] == ["s2", "s3"] and token
    await write_at(store, tenant, "s1", 9_000, "ann")  # enters the range behind the position: not repeated
    await write_at(store, tenant, "s7", 9_000)  # enters ahead of it: listed
    rest = []
    while token:
        page, token = await memory.list_sessions(tenant, 2, token, where)
        rest += [i.session_id for i in page]
    assert rest == ["s4", "s5", "s6", "s7"]


async def test_a_page_token_belongs_to_its_time_range(memory, store, tenant):
    await seed(store, tenant)
    _, token = await memory.list_sessions(tenant, 1, "", SessionFilter(active_since=1_000))
    assert token
    for other in (
        SessionFilter(),
        SessionFilter(active_since=2_000),
        SessionFilter(active_since=1_000, active_before=9),
    ):
        with pytest.raises(InvalidArgument):
            await memory.list_sessions(tenant, 1, token, other)
    # A token of an unfiltered listing is the one it was before time ranges existed.
    _, plain = await memory.list_sessions(tenant, 1, "", SessionFilter())
    page, _ = await memory.list_sessions(tenant, 1, plain, SessionFilter(active_since=None, active_before=None))
    assert [i.session_id for i in page] == ["s2"]


async def test_session_totals_add_up_the_listed_sessions(memory, store, tenant):
    assert await memory.session_totals(tenant) == SessionTotals()
    await seed(store, tenant)
    await write_at(store, tenant, "s1", 1_500, "ann")  # two messages in s1
    await write_at(store, tenant, "kept", 6_000, "", **{RETENTION_LABEL: "never"})
    await write_at(store, tenant, "short", 6_000, "", **{RETENTION_LABEL: "0.5"})
    await memory.trim_history(tenant, "s1", 1)  # one of s1's two archived
    await memory.update_session(tenant, "empty", SessionAttributes("", "", {"team": "x"}), ())  # listed, no messages
    totals = await memory.session_totals(tenant)
    assert totals == SessionTotals(sessions=9, messages=9, unarchived=8, labelled=2)
    infos = []
    token = ""
    while True:
        page, token = await memory.list_sessions(tenant, 3, token)
        infos += page
        if not token:
            break
    # The totals are ListSessions' rows added up.
    assert totals.sessions == len(infos)
    assert totals.messages == sum(i.message_count for i in infos)
    assert totals.unarchived == sum(i.unarchived_count for i in infos)
    assert totals.labelled == sum(RETENTION_LABEL in i.attributes.labels for i in infos)


async def test_session_totals_are_the_callers_tenants_only(memory, store, tenant):
    await seed(store, tenant)
    other = tenant + "-other"
    await write_at(store, other, "x", now_ms())
    assert (await memory.session_totals(tenant)).sessions == len(LAYOUT)
    assert await memory.session_totals(other) == SessionTotals(sessions=1, messages=1, unarchived=1, labelled=0)
