"""Static bearer tokens: the tokens file (`--tokens-file`) and MEMORYD_TOKENS.

Two formats, each entry a tenant and a token (or the token's SHA-256), optionally the scopes
it carries (every scope when none is given, so files written before scopes existed keep
working) and the end user it is bound to:

    # tenant: token [scope ...] [user=<end user id>]   (commas separate entries in MEMORYD_TOKENS)
    acme: 3f7c1d...                                   # every scope
    acme: 9e2a41...  memory:read                      # read-only
    acme: sha256:9b74c9897bac...  memory:read memory:write user=alice   # only alice's memory

    {"acme": "3f7c1d...",
     "globex": ["tok-a...", {"token": "sha256:9b74...", "scopes": ["memory:read"], "user": "alice"}]}

Only SHA-256 digests are kept (transport/auth.py compares them in constant time). A
malformed entry, or one token given twice with different settings, is a TokenConfigError
whose message never contains a token. `TokensFile` notices a changed file, so tokens rotate
without a restart (app.py re-reads it; SIGHUP re-reads at once).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

import structlog

from memoryd.domain.models import DEFAULT_TENANT
from memoryd.transport.principals import ALL_SCOPES, tenant_problem, user_id_problem

log = structlog.get_logger("memoryd.auth")

MIN_TOKEN_LENGTH = 16
HASH_PREFIX = "sha256:"
USER_PREFIX = "user="


class TokenConfigError(ValueError):
    """The tokens file or MEMORYD_TOKENS is malformed. Messages never contain a token."""


@dataclass(frozen=True, slots=True)
class TokenEntry:
    """What one static token grants."""

    tenant: str
    scopes: frozenset[str] = ALL_SCOPES
    user_id: str | None = None


def digest(token: str) -> bytes:
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
    return digest(secret)


def _entry(tenant: str, scopes: list[str], user: str | None, where: str) -> TokenEntry:
    problem = tenant_problem(tenant)
    if problem:
        raise TokenConfigError(f"{where}: invalid tenant name {str(tenant)[:40]!r}: {problem}")
    unknown = sorted(set(scopes) - ALL_SCOPES)
    if unknown:
        raise TokenConfigError(f"{where}: unknown scope {unknown[0][:40]!r} (scopes: {', '.join(sorted(ALL_SCOPES))})")
    if user is not None and user_id_problem(user):
        raise TokenConfigError(f"{where}: user {user[:40]!r}: {user_id_problem(user)}")
    return TokenEntry(tenant, frozenset(scopes) if scopes else ALL_SCOPES, user)


def _line_entry(number: int, line: str, source: str) -> tuple[str, TokenEntry]:
    where = f"{source}: entry {number}"
    tenant, sep, rest = line.partition(":")
    words = rest.split()
    if not sep or not words:
        raise TokenConfigError(f"{where} is not 'tenant: token [scope ...] [user=<id>]'")
    secret, columns = words[0], words[1:]
    users = [c[len(USER_PREFIX) :] for c in columns if c.startswith(USER_PREFIX)]
    if len(users) > 1:
        raise TokenConfigError(f"{where}: more than one user=")
    scopes = [c for c in columns if not c.startswith(USER_PREFIX)]
    return secret, _entry(tenant.strip(), scopes, users[0] if users else None, where)


def _json_entry(tenant: str, item: object, source: str) -> tuple[str, TokenEntry]:
    where = f"{source}: tenant {tenant[:40]!r}"
    if isinstance(item, str):
        return item, _entry(tenant, [], None, where)
    if not isinstance(item, dict) or not isinstance(item.get("token"), str) or set(item) - {"token", "scopes", "user"}:
        raise TokenConfigError(f'{where}: each token is a string or {{"token": ..., "scopes": [...], "user": ...}}')
    scopes = item.get("scopes", [])
    if isinstance(scopes, str):
        scopes = scopes.split()
    if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
        raise TokenConfigError(f"{where}: scopes are a list of strings")
    user = item.get("user")
    if user is not None and not isinstance(user, str):
        raise TokenConfigError(f"{where}: user is a string")
    return item["token"], _entry(tenant, scopes, user, where)


def parse_tokens(text: str, *, source: str = "tokens") -> list[tuple[bytes, TokenEntry]]:
    """(sha256 digest, entry) pairs from the line or JSON format."""
    text = text.strip()
    if not text:
        return []
    found: list[tuple[str, TokenEntry]] = []
    if text[0] in "{[":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TokenConfigError(f"{source}: invalid JSON at line {exc.lineno}") from None
        if not isinstance(data, dict):
            raise TokenConfigError(f"{source}: JSON must be an object of tenant -> token or [tokens]")
        for tenant, value in data.items():
            items = value if isinstance(value, list) else [value]
            if not items:
                raise TokenConfigError(f"{source}: tenant {tenant[:40]!r} needs a token or a list of them")
            found += [_json_entry(tenant, item, source) for item in items]
    else:
        for number, raw in enumerate(text.replace(",", "\n").splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            if line:
                found.append(_line_entry(number, line, source))
    return [(_stored_digest(entry.tenant, secret), entry) for secret, entry in found]


def load_tokens(tokens_file: str = "", tokens_env: str = "") -> list[tuple[bytes, TokenEntry]]:
    """Entries from the file and the environment variable, together; one token listed twice
    must grant the same both times."""
    entries: list[tuple[bytes, TokenEntry]] = []
    if tokens_file:
        try:
            text = Path(tokens_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise TokenConfigError(f"cannot read tokens file {tokens_file}: {exc.strerror}") from None
        entries += parse_tokens(text, source=tokens_file)
    entries += parse_tokens(tokens_env, source="MEMORYD_TOKENS")
    granted: dict[bytes, TokenEntry] = {}
    for token_digest, entry in entries:
        first = granted.setdefault(token_digest, entry)
        if first != entry:
            if first.tenant != entry.tenant:
                raise TokenConfigError(f"one token is given to two tenants ({first.tenant!r} and {entry.tenant!r})")
            raise TokenConfigError(f"tenant {entry.tenant!r}: one token is listed twice with different scopes or users")
    return entries


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
        out.write("# created by memoryd on first start; add or replace tokens here\n")
        out.write(f"{DEFAULT_TENANT}: {secrets.token_urlsafe(32)}\n")
    log.warning("tokens_file_created", path=tokens_file, tenant=DEFAULT_TENANT)
    return tokens_file


class FileWatch:
    """Tells whether a file changed since the last look, by its stat (a replaced file, as
    Kubernetes swaps mounted secrets, has a new inode; an edited one a new mtime or size)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._seen = self._signature()

    def _signature(self) -> tuple[int, ...] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def changed(self) -> bool:
        now = self._signature()
        if now == self._seen:
            return False
        self._seen = now
        return True


class TokenSource:
    """A deployment's static tokens: the tokens file, re-read when it changes, and MEMORYD_TOKENS."""

    def __init__(self, tokens_file: str = "", tokens_env: str = "") -> None:
        self.tokens_file = tokens_file
        self.tokens_env = tokens_env
        self._watch = FileWatch(tokens_file) if tokens_file else None  # before the first read: no change is missed

    def load(self) -> list[tuple[bytes, TokenEntry]]:
        return load_tokens(self.tokens_file, self.tokens_env)

    def changed(self) -> bool:
        return self._watch is not None and self._watch.changed()
