"""Export and import carry ownership (docs/SECURITY.md "Session ownership", docs/OPERATIONS.md):
each session's owner (a user, the tenant's, none) and each caller vector's owner stamp go
across exactly, summary slices keep theirs (they travel as stored metadata), so a token bound
to a user reads after the import exactly what it read before, and a forgotten session stays
claimable. An export of format version 1 (no owners) imports as before: the owner from the
attributes, else the tenant's."""

from __future__ import annotations

import json

import pytest

from memoryd.domain import forget, transfer
from memoryd.domain.errors import PermissionDenied
from memoryd.domain.hooks import MessageHooks
from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.sessions import TENANT, TENANT_STAMP, SessionAttributes, may_reach
from memoryd.domain.store import SessionGuard
from memoryd.domain.summaries import Summaries
from memoryd.domain.transfer import Exporter, Importer
from memoryd.domain.vectors import VectorPoint, VectorRecord
from memoryd.storage.qdrant.edge import EdgeIndex
from tests.conftest import BACKENDS, StoreTarget
from tests.lifecycle.test_transfer import content, m
from tests.vectors.conftest import unit

USERS = ("alice", "bob", "carol")
# session: its owner in the source
OWNERS = {"tenants": TENANT, "alices": "alice", "handed": "bob", "forgotten": None}


@pytest.fixture
async def open_store(request, tmp_path):
    """`await open_store(backend)`: a fresh store of its own, closed after the test."""
    opened = []

    async def opening(backend: str):
        store = await StoreTarget(backend, request, tmp_path / f"{backend}-{len(opened)}", "memoryd_owners").open()
        opened.append(store)
        return store

    yield opening
    for store in opened:
        await store.close()


async def fill_owned(store) -> None:
    """A session of each kind of owner, and slices stamped under each."""
    memory, summaries = Memory(store, Limits()), Summaries(store, Limits())
    await memory.save_messages("acme", "tenants", [m("the tenant's", 1)])
    await summaries.save("acme", "tenants", 1, 1, "tenant slice", {})
    await memory.save_messages("acme", "alices", [m("alice's", 1), m("more", 2)], claimed_by="alice")
    await summaries.save("acme", "alices", 1, 2, "alice slice", {})
    # The tenant writes and summarizes, then hands the session to bob: the slice stays the tenant's.
    await memory.save_messages("acme", "handed", [m("before the handover", 1)])
    await summaries.save("acme", "handed", 1, 1, "tenant slice of a handed session", {})
    await memory.update_session("acme", "handed", SessionAttributes(user_id="bob"), [])
    await memory.save_messages("acme", "handed", [m("bob's now", 2)], claimed_by="bob")
    await summaries.save("acme", "handed", 2, 2, "bob slice", {})
    # Alice's session, forgotten: the row stays (its seqs are never reused) with no owner.
    await memory.save_messages("acme", "forgotten", [m("forget me", 1)], claimed_by="alice")
    guard = SessionGuard(user_id="alice")
    assert await forget.forget_session(store, MessageHooks(), "acme", "forgotten", guard, 10) is not None


def stamped_points() -> list[VectorPoint]:
    """Caller vectors stamped with a user, with the tenant's stamp, and one written before stamps."""
    stamps = [("alices", "v-alice", "alice"), ("handed", "v-tenant", TENANT_STAMP), ("handed", "v-bob", "bob"),
              ("tenants", "v-old", None)]  # fmt: skip
    return [
        VectorPoint("acme", unit(i), VectorRecord(session, 1_000 + i, "test:4d", ref, "user", text=ref, owner=owner))
        for i, (session, ref, owner) in enumerate(stamps)
    ]


async def seen_by(store, vectors: EdgeIndex | None = None) -> dict[str, object]:
    """What each user-bound reader (and the tenant, None) reaches: the sessions it may read,
    the slices it reads of each, and the caller vectors' owner stamps."""
    summaries = Summaries(store, Limits())
    seen: dict[str, object] = {}
    for user in (*USERS, None):
        for session in OWNERS:
            info = await store.get_session("acme", session)
            owner = info.owner if info is not None else None
            reachable = user is None or may_reach(owner, info is not None, user, creates=False, reads=True)
            slices, _ = await summaries.list_summaries("acme", session, 100, "", reader=user)
            seen[f"{user}/{session}"] = (reachable, [s.text for s in slices])
    if vectors is not None:
        points, _ = await vectors.scroll("acme", 4, None, 100)
        seen["points"] = sorted((p.record.message_id, p.record.owner) for p in points)
    return seen


async def export(store, vectors=None) -> list[dict]:
    lines: list[bytes] = []
    await Exporter(store, lines.append, vectors=vectors).run(["acme"])
    return [json.loads(line) for line in lines]


async def load(store, records, vectors=None) -> transfer.Counts:
    return await Importer(store, vectors=vectors).run(json.dumps(r).encode() for r in records)


@pytest.mark.parametrize(("source", "target"), [(a, b) for a in BACKENDS for b in BACKENDS])
async def test_an_import_restores_every_owner_and_stamp(open_store, tmp_path, source, target):
    origin, copy = await open_store(source), await open_store(target)
    await fill_owned(origin)
    origin_vectors, copy_vectors = EdgeIndex(tmp_path / "origin-vectors"), EdgeIndex(tmp_path / "copy-vectors")
    await origin_vectors.open()
    await copy_vectors.open()
    try:
        await origin_vectors.upsert(stamped_points(), 1)
        exported = await export(origin, origin_vectors)
        before = await seen_by(origin, origin_vectors)
        sessions = {r["session_id"]: r["owner"] for r in exported if r.get("type") == "session"}
        assert sessions == OWNERS
        points = {r["point"]["message_id"]: r["point"].get("owner") for r in exported if r.get("type") == "vector"}
        assert points == {"v-alice": "alice", "v-tenant": TENANT_STAMP, "v-bob": "bob", "v-old": None}

        await load(copy, exported, copy_vectors)

        assert {s: (await copy.get_session("acme", s)).owner for s in OWNERS} == OWNERS
        assert await seen_by(copy, copy_vectors) == before
        assert before["bob/handed"] == (True, ["bob slice"])  # the tenant's slice stays the tenant's
        assert before["alice/alices"] == (True, ["alice slice"]) and before["bob/alices"] == (False, [])
        assert content(await export(copy, copy_vectors)) == content(exported)
        # Nobody owns the forgotten session: a user may claim it; nobody but bob claims his.
        memory = Memory(copy, Limits())
        await memory.save_messages("acme", "forgotten", [m("carol's now", 2)], claimed_by="carol")
        assert (await copy.get_session("acme", "forgotten")).owner == "carol"
        with pytest.raises(PermissionDenied):
            await memory.save_messages("acme", "handed", [m("intruder", 3)], claimed_by="alice")
        # Run again: the owners are as exported, nothing is written.
        again = await load(copy, exported, copy_vectors)
        assert again.sessions_written == 0
    finally:
        await origin_vectors.close()
        await copy_vectors.close()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_export_without_owners_imports_as_before(open_store, backend):
    """Format version 1 had no owners: the importer derives them (user_id, else the tenant's),
    and vectors come in unstamped (readable by every reader of their session, as before)."""
    origin, copy = await open_store("sqlite"), await open_store(backend)
    await fill_owned(origin)
    exported = await export(origin)
    old = [{**exported[0], "version": 1}]
    old += [{k: v for k, v in r.items() if k != "owner"} if r.get("type") == "session" else r for r in exported[1:]]

    await load(copy, old)

    owners = {s: (await copy.get_session("acme", s)).owner for s in OWNERS}
    assert owners == {**OWNERS, "forgotten": TENANT}  # what version 1 could not say
    point = transfer.point_from_json("acme", {"vector": [1.0], "session_id": "s", "model_id": "m"})
    assert point.record.owner is None


async def test_an_owner_clash_is_refused_naming_the_line(open_store):
    """The target holds the session as another user's: the import (and its check) refuses it."""
    origin, copy = await open_store("sqlite"), await open_store("sqlite")
    await fill_owned(origin)
    exported = await export(origin)
    await Memory(copy, Limits()).save_messages("acme", "alices", [m("bob's own", 1)], claimed_by="bob")
    line = 1 + next(i for i, r in enumerate(exported) if r.get("session_id") == "alices")

    for run in ("check", "run"):
        importer = Importer(copy)
        with pytest.raises(transfer.TransferError, match=f"^line {line}: .*another user_id"):
            await getattr(importer, run)(json.dumps(r).encode() for r in exported)
    assert (await copy.get_session("acme", "alices")).owner == "bob"
