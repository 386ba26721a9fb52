"""Prefix listings of metadata namespaces (ListMetadata by prefix, ListNamespaces).

Both stores order strings by Unicode code point (SQLite's BINARY collation on UTF-8,
MongoDB's simple collation, Python's str), so every string starting with `prefix` lies in
the half-open range [prefix, upper_bound(prefix)): an index range scan, never a filter.

Distinct namespaces are found by a loose index scan: seek the first namespace above the
last one found, once per namespace, so a page costs page_size index seeks however many
records each namespace holds.
"""

from __future__ import annotations

from collections.abc import Generator

MAX_CODE_POINT = 0x10FFFF


def user_namespaces(user_id: str) -> str:
    """Where an end user's own metadata namespaces start: a token bound to the user reads and
    writes only these (transport/access.py), and ForgetUser removes them. User ids of
    tokens hold no "/", so no user's prefix is another's."""
    return f"users/{user_id}/"


SURROGATES = range(0xD800, 0xE000)  # never in a valid (UTF-8 encodable) string


def upper_bound(prefix: str) -> str | None:
    """The least string above every string that starts with `prefix`; None: no bound."""
    head = prefix
    while head:
        last = ord(head[-1]) + 1
        head = head[:-1]
        if last <= MAX_CODE_POINT:
            return head + chr(SURROGATES.stop if last in SURROGATES else last)
    return None


Seek = tuple[str, bool]  # (bound, inclusive): the first namespace >= bound (> when not inclusive)


def namespace_walk(prefix: str, after: str | None, limit: int) -> Generator[Seek, str | None, list[str]]:
    """The loose index scan of ListNamespaces, without I/O: it yields each seek to make and
    is sent the namespace found (None: none); it returns the page. Stores drive it with
    their own (sync or async) seek."""
    upper = upper_bound(prefix)
    found: list[str] = []
    bound, inclusive = (after, False) if after is not None and after >= prefix else (prefix, True)
    while len(found) < limit:
        namespace = yield bound, inclusive
        if namespace is None or (upper is not None and namespace >= upper):
            break
        found.append(namespace)
        bound, inclusive = namespace, False
    return found
