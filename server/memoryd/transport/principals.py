"""What a credential grants: a tenant, scopes and, for a token bound to one end user, that
user. The rules for their names live here once, for static tokens and JWT claims alike."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memoryd.domain.identifiers import id_problem
from memoryd.v1 import access_pb2

MAX_TENANT_LENGTH = 256
MAX_USER_ID_LENGTH = 256


def scope_name(value: int) -> str:
    """The OAuth2 name of a memoryd.v1.Scope value: SCOPE_MEMORY_READ -> "memory:read"."""
    return access_pb2.Scope.Name(value).removeprefix("SCOPE_").lower().replace("_", ":", 1)


ALL_SCOPES = frozenset(scope_name(value) for value in access_pb2.Scope.values() if value)


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling: the tenant every record is keyed by, the scopes its token carries and,
    when the token is bound to one end user, that user's id. `credential` identifies the token
    for revocation (transport/auth.py): a static token's digest, or a JWT's expiry."""

    tenant: str
    scopes: frozenset[str] = ALL_SCOPES
    user_id: str | None = None
    credential: Any = None


def _printable(value: str) -> bool:
    return all(32 < ord(ch) != 127 for ch in value)


def tenant_problem(tenant: Any) -> str | None:
    """Tenant names (static tokens and the JWT tenant claim): the one rule for identifiers
    (domain/identifiers.py), 1-256 characters, without spaces."""
    if not isinstance(tenant, str) or not tenant or len(tenant) > MAX_TENANT_LENGTH or not _printable(tenant):
        return f"a tenant is 1-{MAX_TENANT_LENGTH} printable characters without spaces"
    return id_problem(tenant, MAX_TENANT_LENGTH)


def user_id_problem(user_id: Any) -> str | None:
    """End user ids (static tokens' user=, the JWT user claim): the one rule for identifiers
    (domain/identifiers.py), 1-256 characters without spaces or "/" (the user's metadata
    namespaces are "users/<id>/...", which must never be a prefix of another user's)."""
    if not isinstance(user_id, str) or not user_id or len(user_id) > MAX_USER_ID_LENGTH:
        return f"an end user id is 1-{MAX_USER_ID_LENGTH} characters"
    if not _printable(user_id) or "/" in user_id:
        return "an end user id is printable characters without spaces or '/'"
    return id_problem(user_id, MAX_USER_ID_LENGTH)


def known_scopes(names: Iterable[str]) -> frozenset[str]:
    """The memoryd scopes among `names` (a JWT may carry others, such as "openid")."""
    return frozenset(name for name in names if name in ALL_SCOPES)
