"""Prefix listings of metadata namespaces (ListMetadata by prefix, ListNamespaces).

Both stores order strings by Unicode code point (SQLite's BINARY collation on UTF-8,
MongoDB's simple collation, Python's str), so every string starting with `prefix` lies in
the half-open range [prefix, upper_bound(prefix)): an index range scan, never a filter.

Distinct namespaces are found by a loose index scan: seek the first namespace above the
last one found, once per namespace, so a page costs page_size index seeks however many
records each namespace holds.
"""

from __future__ import annotations

MAX_CODE_POINT = 0x10FFFF
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


def walk_start(prefix: str, after: str | None) -> tuple[str, bool]:
    """Where a listing resumes: (bound, inclusive). After a page, strictly past its last item."""
    if after is not None and after >= prefix:
        return after, False
    return prefix, True


def in_range(value: str, upper: str | None) -> bool:
    return upper is None or value < upper
