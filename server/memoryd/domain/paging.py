"""Opaque page tokens (AIP-158): base64url JSON bound to the query they came from."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

from memoryd.domain.errors import FieldViolation, InvalidArgument


def _fingerprint(scope: tuple[Any, ...]) -> str:
    return hashlib.blake2s(json.dumps(scope, separators=(",", ":")).encode(), digest_size=6).hexdigest()


def encode(scope: tuple[Any, ...], position: dict[str, Any]) -> str:
    raw = json.dumps({"q": _fingerprint(scope), "p": position}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(token: str, scope: tuple[Any, ...]) -> dict[str, Any] | None:
    """The position a token resumes from; None for the first page.

    A token that is malformed or was issued for a different query is rejected, so a
    client never silently pages through the wrong result set.
    """
    if not token:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if data["q"] != _fingerprint(scope) or not isinstance(data["p"], dict):
            raise ValueError("token belongs to another query")
        return data["p"]
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise InvalidArgument(FieldViolation("page_token", f"invalid page token: {exc}")) from None
