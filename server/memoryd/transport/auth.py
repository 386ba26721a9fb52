"""Who is calling: bearer tokens map to tenants.

Tokens come from a file (`--tokens-file`) and/or the environment (`MEMORYD_TOKENS`), in
either of two formats:

    # one entry per line (or comma-separated in the environment variable)
    acme: 3f7c1d...                # tenant: token
    globex: sha256:9b74c9897bac... # tenant: sha256 of the token, hex (no plain token on disk)

    {"acme": "3f7c1d...", "globex": ["tok-a...", "sha256:9b74..."]}   # JSON

Only SHA-256 digests are kept in memory. A presented token is hashed and compared with
every digest using `hmac.compare_digest` (no early exit), so timing reveals neither the
token nor which tenant holds it.

Without tokens every caller is the default tenant; the server then refuses to listen
beyond loopback unless forced (`check_bind`), so an unauthenticated deployment is
reachable only from the same machine. mTLS (transport/tls.py) is an additional gate on
the connection; tenants still come from tokens.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

import grpc
import structlog

from memoryd import addresses
from memoryd.domain.errors import Unauthenticated
from memoryd.domain.models import DEFAULT_TENANT

log = structlog.get_logger("memoryd.auth")

MIN_TOKEN_LENGTH = 16
MAX_TENANT_LENGTH = 256
HASH_PREFIX = "sha256:"


class TokenConfigError(ValueError):
    """The tokens file or MEMORYD_TOKENS is malformed. Messages never contain a token."""


class InsecureBindRefused(ValueError):
    """A non-loopback address was asked for without any authentication configured."""


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def _stored_digest(tenant: str, secret: str) -> bytes:
    if secret.startswith(HASH_PREFIX):
        hex_digest = secret[len(HASH_PREFIX) :]
        try:
            raw = bytes.fromhex(hex_digest)
        except ValueError:
            raw = b""
        if len(raw) != hashlib.sha256().digest_size:
            raise TokenConfigError(f"tenant {tenant!r}: sha256: entries need 64 hex digits")
        return raw
    if len(secret) < MIN_TOKEN_LENGTH:
        raise TokenConfigError(f"tenant {tenant!r}: tokens must be at least {MIN_TOKEN_LENGTH} characters")
    if any(ch.isspace() or ch in ",#" for ch in secret):
        raise TokenConfigError(f"tenant {tenant!r}: tokens must not contain whitespace, commas or '#'")
    return _digest(secret)


def _check_tenant(tenant: str) -> None:
    if not tenant or len(tenant) > MAX_TENANT_LENGTH or any(ord(ch) < 33 or ord(ch) == 127 for ch in tenant):
        raise TokenConfigError(f"invalid tenant name {tenant[:40]!r}: 1-{MAX_TENANT_LENGTH} printable characters")


def parse_tokens(text: str, *, source: str = "tokens") -> list[tuple[str, bytes]]:
    """(tenant, sha256 digest) pairs from the line or JSON format."""
    text = text.strip()
    if not text:
        return []
    pairs: list[tuple[str, str]] = []
    if text[0] in "{[":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TokenConfigError(f"{source}: invalid JSON at line {exc.lineno}") from None
        if not isinstance(data, dict):
            raise TokenConfigError(f"{source}: JSON must be an object of tenant -> token or [tokens]")
        for tenant, value in data.items():
            secrets = value if isinstance(value, list) else [value]
            if not secrets or not all(isinstance(s, str) for s in secrets):
                raise TokenConfigError(f"{source}: tenant {tenant!r} needs a token string or a list of them")
            pairs.extend((tenant, s) for s in secrets)
    else:
        for number, raw in enumerate(text.replace(",", "\n").splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            tenant, sep, secret = line.partition(":")
            if not sep or not secret.strip():
                raise TokenConfigError(f"{source}: entry {number} is not 'tenant: token'")
            pairs.append((tenant.strip(), secret.strip()))
    result = []
    for tenant, secret in pairs:
        _check_tenant(tenant)
        result.append((tenant, _stored_digest(tenant, secret)))
    return result


def prepare_tokens_file(tokens_file: str, tokens_env: str, *, create: bool) -> str:
    """The tokens file to read. With `create` (`--tokens-file-create`, the container image's
    default) a missing file is created, mode 0600, with one random token for the tenant
    `default`, unless MEMORYD_TOKENS already names tokens (then no file is read). The token
    is never logged: read it from the file."""
    if not create or not tokens_file or Path(tokens_file).exists():
        return tokens_file
    if tokens_env.strip():
        return ""
    path = Path(tokens_file)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process created it first
        return tokens_file
    except OSError as exc:
        raise TokenConfigError(f"cannot create tokens file {tokens_file}: {exc.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(f"# created by memoryd on first start; add or replace tokens here\n{DEFAULT_TENANT}: {secrets.token_urlsafe(32)}\n")
    log.warning("tokens_file_created", path=tokens_file, tenant=DEFAULT_TENANT)
    return tokens_file


def load_tokens(tokens_file: str = "", tokens_env: str = "") -> list[tuple[str, bytes]]:
    """Entries from the file and the environment variable, together."""
    entries: list[tuple[str, bytes]] = []
    if tokens_file:
        try:
            text = Path(tokens_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise TokenConfigError(f"cannot read tokens file {tokens_file}: {exc.strerror}") from None
        entries += parse_tokens(text, source=tokens_file)
    entries += parse_tokens(tokens_env, source="MEMORYD_TOKENS")
    owners: dict[bytes, str] = {}
    for tenant, digest in entries:
        if owners.setdefault(digest, tenant) != tenant:
            raise TokenConfigError(f"one token is given to two tenants ({owners[digest]!r} and {tenant!r})")
    return entries


class Authenticator:
    """Maps a call's `authorization: Bearer <token>` metadata to its tenant."""

    def __init__(self, tokens: Iterable[tuple[str, bytes]] = ()) -> None:
        # Deduplicated (digest, tenant) pairs; a tenant may hold several tokens (rotation).
        self._tokens = tuple(dict((digest, tenant) for tenant, digest in tokens).items())

    @property
    def enabled(self) -> bool:
        return bool(self._tokens)

    @property
    def tenants(self) -> set[str]:
        return {tenant for _, tenant in self._tokens}

    def tenant(self, context: grpc.aio.ServicerContext) -> str:
        if not self._tokens:
            return DEFAULT_TENANT
        token = _bearer(context.invocation_metadata() or ())
        if token is None:
            raise Unauthenticated("missing bearer token (metadata 'authorization: Bearer <token>')", reason="TOKEN_MISSING")
        return self.tenant_for(token)

    def tenant_for(self, token: str) -> str:
        presented = _digest(token)
        found = None
        for digest, tenant in self._tokens:  # every entry is compared: no early exit
            if hmac.compare_digest(presented, digest):
                found = tenant
        if found is None:
            raise Unauthenticated("unknown bearer token", reason="TOKEN_INVALID")
        return found


def _bearer(metadata) -> str | None:
    for key, value in metadata:
        if key != "authorization":
            continue
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
        return None
    return None


# -- safe defaults -------------------------------------------------------------


def is_loopback(listen: str) -> bool:
    host = addresses.split(listen)[0]
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # "", wildcard or a host name: assume it is reachable from elsewhere


def check_bind(listen: str, *, authenticated: bool, allow_insecure_remote: bool, warn: bool = True) -> None:
    """Refuse a non-loopback listen address without authentication, unless forced (then warn)."""
    if authenticated or is_loopback(listen):
        return
    if not allow_insecure_remote:
        raise InsecureBindRefused(
            f"refusing to listen on {listen} without authentication: configure tokens "
            "(--tokens-file or MEMORYD_TOKENS) or mTLS (--tls-client-ca), listen on 127.0.0.1, "
            "or pass --allow-insecure-remote to serve every caller as the default tenant"
        )
    if warn:
        log.warning("insecure_remote_listen", listen=listen, detail="no authentication; every caller is the default tenant")
