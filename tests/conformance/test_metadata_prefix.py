"""ListMetadata by namespace prefix and ListNamespaces, on every adapter."""

from __future__ import annotations

import pytest

from memoryd.domain import prefixes
from memoryd.domain.errors import InvalidArgument

# Neighbours of the prefix "users/a" on both sides of its range, in code point order.
NAMESPACES = [
    "users",
    "users.",
    "users/a",
    "users/a/",
    "users/a/memories",
    "users/a/prefs",
    "users/a\U0010ffff",
    "users/ab",
    "users/b/memories",
    "users0",
    "\U0001f600-emoji",
]


async def page_all(fetch, page_size: int) -> list:
    items, token = [], ""
    while True:
        page, token = await fetch(page_size, token)
        items += page
        if not token:
            return items


@pytest.fixture
async def records(memory, tenant):
    for namespace in NAMESPACES:
        for key in ("k2", "k1"):
            await memory.save_metadata(tenant, namespace, key, {"ns": namespace, "key": key})
    return sorted((namespace, key) for namespace in NAMESPACES for key in ("k1", "k2"))


@pytest.mark.parametrize("prefix", ["", "users", "users/", "users/a", "users/a/", "users/c", "\U0001f600", "zzz"])
@pytest.mark.parametrize("page_size", [0, 1, 3])
async def test_list_metadata_by_prefix_pages_in_namespace_key_order(memory, tenant, records, prefix, page_size):
    got = await page_all(lambda size, token: memory.list_metadata_by_prefix(tenant, prefix, size, token), page_size)
    assert [(e.namespace, e.key) for e in got] == [r for r in records if r[0].startswith(prefix)]
    assert all(e.data == {"ns": e.namespace, "key": e.key} and e.update_time > 0 for e in got)


@pytest.mark.parametrize("prefix", ["", "users", "users/a", "users/a/", "users/b", "nothing"])
@pytest.mark.parametrize("page_size", [0, 1, 2])
async def test_list_namespaces_is_distinct_ordered_and_paged(memory, tenant, records, prefix, page_size):
    got = await page_all(lambda size, token: memory.list_namespaces(tenant, prefix, size, token), page_size)
    assert got == sorted(n for n in NAMESPACES if n.startswith(prefix))


async def test_namespaces_leave_with_their_last_record(memory, tenant):
    await memory.save_metadata(tenant, "a/x", "k", {})
    await memory.save_metadata(tenant, "a/y", "k", {})
    assert (await memory.list_namespaces(tenant, "a/", 0, ""))[0] == ["a/x", "a/y"]
    await memory.delete_metadata(tenant, "a/x", "k")
    assert (await memory.list_namespaces(tenant, "a/", 0, ""))[0] == ["a/y"]


async def test_a_namespace_with_many_records_is_one_entry(memory, tenant):
    for i in range(150):  # more than a page of records in one namespace
        await memory.save_metadata(tenant, "big", f"k{i:03}", {})
    await memory.save_metadata(tenant, "bigger", "k", {})
    assert (await memory.list_namespaces(tenant, "big", 2, "")) == (["big", "bigger"], "")


async def test_prefix_tokens_belong_to_their_prefix(memory, tenant, records):
    _, token = await memory.list_metadata_by_prefix(tenant, "users", 1, "")
    with pytest.raises(InvalidArgument):
        await memory.list_metadata_by_prefix(tenant, "users/a", 1, token)
    _, token = await memory.list_namespaces(tenant, "users", 1, "")
    with pytest.raises(InvalidArgument):
        await memory.list_namespaces(tenant, "", 1, token)


def test_upper_bound_is_the_least_string_above_the_prefix_range():
    assert prefixes.upper_bound("") is None
    assert prefixes.upper_bound("ab") == "ac"
    assert prefixes.upper_bound("a\U0010ffff") == "b"
    assert prefixes.upper_bound("\U0010ffff\U0010ffff") is None
    assert prefixes.upper_bound("a\ud7ff") == "a\ue000"  # surrogates are skipped
    for prefix in NAMESPACES:
        upper = prefixes.upper_bound(prefix)
        assert all((n < upper) == n.startswith(prefix) for n in NAMESPACES if n >= prefix)
