"""Request limits, configurable through Config; the transport validates against them."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

# JSON objects (google.protobuf.Struct: message metadata, segment data, metadata records,
# summary metadata) nest at most this many objects/arrays deep. Fixed, not configurable:
# protobuf decoders stop at 100 nested messages and each JSON level costs up to 3
# (Struct, map entry, Value), while responses wrap a record in a few messages more
# (a 33-deep record could be saved but not read back by Python clients).
MAX_JSON_DEPTH = 20


# Qdrant's own bound on a vector's dimensions: the most max_vector_dimension may be.
QDRANT_MAX_DIMENSION = 65_536


def setting(
    default, help_text: str, *, minimum: float | None = None, maximum: float | None = None, secret: bool = False
):
    """A configurable field: its help text, its bounds (memoryd.config refuses values outside
    them at startup), and whether it is a secret (read from the environment only, never shown)."""
    metadata = {"help": help_text, "minimum": minimum, "maximum": maximum, "secret": secret}
    return field(default=default, repr=not secret, metadata=metadata)


def check_bounds(settings) -> None:
    """ValueError naming the first field of a settings dataclass outside its bounds."""
    for f in fields(settings):
        value, low, high = getattr(settings, f.name), f.metadata.get("minimum"), f.metadata.get("maximum")
        if low is not None and value < low:
            raise ValueError(f"{f.name} must be at least {low:g}, got {value}")
        if high is not None and value > high:
            raise ValueError(f"{f.name} must be at most {high:g}, got {value}")


def _limit(default: int, help_text: str, *, minimum: int = 1, maximum: int | None = None):
    return setting(default, help_text, minimum=minimum, maximum=maximum)


@dataclass(frozen=True, slots=True)
class Limits:
    max_id_length: int = _limit(256, "characters in session ids, namespaces, keys, idempotency keys, roles, kinds")
    max_content_bytes: int = _limit(1 << 20, "UTF-8 bytes of one message's content, and of its reasoning_content")
    max_message_bytes: int = _limit(4 << 20, "one serialized message, segments and metadata included")
    max_metadata_bytes: int = _limit(256 << 10, "one metadata record")
    max_batch_messages: int = _limit(1000, "messages per SaveMessages / ReplaceHistory")
    max_delete_items: int = _limit(10_000, "timestamps or ids per delete call")
    delete_batch: int = _limit(500, "timestamps or ids per storage transaction of a delete")
    max_page_size: int = _limit(1000, "page sizes and GetHistory limit (larger values are clamped)")
    max_recent_limit: int = _limit(1000, "GetRecentAcrossSessions limit (larger values are clamped)")
    max_filter_items: int = _limit(100, "items in one filter list (roles, kinds, session ids, event types)")
    max_text_bytes: int = _limit(64 << 10, "UpdateMessageContent old/new text")
    max_request_bytes: int = _limit(16 << 20, "gRPC receive limit; larger requests get RESOURCE_EXHAUSTED")
    max_vector_dimension: int = _limit(
        QDRANT_MAX_DIMENSION,
        "numbers per vector or embedding (at most Qdrant's own limit)",
        maximum=QDRANT_MAX_DIMENSION,
    )
    max_response_bytes: int = _limit(
        3 << 20,
        "stored bytes of messages/records in one response: pages end early with next_page_token, "
        "GetHistory/GetRecentAcrossSessions keep the newest and set truncated; one item always fits",
    )
    max_inflight_request_bytes: int = _limit(
        16 << 20, "request bytes being processed at once; further requests wait for room (bounds write bursts)"
    )
    max_user_sessions: int = _limit(
        10_000,
        "sessions of one end user a user-bound token's reads across sessions search (more: RESOURCE_EXHAUSTED)",
        maximum=30_000,  # the user's session ids travel as query parameters (SQLite allows 32766)
    )

    def __post_init__(self) -> None:
        check_bounds(self)
