"""Image downgrade on persist (docs/CONTEXT.md), enabled by `downgrade_images`.

Stored copies of image segments keep a `[image <hash>]` marker instead of the image:
- inline `data:` URIs can be megabytes of base64 and would bloat every row;
- remote http(s) image URLs (chat platforms' temporary links) are dead after a restart.

Only the stored message changes; the caller keeps its own copy for the current turn.
The hash is stable: the first 16 hex digits of SHA-256 over the image bytes for a
base64 `data:` URI (so the same image gets the same marker however it is labelled), and
over the URI text otherwise. Downgrading is idempotent (a marker is not a URI).

What is replaced: in a segment of type "image" (any case; also "img", "photo",
"picture", "sticker"), every string value of `data` that is a `data:` URI or an
http(s) URL; in any other segment, string values that are `data:image/...` URIs.
The segment gains `data.image_hash` (the hash of the first replaced value).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Sequence
from typing import Any

from memoryd.domain.models import Message

IMAGE_TYPES = frozenset({"image", "img", "photo", "picture", "sticker"})
HASH_DIGITS = 16


def image_hash(uri: str) -> str:
    payload = uri.encode("utf-8")
    if uri[:5].lower() == "data:":
        header, _, body = uri.partition(",")
        if header.lower().endswith(";base64"):
            try:
                payload = base64.b64decode("".join(body.split()), validate=True)
            except (binascii.Error, ValueError):
                pass  # not valid base64: hash the text
    return hashlib.sha256(payload).hexdigest()[:HASH_DIGITS]


def marker(uri: str) -> str:
    return f"[image {image_hash(uri)}]"


def _is_data_uri(value: str) -> bool:
    return value[:5].lower() == "data:"


def _is_remote(value: str) -> bool:
    head = value[:8].lower()
    return head.startswith("http://") or head.startswith("https://")


def downgrade_segment(segment: dict[str, Any]) -> dict[str, Any]:
    """The segment with image payloads replaced by markers (a new dict when anything changed)."""
    data = segment.get("data")
    if not isinstance(data, dict):
        return segment
    is_image = str(segment.get("type", "")).lower() in IMAGE_TYPES
    changed: dict[str, Any] = {}
    first_hash = None
    for key, value in data.items():
        if not isinstance(value, str):
            continue
        if (is_image and (_is_data_uri(value) or _is_remote(value))) or value[:11].lower() == "data:image/":
            digest = image_hash(value)
            changed[key] = f"[image {digest}]"
            first_hash = first_hash or digest
    if not changed:
        return segment
    return {**segment, "data": {**data, **changed, "image_hash": first_hash}}


def downgrade_message(msg: Message) -> Message:
    """Replace image payloads in the message's segments, in place; returns the message."""
    if msg.segments:
        msg.segments = [downgrade_segment(s) for s in msg.segments]
    return msg


def downgrade_messages(messages: Sequence[Message]) -> list[Message]:
    return [downgrade_message(m) for m in messages]
