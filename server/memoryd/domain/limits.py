"""Request limits, configurable through Config; the transport validates against them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    max_id_length: int = 256  # session ids, namespaces, keys, idempotency keys, roles, kinds
    max_content_bytes: int = 1 << 20  # content + reasoning_content of one message (UTF-8)
    max_message_bytes: int = 4 << 20  # one serialized message, segments and metadata included
    max_metadata_bytes: int = 256 << 10  # one metadata record's JSON
    max_batch_messages: int = 1000  # SaveMessages / ReplaceHistory
    max_delete_items: int = 10_000  # timestamps or ids per delete call
    delete_batch: int = 500  # timestamps or ids per storage transaction
    max_page_size: int = 1000
    max_recent_limit: int = 1000  # GetRecentAcrossSessions clamp
    max_filter_items: int = 100  # roles, kinds, exclude lists, watch filters
    max_text_bytes: int = 64 << 10  # UpdateMessageContent old/new text
    max_request_bytes: int = 16 << 20  # gRPC receive limit
    max_vector_dimension: int = 65_536  # numbers per vector or embedding (Qdrant's own limit is 65536)
