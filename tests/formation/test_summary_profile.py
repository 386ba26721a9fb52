"""Rolling summaries and profiles against a real store and the scripted model over HTTP."""

from __future__ import annotations

from memoryd.domain.models import EventType
from memoryd.domain.summaries import ContextRequest
from memoryd.formation.summary import formed


async def slices(rig, session):
    found, _ = await rig.summaries.list_summaries(rig.tenant, session, 100, "")
    return found


async def check_slices(rig, session) -> None:
    """Set equality for slices: formed slices never overlap, every stored message up to the
    cursor lies in exactly one, and each slice's text is the summary of the messages it covers
    as stored now (0 missing, 0 orphans, 0 duplicates)."""
    state = await rig.summaries.get_cursor(rig.tenant, session)
    stored = await rig.store.messages_by_seq(rig.tenant, session, 1, state.cursor, 100_000)
    covered: dict[int, int] = {}
    for s in await slices(rig, session):
        assert formed(s) is not None
        inside = [m for m in stored if s.from_seq <= m.seq <= s.to_seq]
        assert inside, f"a slice over deleted messages only: {s}"
        assert s.text == "summary: " + " | ".join(m.content for m in inside)
        for m in inside:
            covered[m.seq] = covered.get(m.seq, 0) + 1
    assert covered == {m.seq: 1 for m in stored}


async def test_the_tail_rolls_into_slices_that_assemble_context_returns(rig):
    await rig.say("s1", *[f"message {i}" for i in range(1, 10)])  # 9 messages, N = 4
    await rig.settle()
    found = await slices(rig, "s1")
    assert [(s.from_seq, s.to_seq) for s in found] == [(1, 4), (5, 8)]
    assert found[1].text == "summary: message 5 | message 6 | message 7 | message 8"
    assert "Earlier summary" in rig.llm.calls_for("memoryd_summary")[1].user
    context = await rig.summaries.assemble(rig.tenant, ContextRequest("s1"))
    assert context.summary is not None and context.summary.to_seq == 8
    assert [m.message.content for m in context.assembly.messages] == ["message 9"]
    # Replayed (a crash before the cursor of the log consumer was saved): no second slice.
    await rig.formation.summary.apply(rig.tenant, await rig.store.read_events(rig.tenant, 0, 1000))
    assert len(await slices(rig, "s1")) == 2
    await check_slices(rig, "s1")
    formed_events = await rig.store.read_events(rig.tenant, 0, 1000, types=[EventType.MEMORY_FORMED], through_seq=2**62)
    assert [e.payload["kind"] for e in formed_events] == ["summary", "summary"]


async def test_deleted_and_rewritten_messages_rederive_or_remove_slices(rig):
    said = await rig.say("s1", *[f"message {i}" for i in range(1, 9)], ts=1000)
    await rig.settle()
    await rig.memory.delete_by_ids(rig.tenant, "s1", [said[1].id])
    await rig.memory.update_message_content(rig.tenant, "s1", "message 6", "message six", 0)
    await rig.settle()
    found = await slices(rig, "s1")
    assert [s.text for s in found] == [
        "summary: message 1 | message 3 | message 4",
        "summary: message 5 | message six | message 7 | message 8",
    ]
    await rig.memory.delete_by_ids(rig.tenant, "s1", [m.id for m in said[:4]])
    await rig.settle()
    assert [(s.from_seq, s.to_seq) for s in await slices(rig, "s1")] == [(5, 8)]
    await check_slices(rig, "s1")


async def test_idle_sessions_are_summarized_by_the_sweep(rig):
    await rig.say("s1", "one", "two", ts=1000)
    await rig.settle()
    assert await slices(rig, "s1") == []
    await rig.formation.settings.save(rig.tenant, "", {"summary_idle_seconds": 60})
    assert await rig.formation.summary.sweep(rig.tenant, 10**13, 60) == 1
    assert [s.text for s in await slices(rig, "s1")] == ["summary: one | two"]


async def test_the_profile_follows_the_current_facts(rig):
    await rig.say("s1", "my city is Paris", "my food is rice")
    await rig.settle()
    profile = await rig.formation.get_profile(rig.tenant, "alice")
    assert profile is not None and set(profile.text.split("; ")) == {"user's city is Paris", "user's food is rice"}
    calls = len(rig.llm.calls_for("memoryd_profile"))
    await rig.settle()  # nothing new: no call
    assert len(rig.llm.calls_for("memoryd_profile")) == calls
    await rig.say("s1", "my city is Rome")
    await rig.settle()
    profile = await rig.formation.get_profile(rig.tenant, "alice")
    assert set(profile.text.split("; ")) == {"user's city is Rome", "user's food is rice"}
    await rig.memory.forget_user(rig.tenant, "alice")
    await rig.settle()
    assert await rig.formation.get_profile(rig.tenant, "alice") is None


async def test_settings_turn_strategies_off_per_session(rig):
    await rig.formation.settings.save(rig.tenant, "quiet", {"summary_enabled": False, "facts_enabled": False})
    await rig.say("quiet", "my city is Paris", "b", "c", "d", "e")
    await rig.settle()
    assert await slices(rig, "quiet") == [] and await rig.facts() == []
    assert rig.llm.calls == []
    effective = await rig.formation.settings.effective(rig.tenant, "quiet")
    assert not effective.summary_enabled and effective.profile_enabled
