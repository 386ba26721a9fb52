"""JWT bearer tokens from an OIDC issuer, verified against its keys (JWKS) with PyJWT.

Configured by `--oidc-issuer` (the `iss` every token must carry; its discovery document,
`<issuer>/.well-known/openid-configuration`, names the JWKS) and `--jwt-audience`, or a
static `--jwks-file` for air-gapped deployments (then nothing is fetched). A token is
accepted when, in this order:

1. its header's `alg` is one of ALGORITHMS (asymmetric only: "none" and the HMAC algorithms
   are refused before any key is looked at, so an HS256 token "signed" with the issuer's
   public key never verifies) -> else TOKEN_ALGORITHM_REJECTED;
2. its `kid` names a signing key of the JWKS -> else TOKEN_KEY_UNKNOWN; the key's own `alg`,
   if it has one, is the header's, and a key without `alg` admits only ALGORITHMS (checked
   again here: "none" must never reach PyJWT, whose none algorithm cannot load a key)
   -> else TOKEN_ALGORITHM_REJECTED;
3. its signature verifies with that key -> else TOKEN_SIGNATURE_INVALID (a tampered payload);
4. `exp`, `iss` and `aud` are present -> else TOKEN_CLAIM_INVALID; `exp` and `nbf` hold within
   `--jwt-leeway-seconds` -> else TOKEN_EXPIRED / TOKEN_NOT_YET_VALID; `iss` is the issuer and
   `aud` names the audience -> else TOKEN_ISSUER_MISMATCH / TOKEN_AUDIENCE_MISMATCH;
5. the tenant claim (`--jwt-tenant-claim`) is a tenant name -> else TOKEN_CLAIM_INVALID; the
   user claim (`--jwt-user-claim`), when configured and present, is an end user id -> else
   TOKEN_CLAIM_INVALID, and binds the token to that user. Both follow the one rule for
   identifiers (domain/identifiers.py): what a request's id field may not hold (a zero-width,
   bidi or C1 character, a lone combining mark, a filler, ...) no claim may either. Scopes
   are the memory:* names in `scope` (space-separated) and `scp` (a list).

Keys are cached and kept fresh (docs/SECURITY.md, "Key rotation"):
- periodic: `run` re-reads them every `--jwks-refresh-seconds` (default 60) whether or not a
  token asks, so a key removed at the issuer is refused, and the Watch streams opened with
  its tokens end (UNAUTHENTICATED, TOKEN_REVOKED), at most that long plus one read after
  the removal; a read that fails is retried sooner (from `--jwks-min-interval-seconds`,
  doubling up to the refresh interval);
- on demand: a token whose `kid` is unknown re-reads them at once, at most once per
  `--jwks-min-interval-seconds` (default 5; concurrent calls share one read, so a flood of
  tokens with made-up kids costs one read per interval, never one per token): a key the
  issuer added is accepted within seconds.
Reads are asynchronous (httpx) and bounded by `--jwks-timeout-seconds`. A read that fails, or
answers something that is not a usable key set (not JSON, no `keys` list, no entry that is
an asymmetric public signing key PyJWT can load), never replaces the keys there were: it is
logged (`jwks_read_failed`, `jwks_unusable`) and the cached keys keep serving. Entries that
are not usable keys beside usable ones are left out (`jwks_entries_ignored`). With no keys
at all a JWT answers UNAVAILABLE (JWKS_UNAVAILABLE), which clients retry.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import jwt
import structlog

from memoryd import shutdown
from memoryd.domain.errors import MemorydError, StorageUnavailable, Unauthenticated
from memoryd.transport.principals import Caller, known_scopes, tenant_problem, user_id_problem

log = structlog.get_logger("memoryd.auth")

ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"})
REQUIRED_CLAIMS = ("exp", "iss", "aud")
KEY_TYPES = frozenset({"RSA", "EC", "OKP"})  # asymmetric: an "oct" (HMAC) key is never a verification key
DISCOVERY_PATH = "/.well-known/openid-configuration"


class JwksUnavailable(StorageUnavailable):
    """The issuer's keys could not be read; the call may be retried (UNAVAILABLE)."""

    reason = "JWKS_UNAVAILABLE"


class OidcConfigError(ValueError):
    """The OIDC settings do not fit together (the server does not start)."""


@dataclass(frozen=True, slots=True)
class JwtSettings:
    issuer: str
    audience: str
    jwks_file: str = ""
    tenant_claim: str = "tenant"
    user_claim: str = ""
    leeway_seconds: float = 30.0
    refresh_seconds: float = 60.0  # the keys are re-read this often, asked or not
    min_interval_seconds: float = 5.0  # ... and on an unknown kid, at most once per this
    timeout_seconds: float = 5.0

    def __post_init__(self) -> None:
        if not self.issuer or not self.audience:
            raise OidcConfigError("JWT bearer tokens need both --oidc-issuer and --jwt-audience")
        if not self.jwks_file:
            check_url(self.issuer, "--oidc-issuer")


def check_url(url: str, what: str) -> None:
    """Keys come over https; plain http only from this machine (a test's issuer)."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and parts.hostname:
        host = parts.hostname
        try:
            if host == "localhost" or ipaddress.ip_address(host).is_loopback:
                return
        except ValueError:
            pass
    raise OidcConfigError(f"{what} must be an https:// URL (http:// only on loopback): {url[:200]}")


def _failed(*, message: str, reason: str, **metadata: str) -> Unauthenticated:
    return Unauthenticated(message, reason=reason, metadata=metadata or None)


Revoked = Callable[[MemorydError], None]


@dataclass(frozen=True, slots=True)
class VerificationKey:
    """A key a token verified with: PyJWT's key, and the fingerprint of the JWK it came from
    (what a stream opened with the token is revoked by when the issuer removes the key)."""

    jwk: jwt.PyJWK
    fingerprint: str


def fingerprint(jwk: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(jwk, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _key_problem(entry: Any) -> str | None:
    """Why one JWKS entry is not a usable signing key (None: it is)."""
    if not isinstance(entry, dict):
        return "not an object"
    if entry.get("use", "sig") != "sig":
        return "not a signing key"
    kty, alg = entry.get("kty"), entry.get("alg")
    if not isinstance(kty, str) or kty not in KEY_TYPES:
        return "not an asymmetric key type"
    if "kid" in entry and not isinstance(entry["kid"], str):
        return "kid is not a string"
    if "alg" in entry and (not isinstance(alg, str) or alg not in ALGORITHMS):
        return "alg is not an accepted algorithm"
    try:
        loaded = jwt.PyJWK(entry, algorithm=alg).key
    except (jwt.PyJWTError, ValueError, TypeError, KeyError, AttributeError):
        return "not a loadable key"
    if not hasattr(loaded, "verify") or hasattr(loaded, "private_bytes"):
        return "not a public key"
    return None


def usable_keys(document: Any) -> tuple[dict[str | None, dict[str, Any]], dict[str, int]]:
    """The usable signing keys of a JWKS document by kid (the first of a repeated kid), and
    how many entries were left out, by why."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        return {}, {"the document has no keys list": 1}
    keys: dict[str | None, dict[str, Any]] = {}
    ignored: dict[str, int] = {}
    for entry in document["keys"]:
        problem = _key_problem(entry)
        if problem is None and entry.get("kid") in keys:
            problem = "a repeated kid"
        if problem is not None:
            ignored[problem] = ignored.get(problem, 0) + 1
        else:
            keys[entry.get("kid")] = entry
    return keys, ignored


class JwksKeys:
    """The issuer's signing keys, cached: re-read periodically (`run`) and on an unknown kid
    (rate limited); a read that is not a usable key set never replaces them."""

    def __init__(self, settings: JwtSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self._clock = clock
        self._keys: dict[str | None, dict[str, Any]] = {}
        self._fingerprints: dict[str | None, str] = {}
        self._parsed: dict[tuple[str | None, str], jwt.PyJWK] = {}
        self._loaded_at: float | None = None  # monotonic time of the last successful read
        self._attempted_at = float("-inf")  # ... and of the last attempt
        self._inflight: asyncio.Task | None = None
        self._revocations: dict[str, set[Revoked]] = {}  # key fingerprint -> streams verified with it
        self.fetches = 0  # attempts so far (the rate limit's test reads it)

    @property
    def loaded(self) -> bool:
        return self._loaded_at is not None

    async def refresh(self) -> bool:
        """Re-read the keys (one read at a time: callers that arrive meanwhile share it)."""
        if self._inflight is None:
            self._attempted_at = self._clock()
            self._inflight = asyncio.get_running_loop().create_task(self._load(), name="jwks-refresh")
            self._inflight.add_done_callback(self._done)
        return await asyncio.shield(self._inflight)

    def _done(self, task: asyncio.Task) -> None:
        self._inflight = None
        if not task.cancelled():
            task.exception()  # retrieved: _load logs its own failures

    async def run(self) -> None:
        """Keep the keys fresh (the server's background task): read them now, then whenever
        the last good read is `refresh_seconds` old; after a failed or unusable read, again
        after `min_interval_seconds`, doubling up to `refresh_seconds`."""
        settings = self.settings
        retry = settings.min_interval_seconds
        while True:
            shutdown.raise_if_cancelled()
            if self._loaded_at is None or self._clock() - self._loaded_at >= settings.refresh_seconds:
                try:
                    read = await self.refresh()
                except Exception:  # a bug, not the issuer: keep the task (and the keys) alive
                    log.exception("jwks_refresh_crashed")
                    read = False
                if not read:
                    await asyncio.sleep(retry)
                    retry = min(retry * 2, settings.refresh_seconds)
                    continue
                retry = settings.min_interval_seconds
            assert self._loaded_at is not None
            await asyncio.sleep(max(self._loaded_at + settings.refresh_seconds - self._clock(), 0.01))

    async def _load(self) -> bool:
        self.fetches += 1
        source = self.settings.jwks_file or self.settings.issuer
        try:
            async with asyncio.timeout(self.settings.timeout_seconds):
                document = await self._read()
        except (OSError, ValueError, KeyError, TypeError, TimeoutError, httpx.HTTPError, OidcConfigError) as error:
            log.warning("jwks_read_failed", error_type=type(error).__name__, detail=str(error)[:200], source=source)
            return False
        keys, ignored = usable_keys(document)
        if not keys:  # `{"keys": []}`, `{"keys": "garbage"}`, only bad entries: keep what there was
            log.error("jwks_unusable", source=source, ignored=ignored, kept_keys=len(self._keys))
            return False
        if ignored:
            log.warning("jwks_entries_ignored", source=source, ignored=ignored, keys=len(keys))
        fingerprints = {kid: fingerprint(jwk) for kid, jwk in keys.items()}
        removed = set(self._fingerprints.values()) - set(fingerprints.values())
        self._keys, self._fingerprints, self._parsed = keys, fingerprints, {}
        self._loaded_at = self._clock()
        ended = self._revoke(removed)
        log.info("jwks_loaded", keys=len(keys), removed=len(removed), streams_ended=ended, source=source)
        return True

    def _revoke(self, removed: set[str]) -> int:
        ended = 0
        for key in removed:
            for callback in self._revocations.pop(key, ()):
                callback(Unauthenticated("the issuer removed the token's signing key", reason="TOKEN_REVOKED"))
                ended += 1
        return ended

    def on_removed(self, key: str, callback: Revoked) -> Callable[[], None]:
        """Call `callback(error)` once when the issuer's keys no longer hold the key of this
        fingerprint; returns the function that cancels it."""
        if key not in self._fingerprints.values():  # removed while the token was being verified
            callback(Unauthenticated("the issuer removed the token's signing key", reason="TOKEN_REVOKED"))
            return lambda: None
        self._revocations.setdefault(key, set()).add(callback)
        return lambda: self._revocations.get(key, set()).discard(callback)

    async def _read(self) -> Any:
        if self.settings.jwks_file:
            return json.loads(await asyncio.to_thread(Path(self.settings.jwks_file).read_text, encoding="utf-8"))
        async with httpx.AsyncClient(timeout=self.settings.timeout_seconds, follow_redirects=False) as client:
            discovery = (await client.get(self.settings.issuer.rstrip("/") + DISCOVERY_PATH)).raise_for_status().json()
            if not isinstance(discovery, dict) or discovery.get("issuer") != self.settings.issuer:
                raise ValueError("the discovery document names another issuer")
            jwks_uri = discovery["jwks_uri"]
            if not isinstance(jwks_uri, str):
                raise ValueError("the discovery document's jwks_uri is not a URL")
            check_url(jwks_uri, "jwks_uri")
            return (await client.get(jwks_uri)).raise_for_status().json()

    def _may_fetch(self) -> bool:
        """The rate limit of reads a token asks for: at most one per `min_interval_seconds`,
        however many tokens ask (a read in flight is joined)."""
        return self._inflight is not None or self._clock() - self._attempted_at >= self.settings.min_interval_seconds

    def _stale(self) -> bool:
        """The keys are older than the refresh interval, no read is in flight and one may start."""
        if self._loaded_at is None or self._inflight is not None:
            return False
        return self._clock() - self._loaded_at > self.settings.refresh_seconds and self._may_fetch()

    def _find(self, kid: str | None) -> dict[str, Any] | None:
        if kid is not None:
            return self._keys.get(kid)
        return next(iter(self._keys.values())) if len(self._keys) == 1 else None  # no kid: only an unambiguous key

    async def key(self, kid: str | None, alg: str) -> VerificationKey:
        if self._loaded_at is None:
            if self._may_fetch():
                await self.refresh()
            if not self.loaded:
                raise JwksUnavailable("the issuer's keys (JWKS) could not be read; retry later")
        elif self._stale():
            # `run` is late (or not running): read in the background, the cached keys serve meanwhile
            asyncio.get_running_loop().create_task(self.refresh(), name="jwks-refresh-old")
        jwk = self._find(kid)
        if jwk is None and self._may_fetch():  # a key the issuer added since (rotation)
            await self.refresh()
            jwk = self._find(kid)
        if jwk is None:
            raise _failed(reason="TOKEN_KEY_UNKNOWN", message="the token's kid names none of the issuer's signing keys")
        # The key's own alg when it names one; an accepted one otherwise (issuers may publish
        # keys without alg: then "none" or HS256 must still never reach PyJWT).
        if alg != jwk.get("alg", alg) or alg not in ALGORITHMS:
            raise _failed(reason="TOKEN_ALGORITHM_REJECTED", message="the token's alg is not its key's")
        parsed = self._parsed.get((kid, alg))
        if parsed is None:
            try:
                parsed = self._parsed[(kid, alg)] = jwt.PyJWK(jwk, algorithm=alg)
            except jwt.PyJWTError:
                raise _failed(
                    reason="TOKEN_ALGORITHM_REJECTED", message="the token's alg does not fit its key"
                ) from None
        return VerificationKey(parsed, self._fingerprints[kid if kid is not None else jwk.get("kid")])


_ERRORS: tuple[tuple[type[Exception], dict[str, str]], ...] = (  # PyJWT's error -> the refusal; first match wins
    (jwt.ExpiredSignatureError, dict(reason="TOKEN_EXPIRED", message="the token has expired")),
    (jwt.ImmatureSignatureError, dict(reason="TOKEN_NOT_YET_VALID", message="the token is not valid yet (nbf)")),
    (jwt.InvalidIssuedAtError, dict(reason="TOKEN_NOT_YET_VALID", message="the token was issued in the future (iat)")),
    (jwt.InvalidAudienceError, dict(reason="TOKEN_AUDIENCE_MISMATCH", message="the token is for another audience")),
    (jwt.InvalidIssuerError, dict(reason="TOKEN_ISSUER_MISMATCH", message="the token is from another issuer")),
    (
        jwt.InvalidSignatureError,
        dict(reason="TOKEN_SIGNATURE_INVALID", message="the token's signature does not verify"),
    ),
    (jwt.InvalidAlgorithmError, dict(reason="TOKEN_ALGORITHM_REJECTED", message="the token's alg is not accepted")),
)


class JwtVerifier:
    """Bearer JWT -> Caller."""

    def __init__(self, settings: JwtSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.keys = JwksKeys(settings, clock)

    @staticmethod
    def looks_like_jwt(token: str) -> bool:
        """A JWS in compact form: three base64url parts (static tokens are never matched as JWTs)."""
        return token.count(".") == 2

    async def verify(self, token: str) -> Caller:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise _failed(reason="TOKEN_INVALID", message="the bearer token is not a well-formed JWT") from None
        alg = header.get("alg")
        if alg not in ALGORITHMS:
            raise _failed(
                reason="TOKEN_ALGORITHM_REJECTED",
                message=f"JWTs must be signed with one of {', '.join(sorted(ALGORITHMS))}",
            )
        kid = header.get("kid")
        key = await self.keys.key(kid if isinstance(kid, str) else None, alg)
        settings = self.settings
        try:
            claims = jwt.decode(
                token,
                key.jwk.key,
                algorithms=[alg],
                audience=settings.audience,
                issuer=settings.issuer,
                leeway=settings.leeway_seconds,
                options={"require": list(REQUIRED_CLAIMS)},
            )
        except jwt.MissingRequiredClaimError as error:
            raise _failed(
                reason="TOKEN_CLAIM_INVALID", message=f"the token lacks the {error.claim!r} claim", claim=error.claim
            ) from None
        except jwt.PyJWTError as error:
            for kind, refusal in _ERRORS:
                if isinstance(error, kind):
                    raise _failed(**refusal) from None
            raise _failed(reason="TOKEN_INVALID", message="the bearer token is not a valid JWT") from None
        return self._caller(claims, key.fingerprint)

    def _caller(self, claims: dict[str, Any], key: str) -> Caller:
        settings = self.settings
        tenant = claims.get(settings.tenant_claim)
        if problem := tenant_problem(tenant):  # the one rule for identifiers (domain/identifiers.py)
            raise _failed(
                reason="TOKEN_CLAIM_INVALID",
                message=f"the token's {settings.tenant_claim!r} claim must name a tenant: {problem}",
                claim=settings.tenant_claim,
            )
        user = claims.get(settings.user_claim) if settings.user_claim else None
        if user is not None and (problem := user_id_problem(user)):
            raise _failed(
                reason="TOKEN_CLAIM_INVALID",
                message=f"the token's {settings.user_claim!r} claim is not an end user id: {problem}",
                claim=settings.user_claim,
            )
        expires = float(claims["exp"]) + settings.leeway_seconds
        assert isinstance(tenant, str)  # tenant_problem refuses anything else
        return Caller(tenant, known_scopes(_scope_names(claims)), user, credential=("jwt", (expires, key)))


def _scope_names(claims: dict[str, Any]) -> list[str]:
    """OAuth2's `scope` (space-separated) and `scp` (a list, or a string in some issuers)."""
    names: list[str] = []
    for claim in ("scope", "scp"):
        value = claims.get(claim)
        if isinstance(value, str):
            names += value.split()
        elif isinstance(value, list):
            names += [item for item in value if isinstance(item, str)]
    return names
