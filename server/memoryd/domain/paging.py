"""Opaque page tokens (AIP-158), authenticated so that cursors cannot be forged.

A token is base64url(position JSON) + "." + base64url(HMAC-SHA256 tag, 16 bytes). The tag
covers the tenant, the query the token came from (its `scope`) and the position, so a
token edited by hand, cut short, issued for another query or tenant, or by another
deployment is refused as INVALID_ARGUMENT naming `page_token`, before its position is
read. Decoding never raises anything else.

The key is per deployment, not per process: replicas behind a load balancer accept each
other's tokens and tokens survive restarts. It is created once, at random, in the
database (Store.server_secret, idempotent across replicas), unless the environment-only
setting MEMORYD_PAGE_TOKEN_SECRET overrides it. Changing that setting invalidates the
tokens in flight (clients restart their listing).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

from memoryd.domain.errors import FieldViolation, InvalidArgument

T = TypeVar("T")


class _Stored(Protocol):
    @property
    def stored_bytes(self) -> int: ...


R = TypeVar("R", bound=_Stored)  # a row read from a store: a Message, a MetadataEntry

SECRET_NAME = "page-token-key"
TAG_BYTES = 16
# Tokens are small (a few ids and numbers); anything much longer is not one of ours.
MAX_TOKEN_CHARS = 2048


def _invalid() -> InvalidArgument:
    return InvalidArgument(FieldViolation("page_token", "is not a page token this server issued for this query"))


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _canonical(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode()


class PageTokens:
    """Encodes and checks page tokens with the deployment's key, loaded once on first use."""

    def __init__(self, load_key: Callable[[], Awaitable[str]]) -> None:
        self._load_key = load_key
        self._key: bytes | None = None

    @classmethod
    def with_key(cls, key: str) -> PageTokens:
        async def fixed() -> str:
            return key

        return cls(fixed)

    @classmethod
    def ephemeral(cls) -> PageTokens:
        """A random key of this object only: for domain objects built without a server (tests)."""
        return cls.with_key(new_secret())

    @classmethod
    def for_store(cls, store, override: str = "") -> PageTokens:
        """The deployment's key: `override` when set, else the one stored in the database."""
        if override:
            return cls.with_key(override)
        return cls(lambda: store.server_secret(SECRET_NAME, new_secret()))

    async def _mac(self, tenant: str, scope: tuple[Any, ...], body: bytes) -> bytes:
        if self._key is None:
            self._key = hashlib.sha256((await self._load_key()).encode()).digest()
        signed = _canonical([tenant, list(scope)]) + b"\n" + body
        return hmac.new(self._key, signed, hashlib.sha256).digest()[:TAG_BYTES]

    async def encode(self, tenant: str, scope: tuple[Any, ...], position: dict[str, Any]) -> str:
        body = _canonical(position)
        return f"{_b64(body)}.{_b64(await self._mac(tenant, scope, body))}"

    async def decode(self, tenant: str, scope: tuple[Any, ...], token: str) -> dict[str, Any] | None:
        """The position a token resumes from; None for the first page (no token)."""
        if not token:
            return None
        body_text, dot, tag_text = token.partition(".")
        if not dot or len(token) > MAX_TOKEN_CHARS:
            raise _invalid()
        try:
            body, tag = _unb64(body_text), _unb64(tag_text)
        except (binascii.Error, ValueError):
            raise _invalid() from None
        if _b64(body) != body_text or _b64(tag) != tag_text:  # one spelling per token: no padding-bit variants
            raise _invalid()
        if not hmac.compare_digest(tag, await self._mac(tenant, scope, body)):
            raise _invalid()
        position = json.loads(body)  # we wrote it: authenticated JSON of a dict
        if not isinstance(position, dict):
            raise _invalid()
        return position


# -- byte-bounded pages --------------------------------------------------------------
class ReadBudget:
    """What a store may still read for one response: it stops after the row that uses it up
    (that row is read, so the caller learns that more rows exist)."""

    def __init__(self, max_bytes: int | None) -> None:
        self.left = max_bytes

    def spend(self, size: int) -> bool:
        """Count a row of `size` bytes; True when reading must stop."""
        if self.left is None:
            return False
        self.left -= size
        return self.left < 0


def read_within(items: Iterable[T], max_bytes: int | None, size_of: Callable[[T], int]) -> list[T]:
    """`items` (built lazily, one row at a time) up to the one that uses up a ReadBudget of max_bytes."""
    budget = ReadBudget(max_bytes)
    taken: list[T] = []
    for item in items:
        taken.append(item)
        if budget.spend(size_of(item)):
            break
    return taken


def within(rows: Sequence[R], max_bytes: int) -> int:
    """How many leading `rows` have stored_bytes adding up to at most max_bytes (maybe 0)."""
    total = 0
    for count, row in enumerate(rows):
        total += row.stored_bytes
        if total > max_bytes:
            return count
    return len(rows)


def fit(rows: Sequence[R], limit: int, max_bytes: int | None) -> tuple[list[R], bool]:
    """The page of `rows` (read in page order with a ReadBudget of max_bytes): at most
    `limit` rows whose `stored_bytes` add up to at most max_bytes, but always the first
    one, so that paging progresses; and whether more rows follow it."""
    page: list[R] = []
    total = 0
    for row in rows:
        size = row.stored_bytes if max_bytes is not None else 0
        if len(page) == limit or (page and max_bytes is not None and total + size > max_bytes):
            return page, True
        page.append(row)
        total += size
    # A single row over the bound: the store stopped after it, so more may follow.
    return page, max_bytes is not None and total > max_bytes
