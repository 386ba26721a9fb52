"""A fast local OpenAI-compatible embeddings endpoint (`POST /v1/embeddings`) for the load
suite: what the server-side embedder client costs memoryd is measured against it
(bench_search.py), so the endpoint itself must cost next to nothing.

Each input text gets a deterministic vector (`text_vector`: unit-free Gaussian numbers seeded
by the text's SHA-256, rounded to 4 decimals), so a search with the server's embedder finds
exactly what one with the caller's vector `text_vector(text)` finds. HTTP/1.1 with
keep-alive on a bare asyncio protocol; answers are kept by request body (a load test sends
the same few), so a repeated request costs a dictionary lookup and a write.

    python tests/load/embed_server.py --listen 127.0.0.1:0 --port-file FILE --dims 384
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import signal
from pathlib import Path

import numpy as np

# Answers kept by request body; past this many the cache starts afresh.
CACHED_ANSWERS = 1024
MAX_BODY_BYTES = 1 << 20
HEADER_END = b"\r\n\r\n"


def text_vector(text: str, dims: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return [round(float(x), 4) for x in np.random.default_rng(seed).standard_normal(dims)]


def _answer(status: str, body: bytes) -> bytes:
    head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    return head.encode() + body


def embeddings(body: bytes, dims: int) -> bytes:
    """The HTTP answer to an embeddings request body (400 when it is not one)."""
    try:
        request = json.loads(body)
        texts = request["input"]
        texts = [texts] if isinstance(texts, str) else list(texts)
        if not all(isinstance(t, str) for t in texts):
            raise TypeError("input must be strings")
    except (ValueError, KeyError, TypeError) as error:
        return _answer("400 Bad Request", json.dumps({"error": {"message": str(error)}}).encode())
    data = [{"object": "embedding", "index": i, "embedding": text_vector(t, dims)} for i, t in enumerate(texts)]
    usage = {"prompt_tokens": sum(len(t.split()) for t in texts), "total_tokens": sum(len(t.split()) for t in texts)}
    return _answer("200 OK", json.dumps({"object": "list", "data": data, "model": request.get("model", ""), "usage": usage}).encode())


class _Connection(asyncio.Protocol):
    def __init__(self, dims: int, cache: dict[bytes, bytes]) -> None:
        self.dims = dims
        self.cache = cache
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(HEADER_END)) >= 0:
            head = self.buffer[:end].decode("latin-1").split("\r\n")
            length = 0
            for line in head[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip() or 0)
            if length > MAX_BODY_BYTES:
                self._send(_answer("413 Content Too Large", b"{}"), close=True)
                return
            start = end + len(HEADER_END)
            if len(self.buffer) < start + length:
                return  # the rest of the body is still on its way
            body, self.buffer = self.buffer[start : start + length], self.buffer[start + length :]
            method, path = (head[0].split(" ") + ["", ""])[:2]
            if method != "POST" or not path.rstrip("/").endswith("/embeddings"):
                self._send(_answer("404 Not Found", b"{}"))
                continue
            answer = self.cache.get(body)
            if answer is None:
                answer = embeddings(body, self.dims)
                if len(self.cache) >= CACHED_ANSWERS:
                    self.cache.clear()
                self.cache[body] = answer
            self._send(answer)

    def _send(self, answer: bytes, *, close: bool = False) -> None:
        assert self.transport is not None
        self.transport.write(answer)
        if close:
            self.transport.close()


async def serve(listen: str, port_file: Path | None, dims: int) -> None:
    host, _, port = listen.rpartition(":")
    cache: dict[bytes, bytes] = {}
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Connection(dims, cache), host or "127.0.0.1", int(port))
    bound = server.sockets[0].getsockname()[1]
    if port_file is not None:
        tmp = port_file.with_suffix(".tmp")
        tmp.write_text(str(bound))
        tmp.rename(port_file)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", default="127.0.0.1:0")
    parser.add_argument("--port-file", type=Path)
    parser.add_argument("--dims", type=int, default=384)
    args = parser.parse_args()
    asyncio.run(serve(args.listen, args.port_file, args.dims))


if __name__ == "__main__":
    main()
