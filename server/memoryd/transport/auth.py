"""Who is calling: a bearer token gives the Caller (tenant, scopes, perhaps one end user).

Static tokens (transport/tokens.py: the tokens file and MEMORYD_TOKENS) are looked up by
SHA-256 digest: a presented token is hashed and compared with every digest using
`hmac.compare_digest` (no early exit), so timing reveals neither the token nor which tenant
holds it. A token that is none of them and has a JWT's shape is verified as a JWT when an
OIDC issuer is configured (transport/oidc.py). Without any of these every caller is the
default tenant with every scope; the server then refuses to listen beyond loopback unless
forced (`check_bind`), so an unauthenticated deployment is reachable only from the same
machine. mTLS (transport/tls.py) is an additional gate on the connection.

Rotation: `replace_tokens` swaps the static table while serving (app.py re-reads the tokens
file when it changes, and on SIGHUP). The next call of a removed token is refused; a stream
it opened ends at once with UNAUTHENTICATED, TOKEN_REVOKED (`on_revoke`), as a stream opened
with a JWT does at the token's expiry (TOKEN_EXPIRED) or when the issuer removes the key it
was verified with (TOKEN_REVOKED, at the next read of the keys).
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import time
from collections.abc import Callable, Iterable
from typing import Any

import structlog

from memoryd import addresses
from memoryd.domain.errors import MemorydError, Unauthenticated
from memoryd.domain.models import DEFAULT_TENANT
from memoryd.transport.oidc import JwtVerifier
from memoryd.transport.principals import Caller
from memoryd.transport.tokens import TokenConfigError, TokenEntry, TokenSource, digest

log = structlog.get_logger("memoryd.auth")

Revoked = Callable[[MemorydError], None]


class InsecureBindRefused(ValueError):
    """A non-loopback address was asked for without any authentication configured."""


class Authenticator:
    """Maps a call's `authorization: Bearer <token>` metadata to its Caller."""

    def __init__(
        self,
        tokens: Iterable[tuple[bytes, TokenEntry]] = (),
        jwt: JwtVerifier | None = None,
        source: TokenSource | None = None,
    ) -> None:
        self.jwt = jwt
        self.source = source  # where `reload` reads the static tokens again
        self._table: dict[bytes, TokenEntry] = dict(tokens)
        self._streams: dict[bytes, set[Revoked]] = {}  # static digest -> revocation callbacks

    def reload(self, *, force: bool = False) -> bool:
        """Re-read the static tokens when their file changed (`force`: whatever it did, SIGHUP).
        A file that no longer parses changes nothing (logged at error; the next change is
        read again). Returns whether the tokens were replaced."""
        if self.source is None or not (self.source.changed() or force):
            return False
        try:
            tokens = self.source.load()
        except TokenConfigError as error:
            log.error("tokens_reload_failed", error=str(error))
            return False
        ended = self.replace_tokens(tokens)
        log.info("tokens_reloaded", tokens=len(tokens), tenants=len(self.tenants), streams_ended=ended)
        return True

    @property
    def enabled(self) -> bool:
        return bool(self._table) or self.jwt is not None

    @property
    def tenants(self) -> set[str]:
        """The tenants of the static tokens (a JWT may name any)."""
        return {entry.tenant for entry in self._table.values()}

    def replace_tokens(self, tokens: Iterable[tuple[bytes, TokenEntry]]) -> int:
        """Serve from now on with these static tokens; streams of a token removed or changed
        end with TOKEN_REVOKED. Returns how many streams were ended."""
        before, self._table = self._table, dict(tokens)
        ended = 0
        for token_digest in [d for d in self._streams if self._table.get(d) != before.get(d)]:
            for callback in self._streams.pop(token_digest):
                callback(Unauthenticated("the bearer token was revoked", reason="TOKEN_REVOKED"))
                ended += 1
        return ended

    async def authenticate(self, metadata) -> Caller:
        if not self.enabled:
            return Caller(DEFAULT_TENANT)
        token = _bearer(metadata)
        if token is None:
            missing = "missing bearer token (metadata 'authorization: Bearer <token>')"
            raise Unauthenticated(missing, reason="TOKEN_MISSING")
        caller = self.static_caller(token)
        if caller is not None:
            return caller
        if self.jwt is not None and self.jwt.looks_like_jwt(token):
            return await self.jwt.verify(token)
        raise Unauthenticated("unknown bearer token", reason="TOKEN_INVALID")

    def static_caller(self, token: str) -> Caller | None:
        presented = digest(token)
        found = None
        for token_digest, entry in self._table.items():  # every entry is compared: no early exit
            if hmac.compare_digest(presented, token_digest):
                found = (token_digest, entry)
        if found is None:
            return None
        token_digest, entry = found
        return Caller(entry.tenant, entry.scopes, entry.user_id, credential=("static", token_digest))

    def on_revoke(self, caller: Caller, callback: Revoked) -> Callable[[], None]:
        """Call `callback(error)` once when the caller's token stops being valid: a static
        token removed or changed (replace_tokens), a JWT at its expiry (plus the leeway) or
        when the issuer's keys no longer hold the key it was verified with (oidc.py).
        Returns the function that cancels it."""
        credential: tuple[str, Any] | None = caller.credential
        if credential is None:
            return lambda: None
        kind, value = credential
        if kind == "static":
            token_digest: bytes = value
            self._streams.setdefault(token_digest, set()).add(callback)
            return lambda: self._streams.get(token_digest, set()).discard(callback)
        if kind == "jwt" and self.jwt is not None:
            expires, key = value
            ended = False
            handle: asyncio.TimerHandle | None = None
            forget_key: Callable[[], None] | None = None

            def cancel() -> None:
                if handle is not None:
                    handle.cancel()
                if forget_key is not None:
                    forget_key()

            def end(error: MemorydError) -> None:  # once: at expiry or when the key goes, whichever is first
                nonlocal ended
                if not ended:
                    ended = True
                    cancel()
                    callback(error)

            expired = Unauthenticated("the bearer token has expired", reason="TOKEN_EXPIRED")
            handle = asyncio.get_running_loop().call_later(max(expires - time.time(), 0.0), end, expired)
            forget_key = self.jwt.keys.on_removed(key, end)
            return cancel
        return lambda: None


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
            "(--tokens-file or MEMORYD_TOKENS), JWTs (--oidc-issuer) or mTLS (--tls-client-ca), listen on 127.0.0.1, "
            "or pass --allow-insecure-remote to serve every caller as the default tenant"
        )
    if warn:
        detail = "no authentication; every caller is the default tenant"
        log.warning("insecure_remote_listen", listen=listen, detail=detail)
