"""memoryd_client.langgraph against a live memoryd.

LangGraph ships no conformance suite for stores (langgraph-checkpoint-conformance covers
checkpointers only), so the first part runs LangGraph's own store tests: the cases of
libs/checkpoint-sqlite/tests/test_store.py (langchain-ai/langgraph f09cfe8) that test the
BaseStore interface, their bodies unchanged but for the fixture; left out are the ones
about SQLite internals (GLOB escaping, SQL injection through filter keys, migrations) and
the vector-store cases written for a fake embedding model (a query here goes through
memoryd's keyword recall: see the query tests below). One case states where memoryd differs:
labels with control characters are refused (test_namespace_labels_with_trailing_newline).

Then memoryd's own: exact values, query search through SearchEntries (prefix, filter,
index fields, one entry per key under concurrent puts, a warning when it is keyword-only),
LangGraph's IndexConfig with `embed` (every matching item ranked by similarity), TTL with
refresh on read, the async methods, bounds past their limits on a small server, and a
LangChain 1.x agent (langchain.agents.create_agent, LangGraph underneath) with a fake chat
model whose tool writes and reads the store.
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import Any, cast

import pytest
from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)

from memoryd_client import FailedPreconditionError, InvalidArgumentError, MemoryClient, SyncMemoryClient
from memoryd_client.langgraph import MemorydSearchWarning, MemorydStore
from tests.processes import MemorydServer


@pytest.fixture
def sync_client(memoryd: MemorydServer) -> Iterator[SyncMemoryClient]:
    with SyncMemoryClient(memoryd.target) as client:
        yield client


@pytest.fixture
def store(sync_client: SyncMemoryClient) -> MemorydStore:
    """A store of the test's own: a root no other test uses (LangGraph's tests assume an empty store)."""
    return MemorydStore(sync_client, root=f"lg-{uuid.uuid4().hex[:10]}.")


# -- LangGraph's own store tests (libs/checkpoint-sqlite/tests/test_store.py) ---------------
def test_batch_order(store: MemorydStore) -> None:
    # Setup test data
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})

    ops = [
        GetOp(namespace=("test", "foo"), key="key1"),
        PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2"}),
        SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        GetOp(namespace=("test",), key="key3"),
    ]

    results = store.batch(cast(Iterable[GetOp | PutOp | SearchOp | ListNamespacesOp], ops))
    assert len(results) == 5
    assert isinstance(results[0], Item)
    assert isinstance(results[0].value, dict)
    assert results[0].value == {"data": "value1"}
    assert results[0].key == "key1"
    assert results[0].namespace == ("test", "foo")
    assert results[1] is None  # Put operation returns None
    assert isinstance(results[2], list)
    assert len(results[2]) == 1
    assert results[2][0].key == "key1"
    assert results[2][0].value == {"data": "value1"}
    assert isinstance(results[3], list)
    assert len(results[3]) > 0  # Should contain at least our test namespaces
    assert ("test", "foo") in results[3]
    assert ("test", "bar") in results[3]
    assert results[4] is None  # Non-existent key returns None

    # Test reordered operations
    ops_reordered = [
        SearchOp(namespace_prefix=("test",), filter=None, limit=5, offset=0),
        GetOp(namespace=("test", "bar"), key="key2"),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
        PutOp(namespace=("test",), key="key3", value={"data": "value3"}),
        GetOp(namespace=("test", "foo"), key="key1"),
    ]

    results_reordered = store.batch(cast(Iterable[GetOp | PutOp | SearchOp | ListNamespacesOp], ops_reordered))
    assert len(results_reordered) == 5
    assert isinstance(results_reordered[0], list)
    assert len(results_reordered[0]) >= 2  # Should find at least our two test items
    assert isinstance(results_reordered[1], Item)
    assert results_reordered[1].value == {"data": "value2"}
    assert results_reordered[1].key == "key2"
    assert results_reordered[1].namespace == ("test", "bar")
    assert isinstance(results_reordered[2], list)
    assert len(results_reordered[2]) > 0
    assert results_reordered[3] is None  # Put operation returns None
    assert isinstance(results_reordered[4], Item)
    assert results_reordered[4].value == {"data": "value1"}
    assert results_reordered[4].key == "key1"
    assert results_reordered[4].namespace == ("test", "foo")

    # Verify the put worked
    item3 = store.get(("test",), "key3")
    assert item3 is not None
    assert item3.value == {"data": "value3"}


def test_batch_get_ops(store: MemorydStore) -> None:
    store.put(("test",), "key1", {"data": "value1"})
    store.put(("test",), "key2", {"data": "value2"})

    ops = [
        GetOp(namespace=("test",), key="key1"),
        GetOp(namespace=("test",), key="key2"),
        GetOp(namespace=("test",), key="key3"),  # Non-existent key
    ]

    results = store.batch(ops)

    assert len(results) == 3
    assert results[0] is not None
    assert results[1] is not None
    assert results[2] is None
    assert results[0].key == "key1"
    assert results[1].key == "key2"


def test_batch_put_ops(store: MemorydStore) -> None:
    ops = [
        PutOp(namespace=("test",), key="key1", value={"data": "value1"}),
        PutOp(namespace=("test",), key="key2", value={"data": "value2"}),
        PutOp(namespace=("test",), key="key3", value=None),  # Delete operation
    ]

    results = store.batch(ops)
    assert len(results) == 3
    assert all(result is None for result in results)

    item1 = store.get(("test",), "key1")
    item2 = store.get(("test",), "key2")
    item3 = store.get(("test",), "key3")

    assert item1 and item1.value == {"data": "value1"}
    assert item2 and item2.value == {"data": "value2"}
    assert item3 is None


def test_batch_search_ops(store: MemorydStore) -> None:
    test_data = [
        (("test", "foo"), "key1", {"data": "value1", "tag": "a"}),
        (("test", "bar"), "key2", {"data": "value2", "tag": "a"}),
        (("test", "baz"), "key3", {"data": "value3", "tag": "b"}),
    ]
    for namespace, key, value in test_data:
        store.put(namespace, key, value)

    ops = [
        SearchOp(namespace_prefix=("test",), filter={"tag": "a"}, limit=10, offset=0),
        SearchOp(namespace_prefix=("test",), filter=None, limit=2, offset=0),
        SearchOp(namespace_prefix=("test", "foo"), filter=None, limit=10, offset=0),
    ]

    results = store.batch(ops)
    assert len(results) == 3
    assert len(results[0]) == 2
    assert all(item.value["tag"] == "a" for item in results[0])
    assert len(results[1]) == 2
    assert len(results[2]) == 1
    assert results[2][0].namespace == ("test", "foo")


def test_batch_list_namespaces_ops(store: MemorydStore) -> None:
    test_data = [
        (("test", "documents", "public"), "doc1", {"content": "public doc"}),
        (("test", "documents", "private"), "doc2", {"content": "private doc"}),
        (("test", "images", "public"), "img1", {"content": "public image"}),
        (("prod", "documents", "public"), "doc3", {"content": "prod doc"}),
    ]
    for namespace, key, value in test_data:
        store.put(namespace, key, value)

    ops = [
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=2, limit=10, offset=0),
        ListNamespacesOp(
            match_conditions=tuple([MatchCondition("suffix", ("public",))]), max_depth=None, limit=10, offset=0
        ),
    ]

    results = store.batch(cast(Iterable[GetOp | PutOp | SearchOp | ListNamespacesOp], ops))
    assert len(results) == 3
    assert len(results[0]) == len(test_data)
    assert all(len(ns) <= 2 for ns in results[1])
    assert all(ns[-1] == "public" for ns in results[2])


def test_basic_store_ops(store: MemorydStore) -> None:
    namespace = ("test", "documents")
    item_id = "doc1"
    item_value = {"title": "Test Document", "content": "Hello, World!"}

    store.put(namespace, item_id, item_value)
    item = store.get(namespace, item_id)

    assert item
    assert item.namespace == namespace
    assert item.key == item_id
    assert item.value == item_value

    updated_value = {"title": "Updated Document", "content": "Hello, Updated!"}
    store.put(namespace, item_id, updated_value)
    updated_item = store.get(namespace, item_id)

    assert updated_item.value == updated_value
    assert updated_item.updated_at >= item.updated_at and updated_item.created_at == item.created_at

    different_namespace = ("test", "other_documents")
    item_in_different_namespace = store.get(different_namespace, item_id)
    assert item_in_different_namespace is None

    store.delete(namespace, item_id)
    deleted_item = store.get(namespace, item_id)
    assert deleted_item is None


def test_list_namespaces(store: MemorydStore) -> None:
    test_namespaces = [
        ("test", "documents", "public"),
        ("test", "documents", "private"),
        ("test", "images", "public"),
        ("test", "images", "private"),
        ("prod", "documents", "public"),
        ("prod", "documents", "private"),
    ]
    for namespace in test_namespaces:
        store.put(namespace, "dummy", {"content": "dummy"})

    all_namespaces = store.list_namespaces()
    assert len(all_namespaces) == len(test_namespaces)

    test_prefix_namespaces = store.list_namespaces(prefix=["test"])
    assert len(test_prefix_namespaces) == 4
    assert all(ns[0] == "test" for ns in test_prefix_namespaces)

    public_namespaces = store.list_namespaces(suffix=["public"])
    assert len(public_namespaces) == 3
    assert all(ns[-1] == "public" for ns in public_namespaces)

    depth_2_namespaces = store.list_namespaces(max_depth=2)
    assert all(len(ns) <= 2 for ns in depth_2_namespaces)

    paginated_namespaces = store.list_namespaces(limit=3)
    assert len(paginated_namespaces) == 3

    for namespace in test_namespaces:
        store.delete(namespace, "dummy")
    assert store.list_namespaces() == []


def test_search(store: MemorydStore) -> None:
    test_data = [
        (("test", "docs"), "doc1", {"title": "First Doc", "author": "Alice", "tags": ["important"]}),
        (("test", "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["draft"]}),
        (("test", "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["final"]}),
    ]
    for namespace, key, value in test_data:
        store.put(namespace, key, value)

    all_items = store.search(["test"])
    assert len(all_items) == 3

    docs_items = store.search(["test", "docs"])
    assert len(docs_items) == 2
    assert all(item.namespace == ("test", "docs") for item in docs_items)

    alice_items = store.search(["test"], filter={"author": "Alice"})
    assert len(alice_items) == 2
    assert all(item.value["author"] == "Alice" for item in alice_items)

    paginated_items = store.search(["test"], limit=2)
    assert len(paginated_items) == 2

    offset_items = store.search(["test"], offset=2)
    assert len(offset_items) == 1

    for namespace, key, _ in test_data:
        store.delete(namespace, key)


def test_basic_store_operations(store: MemorydStore) -> None:
    uid = uuid.uuid4().hex
    namespace = (uid, "test", "documents")
    item_id = "doc1"
    item_value = {"title": "Test Document", "content": "Hello, World!"}
    results = store.search((uid,))
    assert len(results) == 0

    store.put(namespace, item_id, item_value)
    item = store.get(namespace, item_id)

    assert item is not None
    assert item.namespace == namespace
    assert item.key == item_id
    assert item.value == item_value
    assert item.created_at is not None
    assert item.updated_at is not None

    updated_value = {"title": "Updated Test Document", "content": "Hello, LangGraph!"}
    store.put(namespace, item_id, updated_value)
    updated_item = store.get(namespace, item_id)
    assert updated_item is not None
    assert updated_item.value == updated_value
    assert updated_item.updated_at >= item.updated_at

    different_namespace = (uid, "test", "other_documents")
    assert store.get(different_namespace, item_id) is None

    new_item_id = "doc2"
    new_item_value = {"title": "Another Document", "content": "Greetings!"}
    store.put(namespace, new_item_id, new_item_value)

    items = store.search((uid, "test"), limit=10)
    assert len(items) == 2
    assert any(item.key == item_id for item in items)
    assert any(item.key == new_item_id for item in items)

    namespaces = store.list_namespaces(prefix=(uid, "test"))
    assert (uid, "test", "documents") in namespaces

    store.delete(namespace, item_id)
    store.delete(namespace, new_item_id)
    assert store.get(namespace, item_id) is None
    assert store.get(namespace, new_item_id) is None
    assert len(store.search((uid, "test"), limit=10)) == 0


def test_list_namespaces_operations(store: MemorydStore) -> None:
    test_pref = str(uuid.uuid4())
    test_namespaces = [
        (test_pref, "test", "documents", "public", test_pref),
        (test_pref, "test", "documents", "private", test_pref),
        (test_pref, "test", "images", "public", test_pref),
        (test_pref, "test", "images", "private", test_pref),
        (test_pref, "prod", "documents", "public", test_pref),
        (test_pref, "prod", "documents", "some", "nesting", "public", test_pref),
        (test_pref, "prod", "documents", "private", test_pref),
    ]
    for namespace in test_namespaces:
        store.put(namespace, "dummy", {"content": "dummy"})

    prefix_result = store.list_namespaces(prefix=(test_pref, "test"))
    assert len(prefix_result) == 4
    assert all(ns[1] == "test" for ns in prefix_result)

    specific_prefix_result = store.list_namespaces(prefix=(test_pref, "test", "documents"))
    assert len(specific_prefix_result) == 2
    assert all(ns[1:3] == ("test", "documents") for ns in specific_prefix_result)

    suffix_result = store.list_namespaces(suffix=("public", test_pref))
    assert len(suffix_result) == 4
    assert all(ns[-2] == "public" for ns in suffix_result)

    prefix_suffix_result = store.list_namespaces(prefix=(test_pref, "test"), suffix=("public", test_pref))
    assert len(prefix_suffix_result) == 2
    assert all(ns[1] == "test" and ns[-2] == "public" for ns in prefix_suffix_result)

    wildcard_prefix_result = store.list_namespaces(prefix=(test_pref, "*", "documents"))
    assert len(wildcard_prefix_result) == 5
    assert all(ns[2] == "documents" for ns in wildcard_prefix_result)

    wildcard_suffix_result = store.list_namespaces(suffix=("*", "public", test_pref))
    assert len(wildcard_suffix_result) == 4
    assert all(ns[-2] == "public" for ns in wildcard_suffix_result)

    wildcard_single = store.list_namespaces(suffix=("some", "*", "public", test_pref))
    assert len(wildcard_single) == 1
    assert wildcard_single[0] == (test_pref, "prod", "documents", "some", "nesting", "public", test_pref)

    max_depth_result = store.list_namespaces(max_depth=3)
    assert all(len(ns) <= 3 for ns in max_depth_result)

    max_depth_result = store.list_namespaces(max_depth=4, prefix=(test_pref, "*", "documents"))
    assert len(set(res for res in max_depth_result)) == len(max_depth_result) == 5

    limit_result = store.list_namespaces(prefix=(test_pref,), limit=3)
    assert len(limit_result) == 3

    offset_result = store.list_namespaces(prefix=(test_pref,), offset=3)
    assert len(offset_result) == len(test_namespaces) - 3

    empty_prefix_result = store.list_namespaces(prefix=(test_pref,))
    assert len(empty_prefix_result) == len(test_namespaces)
    assert set(empty_prefix_result) == set(test_namespaces)

    for namespace in test_namespaces:
        store.delete(namespace, "dummy")


def test_search_items(store: MemorydStore) -> None:
    base = "test_search_items"
    test_namespaces = [
        (base, "documents", "user1"),
        (base, "documents", "user2"),
        (base, "reports", "department1"),
        (base, "reports", "department2"),
    ]
    test_items = [
        {"title": "Doc 1", "author": "John Doe", "tags": ["important"]},
        {"title": "Doc 2", "author": "Jane Smith", "tags": ["draft"]},
        {"title": "Report A", "author": "John Doe", "tags": ["final"]},
        {"title": "Report B", "author": "Alice Johnson", "tags": ["draft"]},
    ]
    for ns, item in zip(test_namespaces, test_items, strict=False):
        store.put(ns, f"item_{ns[-1]}", item)

    docs = store.search((base, "documents"))
    assert len(docs) == 2
    assert all(item.namespace[1] == "documents" for item in docs)

    reports = store.search((base, "reports"))
    assert len(reports) == 2
    assert all(item.namespace[1] == "reports" for item in reports)

    first_page = store.search((base,), limit=2, offset=0)
    second_page = store.search((base,), limit=2, offset=2)
    assert len(first_page) == 2
    assert len(second_page) == 2
    assert {item.key for item in first_page}.isdisjoint({item.key for item in second_page})
    assert len(store.search((base,))) == 4

    john_items = store.search((base,), filter={"author": "John Doe"})
    assert len(john_items) == 2
    assert all(item.value["author"] == "John Doe" for item in john_items)

    draft_items = store.search((base,), filter={"tags": ["draft"]})
    assert len(draft_items) == 2
    assert all("draft" in item.value["tags"] for item in draft_items)

    for ns in test_namespaces:
        store.delete(ns, f"item_{ns[-1]}")


def test_filter_values_are_literal(store: MemorydStore) -> None:  # test_sql_injection_filter_values
    store.put(("docs",), "doc1", {"access": "public", "title": "Public Document"})
    store.put(("docs",), "doc2", {"access": "private", "title": "Private Document"})
    store.put(("docs",), "doc3", {"access": "secret", "title": "Secret Document"})
    for malicious in ("public' OR '1'='1", "public'; --", "public' UNION SELECT * FROM store --", "public\x00' OR '1'='1", "''''", "public' OR 'א'='א"):
        assert store.search(("docs",), filter={"access": malicious}) == []
    store.put(("docs",), "doc4", {"title": "O'Brien's Document", "access": "public"})
    results = store.search(("docs",), filter={"title": "O'Brien's Document"})
    assert len(results) == 1 and results[0].value["title"] == "O'Brien's Document"


def test_numeric_filter_safety(store: MemorydStore) -> None:
    store.put(("items",), "item1", {"price": 10, "quantity": 5})
    store.put(("items",), "item2", {"price": 20, "quantity": 3})
    store.put(("items",), "item3", {"price": 30, "quantity": 1})

    results = store.search(("items",), filter={"price": {"$gt": 15}})
    assert len(results) == 2
    assert all(r.value["price"] > 15 for r in results)
    assert len(store.search(("items",), filter={"price": {"$lt": float("inf")}})) == 3
    assert len(store.search(("items",), filter={"price": {"$gt": float("-inf")}})) == 3
    assert len(store.search(("items",), filter={"price": {"$eq": float("nan")}})) == 0
    assert len(store.search(("items",), filter={"price": {"$lt": 10**100}})) == 3

    store.put(("items",), "item4", {"price": -10, "quantity": 0})
    results = store.search(("items",), filter={"price": {"$lt": 0}})
    assert len(results) == 1
    assert results[0].key == "item4"


def test_boolean_filter_safety(store: MemorydStore) -> None:
    store.put(("flags",), "flag1", {"active": True, "name": "Feature A"})
    store.put(("flags",), "flag2", {"active": False, "name": "Feature B"})
    store.put(("flags",), "flag3", {"active": True, "name": "Feature C"})

    results = store.search(("flags",), filter={"active": True})
    assert len(results) == 2
    assert all(r.value["active"] is True for r in results)
    results = store.search(("flags",), filter={"active": False})
    assert len(results) == 1
    assert results[0].value["active"] is False


def test_filter_keys_with_hyphens_and_digits(store: MemorydStore) -> None:
    store.put(("docs",), "hyphen", {"access-level": "public", "user": {"access-level": "nested"}})
    store.put(("docs",), "digit", {"123abc": "ok", "user": {"123abc": "ok2"}})

    assert [r.key for r in store.search(("docs",), filter={"access-level": "public"})] == ["hyphen"]
    assert [r.key for r in store.search(("docs",), filter={"user.access-level": "nested"})] == ["hyphen"]
    assert [r.key for r in store.search(("docs",), filter={"123abc": "ok"})] == ["digit"]
    assert [r.key for r in store.search(("docs",), filter={"user.123abc": "ok2"})] == ["digit"]


def test_non_ascii(store: MemorydStore) -> None:
    store.put(("user_123", "memories"), "1", {"text": "这是中文"})  # Chinese
    store.put(("user_123", "memories"), "2", {"text": "これは日本語です"})  # Japanese
    store.put(("user_123", "memories"), "3", {"text": "이건 한국어야"})  # Korean
    store.put(("user_123", "memories"), "4", {"text": "Это русский"})  # Russian
    store.put(("user_123", "memories"), "5", {"text": "यह रूसी है"})  # Hindi

    assert store.search(("user_123", "memories"), query="这是中文")[0].key == "1"
    assert store.search(("user_123", "memories"), query="これは日本語です")[0].key == "2"
    assert store.search(("user_123", "memories"), query="이건 한국어야")[0].key == "3"
    assert store.search(("user_123", "memories"), query="Это русский")[0].key == "4"
    assert store.search(("user_123", "memories"), query="यह रूसी है")[0].key == "5"


def _search_namespaces(store: MemorydStore, prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
    return {item.namespace for item in store.search(prefix, limit=100)}


def test_search_namespace_segment_boundary(store: MemorydStore) -> None:
    for namespace in [("foo",), ("foo", "child"), ("foo", "child", "deep"), ("foobar",), ("foobar", "baz"), ("foo2",)]:
        store.put(namespace, "k", {"v": 1})
    assert _search_namespaces(store, ("foo",)) == {("foo",), ("foo", "child"), ("foo", "child", "deep")}
    assert _search_namespaces(store, ("foobar",)) == {("foobar",), ("foobar", "baz")}
    assert _search_namespaces(store, ("foo2",)) == {("foo2",)}
    assert _search_namespaces(store, ("fo",)) == set()


def test_search_namespace_wildcard_chars_are_literal(store: MemorydStore) -> None:
    for namespace in [("user_1",), ("user_1", "child"), ("userX1",), ("a%b",), ("axxb",), ("star*",), ("starX",)]:
        store.put(namespace, "k", {"v": 1})
    assert _search_namespaces(store, ("user_1",)) == {("user_1",), ("user_1", "child")}
    assert _search_namespaces(store, ("a%b",)) == {("a%b",)}
    assert _search_namespaces(store, ("star*",)) == {("star*",)}


def test_search_namespace_is_case_sensitive(store: MemorydStore) -> None:
    store.put(("Foo",), "k", {"v": "upper"})
    store.put(("foo",), "k", {"v": "lower"})
    assert _search_namespaces(store, ("foo",)) == {("foo",)}
    assert _search_namespaces(store, ("Foo",)) == {("Foo",)}


def test_list_namespaces_segment_boundary(store: MemorydStore) -> None:
    for namespace in [
        ("foo",), ("foo", "child"), ("foobar",), ("foobar", "baz"),
        ("uid", "users", "alice"), ("uid", "users", "malice"), ("uid", "a", "b", "alice"),
    ]:  # fmt: skip
        store.put(namespace, "k", {"v": 1})
    assert set(store.list_namespaces(prefix=["foo"], limit=100)) == {("foo",), ("foo", "child")}
    assert set(store.list_namespaces(suffix=["alice"], limit=100)) == {("uid", "users", "alice"), ("uid", "a", "b", "alice")}
    assert set(store.list_namespaces(prefix=["uid", "*", "alice"], limit=100)) == {("uid", "users", "alice")}
    assert set(store.list_namespaces(prefix=["uid"], limit=100)) == {
        ("uid", "users", "alice"), ("uid", "users", "malice"), ("uid", "a", "b", "alice"),
    }  # fmt: skip


def test_search_empty_prefix_is_unconstrained(store: MemorydStore) -> None:
    for namespace in [("a",), ("b", "c"), ("d", "e", "f")]:
        store.put(namespace, "k", {"v": 1})
    assert _search_namespaces(store, ()) == {("a",), ("b", "c"), ("d", "e", "f")}


def test_namespace_labels_with_trailing_newline(store: MemorydStore) -> None:
    # LangGraph allows any label without "." or NUL; memoryd's names refuse control
    # characters (two names that print alike are one name): refused before anything is stored.
    store.put(("users", "alice"), "k", {"v": 1})
    with pytest.raises(InvalidArgumentError):
        store.put(("users", "alice\n"), "k", {"v": 2})
    assert set(store.list_namespaces(suffix=["alice"], limit=100)) == {("users", "alice")}


def test_list_namespaces_metacharacter_labels(store: MemorydStore) -> None:
    pairs = [("star*", "starX"), ("q?m", "qXm"), ("br[ack]et", "brXacXket"), ("user_1", "userX1"), ("a%b", "axxb"), ("plus+", "plusX")]
    for label, decoy in pairs:
        store.put((label,), "k", {"v": 1})
        store.put((decoy,), "k", {"v": 1})
        store.put((label, "child"), "k", {"v": 1})
    for label, decoy in pairs:
        found = set(store.list_namespaces(prefix=[label], limit=100))
        assert found == {(label,), (label, "child")}
        assert (decoy,) not in found
        assert set(store.list_namespaces(prefix=[label, "child"], limit=100)) == {(label, "child")}


# -- memoryd's own -----------------------------------------------------------------------
def test_it_is_a_langgraph_store(store: MemorydStore) -> None:
    assert isinstance(store, BaseStore) and store.supports_ttl


def test_values_round_trip_exactly_and_other_clients_read_them(store: MemorydStore, sync_client) -> None:
    value = {"n": 1, "big": 2**60, "f": 1.5, "none": None, "$dollar": "kept", "nested": {"list": [1, "two", True]}, "ü": "✓"}
    store.put(("users", "ann"), "profile", value)
    item = store.get(("users", "ann"), "profile")
    assert item.value == value and type(item.value["n"]) is int
    record = sync_client.get_metadata(store.root + "users.ann", "profile")  # what other clients read
    assert record.data.fields["value"].string_value.startswith("{")
    with pytest.raises(ValueError, match="JSON"):
        store.put(("users", "ann"), "bytes", {"raw": b"\x00"})
    with pytest.raises(ValueError, match="JSON"):
        store.put(("users", "ann"), "nan", {"x": float("nan")})
    assert store.get(("users", "ann"), "bytes") is None


def test_query_search_ranks_by_memoryd_recall(store: MemorydStore) -> None:
    store.put(("users", "ann", "memories"), "tea", {"text": "Ann drinks green tea every morning", "kind": "food"})
    store.put(("users", "ann", "memories"), "city", {"text": "Ann moved to Lisbon", "kind": "place"})
    store.put(("users", "ann", "trips"), "porto", {"text": "Ann visits Porto for the port wine and tea houses", "kind": "place"})
    store.put(("users", "bob", "memories"), "tea", {"text": "Bob hates tea", "kind": "food"})
    store.put(("users", "ann", "memories"), "secret", {"text": "tea tea tea"}, index=False)  # never found by a query

    hits = store.search(("users", "ann"), query="green tea")
    assert [(h.namespace[-1], h.key) for h in hits][0] == ("memories", "tea")
    assert {(h.namespace[-1], h.key) for h in hits} == {("memories", "tea"), ("trips", "porto")}
    assert all(h.score is not None and 0 < h.score <= 1 for h in hits)
    assert [h.key for h in store.search(("users", "ann"), query="tea", filter={"kind": "place"})] == ["porto"]
    assert len(store.search(("users",), query="tea", limit=1)) == 1
    assert len(store.search(("users",), query="tea", offset=1, limit=10)) == 2
    assert store.search(("users", "ann"), query="submarine") == []
    assert "secret" in {i.key for i in store.search(("users", "ann", "memories"))}  # listed without a query


def test_index_fields_choose_what_a_query_finds(sync_client, store: MemorydStore) -> None:
    fields = MemorydStore(sync_client, root=store.root, index={"fields": ["memory", "tags[*]"]})
    fields.put(("m",), "a", {"memory": "likes jazz", "tags": ["music", "evenings"], "note": "saxophone"})
    assert [i.key for i in fields.search(("m",), query="evenings")] == ["a"]
    assert fields.search(("m",), query="saxophone") == []  # not an indexed field
    fields.put(("m",), "b", {"memory": "plays chess", "note": "saxophone"}, index=["note"])  # per put
    assert [i.key for i in fields.search(("m",), query="saxophone")] == ["b"]


def test_a_key_is_one_entry_its_latest_text(sync_client, store: MemorydStore) -> None:
    scope = store.root + "notes"
    store.put(("notes",), "a", {"text": "the blue door"})
    store.put(("notes",), "b", {"text": "the blue door"})  # same text, another key: its own entry
    store.put(("notes",), "c", {"text": "a red roof"})
    assert {i.key for i in store.search(("notes",), query="blue")} == {"a", "b"}
    store.put(("notes",), "c", {"text": "a green roof"})  # update: the key's entry is replaced
    assert store.search(("notes",), query="red") == [] and [i.key for i in store.search(("notes",), query="green")] == ["c"]
    assert sorted(e.key for e in sync_client.iter_entries(scope)) == ["a", "b", "c"]
    store.put(("notes",), "c", {"text": "no longer indexed"}, index=False)  # its entry goes
    assert sorted(e.key for e in sync_client.iter_entries(scope)) == ["a", "b"]
    store.delete(("notes",), "a")
    assert [i.key for i in store.search(("notes",), query="blue")] == ["b"]
    store.delete(("notes",), "b")
    store.delete(("notes",), "c")
    assert list(sync_client.iter_entries(scope)) == []  # nothing of the deleted items is left


async def test_concurrent_puts_of_one_key_leave_one_entry(client: MemoryClient, store: MemorydStore) -> None:
    concurrent = MemorydStore(client, root=store.root)
    scope = store.root + "race"
    await asyncio.gather(*(concurrent.aput(("race",), "k", {"text": f"version{i} of the fact"}) for i in range(10)))
    await asyncio.gather(*(concurrent.aput(("race",), f"d{i}", {"text": f"distinct fact {i}"}) for i in range(40)))
    entries = [e async for e in client.iter_entries(scope)]
    assert len(entries) == 41 and sorted(e.key for e in entries).count("k") == 1
    final = (await concurrent.aget(("race",), "k")).value["text"]
    for i in range(10):  # only the surviving text finds the item
        found = [h.key for h in await concurrent.asearch(("race",), query=f"version{i}")]
        assert found == (["k"] if final == f"version{i} of the fact" else [])
    await asyncio.gather(*(concurrent.adelete(("race",), key) for key in ["k", *(f"d{i}" for i in range(40))]))
    assert [e async for e in client.iter_entries(scope)] == []


async def test_a_burst_of_async_ops_waits_its_turn_before_its_calls(client: MemoryClient, store: MemorydStore) -> None:
    """LangGraph's test_large_batches_async sends thousands of aput/aget/asearch at once: the
    store runs at most _IN_FLIGHT of them at a time, so the rest wait before their first call
    (where no deadline runs), not at the server, where their calls' deadlines would pass."""
    from memoryd_client import langgraph as module

    burst = MemorydStore(client, root=store.root)
    running = peak = 0
    run = client._run

    async def counted(call):
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        try:
            return await run(call)
        finally:
            running -= 1

    client._run = counted  # observes the calls; the server answers them
    try:
        ops = [burst.aput(("burst", str(i % 3)), f"k{i}", {"n": i}, index=False) for i in range(300)]
        ops += [burst.asearch(("burst",), limit=5) for _ in range(100)]
        await asyncio.gather(*ops)
    finally:
        client._run = run
    assert 0 < peak <= module._IN_FLIGHT
    assert len(await burst.asearch(("burst",), limit=1000)) == 300

def test_long_texts_index_their_first_entry_bound(store: MemorydStore) -> None:
    words = " ".join(f"word{i}" for i in range(1500))  # ~12,000 characters; one entry holds 2,000
    store.put(("long",), "doc", {"text": "zeppelin " + words + " blimp"})
    assert [i.key for i in store.search(("long",), query="zeppelin")] == ["doc"]
    assert [i.key for i in store.search(("long",), query="word3")] == ["doc"]
    assert store.search(("long",), query="blimp") == []  # past the first 2,000 characters


def test_a_keyword_only_search_says_so(sync_client, store: MemorydStore) -> None:
    """The test server has no embedder: a query search is keyword-only, and the store warns (once)."""
    store.put(("w",), "k", {"text": "a warning about tea"})
    with pytest.warns(MemorydSearchWarning, match="keyword-only"):
        assert [i.key for i in store.search(("w",), query="tea")] == ["k"]
    # A query no keyword matches warns too: the empty answer is no "nothing similar".
    fresh = MemorydStore(sync_client, root=store.root)
    with pytest.warns(MemorydSearchWarning, match="keyword-only"):
        assert fresh.search(("w",), query="coffee") == []


class LetterEmbeddings(Embeddings):
    """A deterministic embedding for tests: how often each of the letters a-z occurs."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return [float(text.lower().count(chr(ord("a") + i))) for i in range(26)]


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def test_embed_ranks_every_matching_item_by_similarity(sync_client, store: MemorydStore) -> None:
    embeddings = LetterEmbeddings()
    semantic = MemorydStore(sync_client, root=store.root, index={"dims": 26, "embed": embeddings, "fields": ["text"]})
    assert semantic.index_config is not None and semantic.index_config["fields"] == ["text"]
    texts = {"a": "aaaa bbb", "b": "zzz yyy", "c": "abab abab", "d": "the quick brown fox"}
    for key, text in texts.items():
        semantic.put(("docs",), key, {"text": text, "kind": "even" if key in "bd" else "odd"})
    semantic.put(("docs",), "plain", {"text": "aaaa"}, index=False)  # no vector: after the scored ones
    query = "ab"
    expected = sorted(texts, key=lambda k: -_cosine(embeddings.embed_query(texts[k]), embeddings.embed_query(query)))
    found = semantic.search(("docs",), query=query, limit=10)
    assert [i.key for i in found] == [*expected, "plain"]
    assert found[0].score == pytest.approx(_cosine(embeddings.embed_query(texts[expected[0]]), [1.0, 1.0] + [0.0] * 24))
    assert found[-1].score is None
    assert [i.key for i in semantic.search(("docs",), query=query, filter={"kind": "even"})] == [
        k for k in expected if k in "bd"
    ]
    assert [i.key for i in semantic.search(("docs",), query=query, offset=1, limit=2)] == expected[1:3]
    assert list(sync_client.iter_entries(store.root + "docs")) == []  # vectors live in the records
    with pytest.raises(ValueError, match="dims"):
        MemorydStore(sync_client, index={"embed": embeddings})


async def test_embed_async_and_with_a_function(client: MemoryClient, store: MemorydStore) -> None:
    async def embed(texts: list[str]) -> list[list[float]]:
        return LetterEmbeddings().embed_documents(texts)

    semantic = MemorydStore(client, root=store.root, index={"dims": 26, "embed": embed})
    await semantic.aput(("f",), "x", {"text": "xxxx"})
    await semantic.aput(("f",), "y", {"text": "yyyy"})
    assert [i.key for i in await semantic.asearch(("f",), query="yyy xx")] == ["y", "x"]


def test_ttl_refreshes_on_read(sync_client, store: MemorydStore) -> None:
    namespace = store.root + "ttl"
    store.put(("ttl",), "k", {"text": "fresh"}, ttl=10)
    first = sync_client.get_metadata(namespace, "k").data.fields["expires_at"].number_value
    time.sleep(0.05)
    store.get(("ttl",), "k")  # refresh_on_read (LangGraph's default)
    second = sync_client.get_metadata(namespace, "k").data.fields["expires_at"].number_value
    assert second > first
    store.get(("ttl",), "k", refresh_ttl=False)
    store.search(("ttl",), refresh_ttl=False)
    assert sync_client.get_metadata(namespace, "k").data.fields["expires_at"].number_value == second
    time.sleep(0.05)
    store.search(("ttl",))
    assert sync_client.get_metadata(namespace, "k").data.fields["expires_at"].number_value > second
    unrefreshed = MemorydStore(sync_client, root=store.root, ttl={"refresh_on_read": False})
    before = sync_client.get_metadata(namespace, "k").data.fields["expires_at"].number_value
    assert unrefreshed.get(("ttl",), "k").value == {"text": "fresh"}
    assert sync_client.get_metadata(namespace, "k").data.fields["expires_at"].number_value == before


def test_ttl_hides_expired_items(sync_client, store: MemorydStore) -> None:
    store.put(("t",), "gone", {"text": "expired milk"}, ttl=0)  # expires at once
    store.put(("t",), "kept", {"text": "fresh milk"}, ttl=60)
    store.put(("t",), "plain", {"text": "milk forever"})
    assert store.get(("t",), "gone") is None and store.get(("t",), "kept") is not None
    assert {i.key for i in store.search(("t",))} == {"kept", "plain"}
    assert {i.key for i in store.search(("t",), query="milk")} == {"kept", "plain"}
    defaulted = MemorydStore(sync_client, root=store.root, ttl={"default_ttl": 0})
    defaulted.put(("t",), "plain", {"text": "now expiring"})  # default_ttl applies to puts without ttl
    assert defaulted.get(("t",), "plain") is None
    store.put(("t",), "plain", {"text": "milk again"}, ttl=None)  # a put without ttl clears it
    assert store.get(("t",), "plain").value == {"text": "milk again"}


def test_invalid_namespaces_are_refused_before_anything_is_stored(store: MemorydStore) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(("a.b",), "k", {"v": 1})])  # would address ("a", "b")
    with pytest.raises(InvalidNamespaceError):
        store.batch([GetOp((), "k")])
    with pytest.raises(InvalidArgumentError):
        store.put(("x" * 300,), "k", {"v": 1})  # memoryd names: at most 256 characters
    assert store.list_namespaces() == []


async def test_async_methods(sync_client, client: MemoryClient, store: MemorydStore) -> None:
    for only_async in (MemorydStore(client, root=store.root), MemorydStore(sync_client, root=store.root)):
        # a MemoryClient alone; and a SyncMemoryClient alone (abatch runs batch in a thread)
        await only_async.aput(("a", "b"), "k", {"text": "async hello", "n": 1})
        assert (await only_async.aget(("a", "b"), "k")).value == {"text": "async hello", "n": 1}
        assert [i.key for i in await only_async.asearch(("a",), query="hello")] == ["k"]
        assert await only_async.alist_namespaces(prefix=("a",)) == [("a", "b")]
        results = await only_async.abatch([
            GetOp(("a", "b"), "k"),
            PutOp(("a", "c"), "k2", {"text": "second"}),
            SearchOp(("a",), filter={"text": "second"}),
            ListNamespacesOp(max_depth=1),
            PutOp(("a", "c"), "k2", None),
        ])  # fmt: skip
        assert results[0].key == "k" and results[1] is None and [i.key for i in results[2]] == ["k2"]
        assert results[3] == [("a",)] and results[4] is None
        await only_async.adelete(("a", "b"), "k")
        assert await only_async.aget(("a", "b"), "k") is None and await only_async.alist_namespaces() == []
    with pytest.raises(asyncio.InvalidStateError):  # a sync call in the loop's thread, as LangGraph's async stores
        MemorydStore(client).put(("a",), "k", {})
    # From another thread the sync methods work on a MemoryClient alone.
    alone = MemorydStore(client, root=store.root)
    await asyncio.to_thread(alone.put, ("a",), "thread", {"v": 1})
    assert (await asyncio.to_thread(alone.get, ("a",), "thread")).value == {"v": 1}


@pytest.fixture(scope="module")
def small_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemorydServer]:
    """Pages of 3 and scopes of 4 entries: every listing pages, and a namespace fills up."""
    server = MemorydServer(tmp_path_factory.mktemp("langgraph-small"), "--max-page-size", "3", "--entry-scope-capacity", "4")
    server.start()
    yield server
    server.stop()


def test_listings_page_past_the_servers_page_size(small_server: MemorydServer) -> None:
    with SyncMemoryClient(small_server.target) as client:
        store = MemorydStore(client, root=f"lg-{uuid.uuid4().hex[:10]}.")
        namespaces = [("p", f"n{i}") for i in range(4)] + [("p",), ("q",)]
        for namespace in namespaces:
            for key in ("k1", "k2", "k3", "k4"):
                store.put(namespace, key, {"v": key}, index=False)
        assert len(store.search(("p",), limit=100)) == 20 and len(store.search((), limit=100)) == 24
        assert len(store.search(("p",), filter={"v": "k4"}, limit=100)) == 5
        assert sorted(store.list_namespaces(limit=100)) == sorted(namespaces)
        store.put(("p", "n0"), "words", {"text": "needle"})
        store.put(("p", "n3"), "words", {"text": "needle in a haystack"})
        assert {i.namespace for i in store.search(("p",), query="needle")} == {("p", "n0"), ("p", "n3")}


def test_a_full_namespace_refuses_more_indexed_texts(small_server: MemorydServer) -> None:
    with SyncMemoryClient(small_server.target) as client:
        store = MemorydStore(client, root=f"lg-{uuid.uuid4().hex[:10]}.")
        for i in range(4):
            store.put(("full",), f"k{i}", {"text": f"fact number {i}"})
        with pytest.raises(FailedPreconditionError) as refused:
            store.put(("full",), "k4", {"text": "one too many"})
        assert refused.value.reason == "ENTRY_SCOPE_FULL" and store.get(("full",), "k4") is None
        store.put(("full",), "k4", {"text": "unindexed is fine"}, index=False)
        store.delete(("full",), "k0")  # frees its entry
        store.put(("full",), "k5", {"text": "room again"})
        assert [i.key for i in store.search(("full",), query="room")] == ["k5"]


# -- a LangChain 1.x agent (LangGraph underneath) --------------------------------------------
class ScriptedChatModel(FakeMessagesListChatModel):
    """langchain-core's fake chat model, answering with its scripted messages whatever tools it is given."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self


async def test_a_langchain_agent_keeps_long_term_memory_in_the_store(sync_client, client: MemoryClient, store: MemorydStore) -> None:
    @tool
    def remember(fact: str, runtime: ToolRuntime) -> str:
        """Store a fact about the user for later conversations."""
        runtime.store.put(("users", "ann", "memories"), f"fact-{len(fact)}", {"fact": fact})
        return "saved"

    @tool
    async def recall(query: str, runtime: ToolRuntime) -> str:
        """Find what is known about the user."""
        found = await runtime.store.asearch(("users", "ann", "memories"), query=query)
        return "; ".join(item.value["fact"] for item in found)

    model = ScriptedChatModel(responses=[
        AIMessage("", tool_calls=[{"name": "remember", "args": {"fact": "Ann likes green tea"}, "id": "c1"}]),
        AIMessage("Noted."),
        AIMessage("", tool_calls=[{"name": "recall", "args": {"query": "tea"}, "id": "c2"}]),
        AIMessage("You like green tea."),
    ])  # fmt: skip
    agent_store = MemorydStore(sync_client, async_client=client, root=store.root)
    agent = create_agent(model, tools=[remember, recall], store=agent_store)
    agent.invoke({"messages": [("user", "I like green tea")]})  # sync: the store's batch
    answer = await agent.ainvoke({"messages": [("user", "What do I like?")]})  # async: abatch
    tool_results = [m.content for m in answer["messages"] if isinstance(m, ToolMessage)]
    assert tool_results == ["Ann likes green tea"] and answer["messages"][-1].content == "You like green tea."
    assert store.get(("users", "ann", "memories"), "fact-19").value == {"fact": "Ann likes green tea"}
