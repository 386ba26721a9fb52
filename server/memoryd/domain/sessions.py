"""Session attributes: who a session belongs to (user_id, agent_id) and its labels.

The rules live here, once, and both stores apply them inside the transaction that reads
and writes the session row (so two writers never both win):
- writes merge: an empty user_id/agent_id leaves the stored one, labels given set their
  keys, `remove_labels` deletes keys, other labels stay;
- the owner is set once: a different non-empty user_id/agent_id than the stored one is
  refused (SESSION_OWNER_MISMATCH), so a session never moves to another user or agent;
- a session carries at most `max_labels` labels (SESSION_LABELS_FULL);
- a *claim* (a write by a token bound to one end user, which names that user as owner)
  takes only a session that is the user's already or that holds no messages and carries no
  attributes; any other answers USER_ACCESS_DENIED and stores nothing;
- a session is *listed* (ListSessions, GetSession) while it holds messages or carries
  attributes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from memoryd.domain.errors import FailedPrecondition, PermissionDenied

# Separates a label's key from its value in the stores' label index entries. Validation
# refuses control characters in keys and values, so a pair encodes unambiguously.
LABEL_PAIR_SEPARATOR = "\x1f"


@dataclass(frozen=True, slots=True)
class SessionAttributes:
    user_id: str = ""
    agent_id: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.user_id or self.agent_id or self.labels)

    def to_dict(self) -> dict:
        """The event payload (proto SessionAttributes in JSON field names)."""
        return {"user_id": self.user_id, "agent_id": self.agent_id, "labels": dict(self.labels)}

    def label_pairs(self) -> list[str]:
        return label_pairs(self.labels)


def label_pairs(labels: Mapping[str, str]) -> list[str]:
    """Index entries of labels: one string per (key, value), sorted."""
    return sorted(f"{key}{LABEL_PAIR_SEPARATOR}{value}" for key, value in labels.items())


@dataclass(frozen=True, slots=True)
class SessionUpdate:
    """What a write asks of a session's attributes (merged by `apply`)."""

    attributes: SessionAttributes = SessionAttributes()
    remove_labels: Sequence[str] = ()
    max_labels: int = 100
    claim: bool = False  # attributes.user_id is the caller's end user (see the module docstring)

    def __bool__(self) -> bool:
        return bool(self.attributes or self.remove_labels)


@dataclass(frozen=True, slots=True)
class SessionFilter:
    """ListSessions filters; empty fields filter nothing, labels must all match."""

    user_id: str = ""
    agent_id: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)

    def scope(self) -> tuple:
        """What a page token is bound to."""
        return (self.user_id, self.agent_id, sorted(self.labels.items()))


def _owner(field_name: str, current: str, wanted: str, session_id: str) -> str:
    if not wanted or wanted == current:
        return current
    if current:
        raise FailedPrecondition(
            f"session {session_id!r} belongs to another {field_name}; its owner is set once",
            reason="SESSION_OWNER_MISMATCH",
            metadata={"session_id": session_id, "field": field_name},
        )
    return wanted


def apply(session_id: str, current: SessionAttributes, update: SessionUpdate) -> SessionAttributes:
    """The attributes after `update`, or FailedPrecondition (nothing may then be stored)."""
    wanted = update.attributes
    labels = {**current.labels, **wanted.labels}
    for key in update.remove_labels:
        labels.pop(key, None)
    if len(labels) > update.max_labels and len(labels) > len(current.labels):
        raise FailedPrecondition(
            f"session {session_id!r} would carry {len(labels)} labels; at most {update.max_labels}",
            reason="SESSION_LABELS_FULL",
            metadata={"session_id": session_id, "labels": str(len(labels)), "capacity": str(update.max_labels)},
        )
    return SessionAttributes(
        user_id=_owner("user_id", current.user_id, wanted.user_id, session_id),
        agent_id=_owner("agent_id", current.agent_id, wanted.agent_id, session_id),
        labels=dict(sorted(labels.items())),
    )


def listed(message_count: int, attributes: SessionAttributes) -> bool:
    """Whether ListSessions lists the session and GetSession finds it."""
    return message_count > 0 or bool(attributes)


def check_claim(session_id: str, message_count: int, current: SessionAttributes, update: SessionUpdate) -> None:
    """A claim goes ahead on the user's own session or on one no one holds (not listed)."""
    if update.claim and current.user_id != update.attributes.user_id and listed(message_count, current):
        raise PermissionDenied(
            f"session {session_id!r} is not this token's end user's",
            reason="USER_ACCESS_DENIED",
            metadata={"field": "session_id"},
        )
