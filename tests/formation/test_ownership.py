"""Formed memory and ownership (docs/SECURITY.md "Session ownership"): formed summary slices
carry the owner stamp of the session when they are written, a user-bound reader reads only
its own, and a slice the tenant wrote before giving the session to a user is never fed to
the model as the user's earlier summary (its text would otherwise reach the user inside a
slice stamped with the user). Facts and the profile are kept per user (their namespace is the
user's id) and formed only for a session's user owner."""

from __future__ import annotations

from memoryd.domain.sessions import TENANT_STAMP, SessionAttributes


async def test_a_handed_session_forms_the_users_slices_apart_from_the_tenants(rig):
    await rig.say("h", *[f"tenant message {i}" for i in range(1, 5)], user="")  # the tenant's session
    await rig.settle()
    await rig.memory.update_session(rig.tenant, "h", SessionAttributes("bob", "", {}), [])  # given to bob
    await rig.say("h", *[f"bob message {i}" for i in range(5, 9)], user="bob")
    await rig.settle()

    found, _ = await rig.summaries.list_summaries(rig.tenant, "h", 100, "")
    assert [(s.from_seq, s.to_seq, s.owner) for s in found] == [(1, 4, TENANT_STAMP), (5, 8, "bob")]
    calls = rig.llm.calls_for("memoryd_summary")
    assert len(calls) == 2 and "Earlier summary" not in calls[1].user  # not the tenant's slice
    assert not any("tenant message" in s.text for s in found[1:])
    bobs, _ = await rig.summaries.list_summaries(rig.tenant, "h", 100, "", reader="bob")
    assert [s.text for s in bobs] == ["summary: " + " | ".join(f"bob message {i}" for i in range(5, 9))]
    tenants = await rig.summaries.get_cursor(rig.tenant, "h")
    bobs = await rig.summaries.get_cursor(rig.tenant, "h", "bob")
    assert (tenants.cursor, tenants.summary_count) == (8, 2)
    assert (bobs.cursor, bobs.summary_count, bobs.latest.owner) == (8, 1, "bob")


async def test_formed_slices_and_facts_are_the_owners(rig):
    await rig.say("a", "my city is Paris", "one", "two", "three", user="alice")
    await rig.settle()
    found, _ = await rig.summaries.list_summaries(rig.tenant, "a", 100, "")
    assert found and {s.owner for s in found} == {"alice"}
    assert (await rig.summaries.list_summaries(rig.tenant, "a", 100, "", reader="bob"))[0] == []
    facts, _ = await rig.formation.list_facts(rig.tenant, "alice", "a", False, 100, None)
    assert [f.user_id for f in facts] == ["alice"]
    assert (await rig.formation.list_facts(rig.tenant, "bob", "a", False, 100, None))[0] == []
