"""Image downgrade on persist (docs/CONTEXT.md): markers instead of data: URIs and image URLs."""

from __future__ import annotations

import base64
import hashlib

from memoryd.domain.images import downgrade_segment, image_hash
from memoryd.domain.memory import Memory
from memoryd.domain.models import Message
from tests.summaries.conftest import LIMITS

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
DATA_URI = "data:image/png;base64," + base64.b64encode(PNG).decode()


def test_hash_is_stable_and_content_based():
    expected = hashlib.sha256(PNG).hexdigest()[:16]
    assert image_hash(DATA_URI) == expected
    # The same bytes under another label or with line breaks in the base64: same hash.
    wrapped = "data:image/x-png;base64," + "\n".join(base64.b64encode(PNG).decode()[i : i + 76] for i in range(0, 1400, 76))
    assert image_hash(wrapped) == expected
    url = "https://cdn.example/tmp/abc.jpg?sig=1"
    assert image_hash(url) == image_hash(url) == hashlib.sha256(url.encode()).hexdigest()[:16]


def test_segments_are_downgraded():
    image = {"type": "image", "data": {"url": DATA_URI, "width": 10}}
    out = downgrade_segment(image)
    marker = f"[image {image_hash(DATA_URI)}]"
    assert out == {"type": "image", "data": {"url": marker, "width": 10, "image_hash": image_hash(DATA_URI)}}
    assert image["data"]["url"] == DATA_URI  # the caller's copy is untouched
    assert downgrade_segment(out) == out  # idempotent
    remote = downgrade_segment({"type": "Image", "data": {"file": "http://qq.example/temp/1.png"}})
    assert remote["data"]["file"].startswith("[image ")
    # Links that are not images stay; an inline image anywhere is replaced.
    link = {"type": "text", "data": {"text": "see https://example.com"}}
    assert downgrade_segment(link) is link
    inline = downgrade_segment({"type": "quote", "data": {"preview": DATA_URI}})
    assert inline["data"]["preview"] == marker


async def test_saved_messages_keep_markers_on_every_adapter(store, tenant):
    memory = Memory(store, LIMITS, downgrade_images=True)
    message = Message(
        role="user",
        content="look",
        timestamp=1,
        segments=[{"type": "image", "data": {"url": DATA_URI}}, {"type": "text", "data": {"text": "hi"}}],
    )
    await memory.save_messages(tenant, "s", [message])
    await memory.replace_history(tenant, "r", [Message(role="user", content="x", timestamp=2, segments=[
        {"type": "image", "data": {"url": "https://img.example/a.png"}}])])
    (stored,) = await memory.get_history(tenant, "s", 10)
    assert stored.segments[0]["data"] == {"url": f"[image {image_hash(DATA_URI)}]", "image_hash": image_hash(DATA_URI)}
    assert stored.segments[1] == {"type": "text", "data": {"text": "hi"}}
    (replaced,) = await memory.get_history(tenant, "r", 10)
    assert replaced.segments[0]["data"]["url"] == f"[image {image_hash('https://img.example/a.png')}]"
    # Off by default: stored as given.
    plain = Memory(store, LIMITS)
    await plain.save_messages(tenant, "p", [Message(role="user", timestamp=3, segments=[{"type": "image", "data": {"url": DATA_URI}}])])
    assert (await plain.get_history(tenant, "p", 1))[0].segments[0]["data"]["url"] == DATA_URI
