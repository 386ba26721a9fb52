"""Formed memory through LangGraph's store interface: MemorydStore's (formed, "facts", user)
and (formed, "profile", user) namespaces read the facts and profile a real memoryd formed
with --llm-url at the scripted model (tests/formation/script.py: "my <key> is <value>"
states the fact "user's <key> is <value>"), and put/delete map to UpdateFact/DeleteFact."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest
from langgraph.store.base import InvalidNamespaceError

from memoryd_client import MemoryClient, SyncMemoryClient, message, session_attributes
from memoryd_client.langgraph import FormedMemoryError, MemorydSearchWarning, MemorydStore, user_label
from tests.formation.script import Model
from tests.llm_server import ScriptedLLM
from tests.processes import MemorydServer


@pytest.fixture(scope="module")
def formed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemorydServer]:
    with ScriptedLLM(Model()) as llm:
        server = MemorydServer(
            tmp_path_factory.mktemp("memoryd-formed"),
            "--http-listen",
            "off",
            "--llm-url",
            llm.url,
            "--llm-model",
            llm.model,
        )
        server.start()
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture
def sync_client(formed: MemorydServer) -> Iterator[SyncMemoryClient]:
    with SyncMemoryClient(formed.target) as client:
        yield client


def say(client: SyncMemoryClient, user: str, session: str, *texts: str) -> int:
    """Saves the user's messages and waits until formation has processed them."""
    seq = 0
    for text in texts:
        seq = client.save_message(session, message("user", text), attributes=session_attributes(user_id=user)).event_seq
    client.wait_for_formation(seq, timeout_ms=20_000)
    return seq


def settle(client: SyncMemoryClient) -> None:
    """Formation's own events (a fact formed, then the profile) come after a write's seq: a
    later write's wait covers them."""
    for _ in range(2):
        seq = client.save_message(f"marker-{uuid.uuid4().hex[:6]}", message("user", "nothing stated")).event_seq
        client.wait_for_formation(seq, timeout_ms=20_000)


def test_search_and_get_return_formed_facts_with_provenance(sync_client: SyncMemoryClient) -> None:
    user = f"ann-{uuid.uuid4().hex[:6]}"
    say(sync_client, user, f"{user}-s1", "my city is Paris", "hello there", "my drink is tea")
    say(sync_client, f"{user}-other", f"{user}-s2", "my city is Oslo")
    settle(sync_client)
    store = MemorydStore(sync_client)
    facts = store.search(("memoryd", "facts", user))
    assert sorted(item.value["text"] for item in facts) == ["user's city is Paris", "user's drink is tea"]
    history = sync_client.get_full_history(f"{user}-s1").messages
    by_text = {item.value["text"]: item for item in facts}
    paris = by_text["user's city is Paris"]
    assert paris.namespace == ("memoryd", "facts", user)
    assert paris.value["sources"] == [{"session_id": f"{user}-s1", "message_id": history[0].id, "seq": history[0].seq}]
    assert paris.value["keywords"] == ["city", "Paris"] and paris.value["category"] == "biography"
    assert paris.value["corrected"] is False and paris.value["valid_to"] == 0
    assert paris.created_at.timestamp() > 0
    assert by_text["user's drink is tea"].value["sources"][0]["message_id"] == history[2].id

    got = store.get(("memoryd", "facts", user), paris.key)
    assert got is not None and got.value == paris.value and got.key == paris.key
    assert store.get(("memoryd", "facts", user), "no-such-fact") is None
    # The other user's facts stay theirs.
    others = store.search(("memoryd", "facts", f"{user}-other"))
    assert [item.value["text"] for item in others] == ["user's city is Oslo"]

    # A query ranks by shared words (warned: not by meaning); filters are LangGraph's.
    with pytest.warns(MemorydSearchWarning, match="words shared"):
        found = store.search(("memoryd", "facts", user), query="which city do I live in")
    assert [item.value["text"] for item in found] == ["user's city is Paris"]
    assert found[0].score is not None and 0 < found[0].score <= 1
    assert store.search(("memoryd", "facts", user), query="weather") == []
    filtered = store.search(("memoryd", "facts", user), filter={"keywords": ["drink", "tea"]})
    assert [item.value["text"] for item in filtered] == ["user's drink is tea"]
    assert len(store.search(("memoryd", "facts", user), limit=1)) == 1
    assert len(store.search(("memoryd", "facts", user), offset=1)) == 1


def test_superseded_facts_leave_search_but_get_finds_them(sync_client: SyncMemoryClient) -> None:
    user = f"bo-{uuid.uuid4().hex[:6]}"
    say(sync_client, user, f"{user}-s", "my city is Rome")
    say(sync_client, user, f"{user}-s", "my city is Lima")
    settle(sync_client)
    store = MemorydStore(sync_client)
    current = store.search(("memoryd", "facts", user))
    assert [item.value["text"] for item in current] == ["user's city is Lima"]
    every = sync_client.list_facts(user, include_superseded=True).facts
    old = next(f for f in every if f.text == "user's city is Rome")
    got = store.get(("memoryd", "facts", user), old.id)
    assert got is not None and got.value["valid_to"] > 0 and got.value["superseded_by"] == current[0].key


def test_put_corrects_a_fact_and_delete_removes_it(sync_client: SyncMemoryClient) -> None:
    user = f"cy-{uuid.uuid4().hex[:6]}"
    say(sync_client, user, f"{user}-s", "my pet is cat", "my car is red")
    settle(sync_client)
    store = MemorydStore(sync_client)
    namespace = ("memoryd", "facts", user)
    pet = next(item for item in store.search(namespace) if "pet" in item.value["text"])
    # A read-modify-write of the item's value: output-only fields (sources, ...) are ignored.
    store.put(namespace, pet.key, {**pet.value, "text": "user's pet is a dog", "keywords": ["pet", "dog"]})
    corrected = store.get(namespace, pet.key)
    assert corrected is not None
    assert corrected.value["text"] == "user's pet is a dog" and corrected.value["corrected"] is True
    assert corrected.value["keywords"] == ["pet", "dog"]
    assert corrected.value["sources"] == pet.value["sources"]
    assert any(f.corrected and f.text == "user's pet is a dog" for f in sync_client.list_facts(user).facts)

    car = next(item for item in store.search(namespace) if "car" in item.value["text"])
    store.delete(namespace, car.key)
    assert store.get(namespace, car.key) is None
    assert all(f.id != car.key for f in sync_client.list_facts(user, include_superseded=True).facts)
    store.delete(namespace, car.key)  # deleting what is gone is no error, as in LangGraph

    with pytest.raises(FormedMemoryError, match="no formed fact"):
        store.put(namespace, "made-up-key", {"text": "user's hat is blue"})
    with pytest.raises(FormedMemoryError, match="'text'"):
        store.put(namespace, pet.key, {"note": "no text"})
    assert store.get(namespace, "made-up-key") is None


def test_profile_is_one_read_only_item(sync_client: SyncMemoryClient) -> None:
    user = f"di-{uuid.uuid4().hex[:6]}"
    say(sync_client, user, f"{user}-s", "my city is Kyiv", "my sport is chess")
    settle(sync_client)
    store = MemorydStore(sync_client)
    namespace = ("memoryd", "profile", user)
    profile = store.get(namespace, "profile")
    assert profile is not None and profile.key == "profile"
    facts = {item.key: item.value["text"] for item in store.search(("memoryd", "facts", user))}
    assert sorted(profile.value["fact_ids"]) == sorted(facts)
    assert set(profile.value["text"].split("; ")) == set(facts.values())
    assert [item.key for item in store.search(namespace)] == ["profile"]
    assert store.get(namespace, "other") is None
    with pytest.raises(FormedMemoryError, match="profile"):
        store.put(namespace, "profile", {"text": "mine"})
    with pytest.raises(FormedMemoryError, match="profile"):
        store.delete(namespace, "profile")
    assert store.get(("memoryd", "profile", f"{user}-nobody"), "profile") is None


def test_embed_ranks_facts_by_similarity_and_async_methods(formed: MemorydServer, sync_client) -> None:
    user = f"ed-{uuid.uuid4().hex[:6]}"
    say(sync_client, user, f"{user}-s", "my city is Paris", "my drink is tea", "my pet is cat")
    settle(sync_client)

    def embed(texts: list[str]) -> list[list[float]]:  # one axis per topic word
        return [[float(w in t.lower()) for w in ("city", "drink", "pet")] + [0.1] for t in texts]

    async def run() -> None:
        async with MemoryClient(formed.target) as client:
            store = MemorydStore(client, index={"embed": embed, "dims": 4})
            namespace = ("memoryd", "facts", user)
            ranked = await store.asearch(namespace, query="where is my pet")
            # Every current fact, by similarity: the pet's first.
            assert len(ranked) == 3 and ranked[0].value["text"] == "user's pet is cat"
            assert ranked[0].score is not None and ranked[1].score is not None and ranked[0].score > ranked[1].score
            assert [i.value["text"] for i in await store.asearch(namespace, query="a drink", limit=1)] == [
                "user's drink is tea"
            ]
            fact = await store.aget(namespace, ranked[0].key)
            assert fact is not None and fact.value["text"] == "user's pet is cat"
            await store.aput(namespace, fact.key, {"text": "user's pet is a parrot"})
            assert (await store.aget(namespace, fact.key)).value["text"] == "user's pet is a parrot"
            await store.adelete(namespace, fact.key)
            assert await store.aget(namespace, fact.key) is None
            profile = await store.aget(("memoryd", "profile", user), "profile")
            assert profile is not None

    asyncio.run(run())


def test_reserved_label_and_user_ids_with_dots(sync_client: SyncMemoryClient) -> None:
    store = MemorydStore(sync_client)
    for bad in [("memoryd",), ("memoryd", "facts"), ("memoryd", "notes", "ann"), ("memoryd", "facts", "ann", "x")]:
        with pytest.raises(InvalidNamespaceError, match="reserved"):
            store.search(bad)
        with pytest.raises(InvalidNamespaceError, match="reserved"):
            store.put(bad, "k", {"text": "x"})
    # Formed namespaces are not listed, and the store's own items are not mixed in.
    own = MemorydStore(sync_client, root=f"lgf-{uuid.uuid4().hex[:6]}.")
    own.put(("notes",), "n1", {"text": "my city is Paris"})
    assert own.list_namespaces() == [("notes",)]
    assert [item.key for item in own.search(())] == ["n1"]
    # formed=None: the label is an ordinary one.
    plain = MemorydStore(sync_client, root=f"lgf-{uuid.uuid4().hex[:6]}.", formed=None)
    plain.put(("memoryd", "facts", "ann"), "k", {"text": "mine"})
    assert plain.get(("memoryd", "facts", "ann"), "k").value == {"text": "mine"}

    user = f"e.f%-{uuid.uuid4().hex[:6]}"
    assert user_label(user) == user.replace("%", "%25").replace(".", "%2E")
    say(sync_client, user, f"dot-{uuid.uuid4().hex[:6]}", "my color is green")
    settle(sync_client)
    assert store.facts_namespace(user) == ("memoryd", "facts", user_label(user))
    assert store.profile_namespace(user) == ("memoryd", "profile", user_label(user))
    found = store.search(store.facts_namespace(user))
    assert [item.value["text"] for item in found] == ["user's color is green"]
    assert found[0].namespace == ("memoryd", "facts", user_label(user))
    with pytest.raises(ValueError, match="formed=None"):
        plain.facts_namespace(user)


def test_a_query_in_an_unspaced_script_finds_facts_by_character_pairs(sync_client: SyncMemoryClient) -> None:
    user = f"fu-{uuid.uuid4().hex[:6]}"
    say(sync_client, user, f"{user}-s", "my city is 東京", "my food is ラーメン")
    settle(sync_client)
    store = MemorydStore(sync_client)
    namespace = ("memoryd", "facts", user)
    with pytest.warns(MemorydSearchWarning):
        found = store.search(namespace, query="東京に住んでいる")
    assert [item.value["text"] for item in found] == ["user's city is 東京"]
    assert [i.value["text"] for i in store.search(namespace, query="ﾗｰﾒﾝが好き")] == ["user's food is ラーメン"]  # NFKC
    assert store.search(namespace, query="大阪") == []
