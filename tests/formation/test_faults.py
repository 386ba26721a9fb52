"""Faults of the model are backlog, never loss or duplication: each failed batch leaves the
consumer's cursor where it was (the runtime retries it with backoff), the status says why, and
once the model answers the derived records equal what the log determines."""

from __future__ import annotations

import pytest

from memoryd.domain.errors import MemorydError
from memoryd.formation import llm
from tests.formation.conftest import check_facts
from tests.formation.test_summary_profile import check_slices, slices
from tests.llm_server import Reply, rate_limited, server_error

FAULTS = {
    "rate_limited": (rate_limited(0), llm.RATE_LIMITED),
    "server_error": (server_error(503), llm.SERVER_ERROR),
    "malformed_json": (Reply(content='{"facts": [ {"text": '), llm.INVALID_ANSWER),
    "schema_violation": (Reply(content='{"facts": [{"text": "x"}]}'), llm.INVALID_ANSWER),
    "refusal": (Reply(refusal="I can't help with that"), llm.REFUSED),
    "cut_off": (Reply(content='{"facts": []}', finish_reason="length"), llm.TRUNCATED),
    "timeout": (Reply(content='{"facts": []}', delay=1.5), llm.TIMEOUT),
}


async def settle_through_faults(rig, attempts: int = 20) -> list[str]:
    """Apply until the log is through, as the runtime's retries would; the failures' reasons."""
    failures = []
    for _ in range(attempts):
        try:
            await rig.settle()
            return failures
        except MemorydError as error:
            failures.append(error.kind if isinstance(error, llm.LlmFailed) else error.reason)
    raise AssertionError(f"still failing after {attempts} tries: {failures}")


@pytest.fixture
def settings():
    from memoryd.formation.settings import Settings

    return Settings(summary_max_messages=3, summary_idle_seconds=0)


@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_a_failing_model_leaves_a_backlog_that_converges(rig, fault):
    reply, kind = FAULTS[fault]
    if fault == "timeout":
        rig.formation.meter.model.client = rig.formation.meter.model.client.with_options(timeout=0.5)
    said = await rig.say("s1", "my city is Paris", "my food is rice", "hello", "my pet is dog")
    await rig.settle()
    before = len(rig.llm.calls)
    rig.model.faults.extend([reply, reply])
    await rig.say("s1", "my city is Rome", "my tea is mint", "my car is blue")
    await rig.memory.delete_by_ids(rig.tenant, "s1", [said[1].id])
    failures = await settle_through_faults(rig)
    assert failures == [kind, kind]
    assert len(rig.llm.calls) > before + 2
    status = {s.strategy: s for s in rig.formation.status(rig.tenant, (await rig.store.event_bounds(rig.tenant))[1])}
    assert status["facts"].usage.failures + status["summary"].usage.failures == 2
    assert all(s.last_error == "" and s.lag == 0 for s in status.values())
    counts = await check_facts(rig)
    assert (counts["facts"], counts["current"]) == (5, 4)  # Paris superseded by Rome; rice deleted
    await check_slices(rig, "s1")
    assert [(s.from_seq, s.to_seq) for s in await slices(rig, "s1")] == [(1, 3), (4, 6)]


async def test_retry_after_holds_the_tenant_back_without_calls(rig):
    rig.model.faults.append(rate_limited(30))
    await rig.say("s1", "my city is Paris")
    with pytest.raises(llm.LlmFailed):
        await rig.settle()
    calls = len(rig.llm.calls)
    with pytest.raises(llm.LlmFailed) as caught:
        await rig.settle()
    assert caught.value.kind == llm.BACKING_OFF and len(rig.llm.calls) == calls


async def test_a_token_budget_stops_calls_until_the_window_ends(rig):
    meter = rig.formation.meter
    await rig.say("s1", "my city is Paris")
    await rig.settle()
    meter.token_budget = meter.usage(rig.tenant, "facts").prompt_tokens  # spent already
    await rig.say("s1", "my food is rice")
    with pytest.raises(llm.LlmFailed) as caught:
        await rig.settle()
    assert caught.value.kind == llm.BUDGET and meter.tokens_left(rig.tenant) == 0
    meter.token_budget = 0
    await rig.settle()
    await check_facts(rig)


async def test_one_tenants_failing_batches_never_hold_up_another(rig):
    """The serving loop: tenant A's facts call fails every time; tenant B's memory forms, and
    a wait for B's write returns while A's lag stays."""
    from memoryd.domain.models import Message
    from memoryd.domain.sessions import SessionAttributes
    from tests.llm_server import server_error

    script = rig.model.__class__.__call__

    def poisoned(call):
        return server_error() if "poison" in call.user else script(rig.model, call)

    rig.llm.script = poisoned
    other = rig.tenant + "-b"
    await rig.say("s1", "my poison is x")
    await rig.memory.update_session(other, "s1", SessionAttributes("bob", "", {}), [])
    wrote = await rig.memory.save_messages(other, "s1", [Message(role="user", content="my city is Paris")], "")
    rig.formation.start()
    try:
        await rig.formation.wait(other, wrote.event_seq, 30)
        assert [f.text for f in await rig.formation.records.facts(other, "bob")] == ["user's city is Paris"]
        latest = (await rig.store.event_bounds(rig.tenant))[1]
        stuck = {s.strategy: s for s in rig.formation.status(rig.tenant, latest)}["facts"]
        assert stuck.lag > 0 and stuck.usage.failures >= 1 and stuck.last_error == llm.SERVER_ERROR
        with pytest.raises(MemorydError) as caught:
            await rig.formation.wait(rig.tenant, latest, 0.3)
        assert (
            caught.value.reason == "FORMATION_LAGGING" and caught.value.metadata["facts_last_error"] == llm.SERVER_ERROR
        )
    finally:
        await rig.formation.close()
