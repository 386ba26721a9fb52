"""Who may make a call: the scope each RPC needs, and how far a token bound to one end user reaches.

The contract is the source of truth: every RPC carries `option (memoryd.v1.access)`
(proto/memoryd/v1/access.proto) with its scope, its user access and the request fields that
name what it touches. `access_table` reads them from the served descriptors and refuses a
method without one, so nothing is ever served unclassified (an RPC added to the contract
without its option stops the server from starting); docs/SECURITY.md's table of scopes is
`markdown_table()` of the same table, and a test keeps the two equal.

`Gate` applies it to every call, over gRPC and HTTP alike (transport/rpc.py):
1. `admit`: the bearer token (transport/auth.py) gives the Caller; the RPC's scope must be
   among its scopes, or PERMISSION_DENIED with reason INSUFFICIENT_SCOPE;
2. `confine`, for a caller bound to one end user: every session, entry scope or namespace
   the request names must be that user's (USER_ACCESS_DENIED); RPCs closed to such callers
   are refused whatever they name;
3. reads across sessions (USER_ACCESS_OWN_SESSIONS) are narrowed by their servicers, inside
   the storage or index query: `user_sessions` lists the user's sessions for them, and a
   user-bound Watch delivers only events stamped with the user (domain/watch.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor as pb_descriptor
from google.protobuf.descriptor import FieldDescriptor, MethodDescriptor, ServiceDescriptor

from memoryd.domain import prefixes
from memoryd.domain.errors import PermissionDenied, ResourceExhausted
from memoryd.domain.limits import Limits
from memoryd.domain.sessions import SessionFilter, may_reach
from memoryd.domain.store import Store
from memoryd.transport.auth import Authenticator
from memoryd.transport.principals import Caller, scope_name
from memoryd.transport.validation import name_problem
from memoryd.v1 import access_pb2

UserAccess = access_pb2.UserAccess
# Where the servicer, not the Gate, does the narrowing; and where the Gate needs no fields.
_FIELDLESS = (access_pb2.USER_ACCESS_OWN_SESSIONS, access_pb2.USER_ACCESS_DENIED)
_SESSION_KINDS = (access_pb2.USER_ACCESS_SESSION, access_pb2.USER_ACCESS_NEW_SESSION)
USER_SESSIONS_PAGE = 1000


def user_access_name(value: int) -> str:
    return UserAccess.Name(value).removeprefix("USER_ACCESS_")


def namespace_prefix(user_id: str) -> str:
    """A user-bound token's metadata namespaces start with this (user ids hold no "/")."""
    return prefixes.user_namespaces(user_id)


class UnclassifiedMethod(ValueError):
    """A served RPC lacks its access option, or the option does not fit its request."""


@dataclass(frozen=True, slots=True)
class MethodAccess:
    """One RPC's row of the access table."""

    method: str  # full name, memoryd.v1.Service.Method
    scope: str  # "memory:read" ...
    user_access: int  # memoryd.v1.UserAccess
    user_fields: tuple[str, ...]

    @property
    def reads(self) -> bool:
        return self.scope == scope_name(access_pb2.SCOPE_MEMORY_READ)


def _field_path(message: pb_descriptor.Descriptor, path: str) -> FieldDescriptor:
    """The string field a dotted path ends at; UnclassifiedMethod when it does not."""
    field: FieldDescriptor | None = None
    for part in path.split("."):
        if field is not None:
            if field.message_type is None:
                raise UnclassifiedMethod(f"{path}: {field.name} is not a message")
            message = field.message_type
        field = message.fields_by_name.get(part)
        if field is None:
            raise UnclassifiedMethod(f"{path}: {message.full_name} has no field {part!r}")
    assert field is not None
    if field.type != FieldDescriptor.TYPE_STRING:
        raise UnclassifiedMethod(f"{path}: not a string field")
    return field


# The (memoryd.v1.access) method option. protoc's stubs type an extension as a plain
# FieldDescriptor; protobuf's stubs take it as an extension descriptor of MethodOptions.
ACCESS_OPTION: Any = access_pb2.access


def method_access(method: MethodDescriptor) -> MethodAccess:
    options = method.GetOptions()
    if not options.HasExtension(ACCESS_OPTION):
        raise UnclassifiedMethod(
            f"{method.full_name} has no (memoryd.v1.access) option: give it a scope and a user access"
        )
    option: access_pb2.Access = options.Extensions[ACCESS_OPTION]
    if not option.scope or not option.user_access:
        raise UnclassifiedMethod(f"{method.full_name}: its (memoryd.v1.access) needs a scope and a user_access")
    fields = tuple(option.user_fields)
    if bool(fields) == (option.user_access in _FIELDLESS):
        raise UnclassifiedMethod(
            f"{method.full_name}: user_fields are needed exactly when the user access names fields"
        )
    for path in fields:
        _field_path(method.input_type, path)
    return MethodAccess(method.full_name, scope_name(option.scope), option.user_access, fields)


def access_table(services: Iterable[ServiceDescriptor]) -> dict[str, MethodAccess]:
    """Full method name -> its access, for every method of `services`; UnclassifiedMethod
    (the server does not start) when one has no access option."""
    return {method.full_name: method_access(method) for service in services for method in service.methods}


def markdown_table(table: dict[str, MethodAccess]) -> str:
    """docs/SECURITY.md's table of scopes (scripts/access-table prints it; a test keeps the doc in step)."""
    rows = ["| RPC | scope | a user-bound token | fields it must own |", "|---|---|---|---|"]
    for access in table.values():
        service, _, name = access.method.rpartition(".")
        fields = ", ".join(f"`{f}`" for f in access.user_fields) or "-"
        method = f"{service.rpartition('.')[2]}.{name}"
        rows.append(f"| {method} | `{access.scope}` | {user_access_name(access.user_access)} | {fields} |")
    return "\n".join(rows)


def field_values(message, path: str) -> list[str]:
    """The values a dotted path names in `message` that are set: a non-empty string, or any
    string with presence that is present; a repeated field along the way gives one per element."""
    head, _, rest = path.partition(".")
    field = message.DESCRIPTOR.fields_by_name[head]
    repeated = field.is_repeated
    if rest:
        children = getattr(message, head) if repeated else ([getattr(message, head)] if message.HasField(head) else [])
        return [value for child in children for value in field_values(child, rest)]
    if repeated:
        return [value for value in getattr(message, head) if value]
    value = getattr(message, head)
    if field.has_presence:
        return [value] if message.HasField(head) else []
    return [value] if value else []


def _denied(message: str, field: str | None = None) -> PermissionDenied:
    return PermissionDenied(message, reason="USER_ACCESS_DENIED", metadata={"field": field} if field else None)


def claimant(caller: Caller, field: str, requested_user: str) -> str | None:
    """Who a write that may create its session claims it for: a user-bound caller's end user,
    who must be the owner the request asks for, if it asks for one (None: not a claim)."""
    user = caller.user_id
    if user is not None and requested_user not in ("", user):
        raise _denied("a token bound to an end user may give sessions to that user only", field)
    return user


class Gate:
    """Admits calls (authentication and scope) and confines user-bound callers; the object
    every servicer holds as `auth`."""

    def __init__(
        self,
        authenticator: Authenticator,
        store: Store,
        limits: Limits,
        table: dict[str, MethodAccess],
        *,
        user_entry_scope: str = "{user}",
    ) -> None:
        self.authenticator = authenticator
        self.store = store
        self.limits = limits
        self.table = table
        self.user_entry_scope = user_entry_scope

    async def admit(self, context, method: str) -> Caller:
        """The caller of `method` (its full name), if its token carries the method's scope."""
        caller = await self.authenticator.authenticate(context.invocation_metadata() or ())
        needed = self.table[method].scope
        if needed not in caller.scopes:
            raise PermissionDenied(
                f"this call needs the scope {needed}, which the token does not carry",
                reason="INSUFFICIENT_SCOPE",
                metadata={"required_scope": needed},
            )
        return caller

    def entry_scope(self, user_id: str) -> str:
        return self.user_entry_scope.replace("{user}", user_id)

    async def confine(self, caller: Caller, method: str, request) -> None:
        """Refuse a user-bound caller's request that names anything not the user's."""
        user = caller.user_id
        if user is None:
            return
        access = self.table[method]
        kind = access.user_access
        if kind == access_pb2.USER_ACCESS_OWN_SESSIONS:
            return  # the servicer narrows its query (user_sessions, the Watch filter)
        if kind == access_pb2.USER_ACCESS_DENIED:
            raise _denied(f"{access.method} acts on the whole tenant; tokens bound to an end user may not call it")
        named = [(path, value) for path in access.user_fields for value in field_values(request, path)]
        if not named:
            raise _denied(
                f"a token bound to an end user must name its own {' or '.join(access.user_fields)}",
                access.user_fields[0],
            )
        checked: set[str] = set()
        for path, value in named:
            if value in checked:
                continue
            checked.add(value)
            if kind in _SESSION_KINDS:
                # A name validation refuses is left to it: no storage read for it.
                if name_problem(value, self.limits.max_id_length) is None and not await self._reaches_session(
                    caller, value, access
                ):
                    raise _denied(f"session {value!r} is not this token's end user's", path)
            elif kind == access_pb2.USER_ACCESS_ENTRY_SCOPE:
                if value != self.entry_scope(user):
                    scope = self.entry_scope(user)
                    raise _denied(f"a token bound to an end user keeps entries only in the scope {scope!r}", path)
            elif not value.startswith(namespace_prefix(user)):  # USER_ACCESS_NAMESPACE
                prefix = namespace_prefix(user)
                raise _denied(f"a token bound to an end user keeps metadata only under {prefix!r}", path)

    async def _reaches_session(self, caller: Caller, session_id: str, access: MethodAccess) -> bool:
        """sessions.may_reach: the user's own session (its owner, kept through every emptying);
        for a read, one no one has written (it reads as empty); for a USER_ACCESS_NEW_SESSION
        write, one without an owner (the store takes it for the user in the write's
        transaction, or refuses: sessions.check_claim). Never the tenant's or another user's,
        whatever it still holds."""
        assert caller.user_id is not None
        info = await self.store.get_session(caller.tenant, session_id)
        return may_reach(
            info.owner if info is not None else None,
            info is not None,
            caller.user_id,
            creates=access.user_access == access_pb2.USER_ACCESS_NEW_SESSION,
            reads=access.reads,
        )

    async def user_sessions(self, caller: Caller) -> tuple[str, ...] | None:
        """The sessions a user-bound caller's reads across sessions may see (from the sessions
        index, by owner), at most max_user_sessions of them; None for any other caller."""
        if caller.user_id is None:
            return None
        ids: list[str] = []
        after = None
        while True:
            page = await self.store.list_sessions(
                caller.tenant, after, USER_SESSIONS_PAGE, SessionFilter(user_id=caller.user_id)
            )
            ids += [info.session_id for info in page]
            if len(ids) > self.limits.max_user_sessions:
                raise ResourceExhausted(
                    f"the token's end user owns more than {self.limits.max_user_sessions} sessions, more than reads "
                    "across sessions search (max_user_sessions); use a token not bound to the user",
                    metadata={"max_user_sessions": str(self.limits.max_user_sessions)},
                )
            if len(page) < USER_SESSIONS_PAGE:
                return tuple(ids)
            after = page[-1].session_id

    def on_revoke(self, caller: Caller, callback):
        """Call `callback(error)` when the caller's token stops being valid (removed from the
        tokens file, or a JWT's expiry); returns a function that cancels it."""
        return self.authenticator.on_revoke(caller, callback)
