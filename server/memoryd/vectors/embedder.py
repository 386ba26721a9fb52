"""Optional server-side embedder: any OpenAI-compatible `/v1/embeddings` endpoint (Ollama too).

    MEMORYD_EMBEDDER_URL=http://localhost:11434/v1  MEMORYD_EMBEDDER_MODEL=nomic-embed-text

Vectors it computes are tagged `openai:<model>` unless MEMORYD_EMBEDDER_MODEL_ID names
the space otherwise (for example `ollama:nomic-embed-text`).

The client is aiohttp's, one session per process, created in the running loop on first use
(a session belongs to its event loop): pooled keep-alive connections, no log line per
request. A SearchMemory with only a text embeds it on every call, so the client's cost is
part of the search's: httpx's cost a search 0.6-1.3 ms of CPU per request (its connection
pool scans every connection per request), aiohttp's about 0.2 ms (docs/PERFORMANCE.md, run Q).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from urllib.parse import urlsplit

import aiohttp

from memoryd.domain import deadline
from memoryd.domain.errors import StorageUnavailable
from memoryd.domain.vectors import finite

# Connections kept to the endpoint at most (requests beyond wait for one), and how long an
# idle one is kept: less than the 5 s after which common servers (uvicorn) close idle
# connections, so that this side does not reuse one the endpoint is closing.
CONNECTIONS = 100
KEEPALIVE_SECONDS = 4.0


class EmbedderUnavailable(StorageUnavailable):
    reason = "EMBEDDER_UNAVAILABLE"


def endpoint(url: str) -> str:
    """The embeddings URL from a base URL: `.../v1` and bare `host:port` both work."""
    url = url.rstrip("/")
    if url.endswith("/embeddings"):
        return url
    if urlsplit(url).path in ("", "/"):
        return url + "/v1/embeddings"
    return url + "/embeddings"


class OpenAIEmbedder:
    def __init__(self, url: str, model: str, *, api_key: str = "", model_id: str = "", timeout: float = 30.0) -> None:
        self.url = endpoint(url)
        self.model = model
        self.model_id = model_id or f"openai:{model}"
        self.timeout = timeout
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                connector=aiohttp.TCPConnector(limit=CONNECTIONS, keepalive_timeout=KEEPALIVE_SECONDS),
            )
        return self._session

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        seconds = deadline.remaining(self.timeout)
        if seconds is not None and seconds <= 0:
            raise EmbedderUnavailable("the caller's deadline passed before the embedder call")
        try:
            async with self._client().post(
                self.url,
                json={"model": self.model, "input": list(texts)},
                timeout=aiohttp.ClientTimeout(total=seconds),
            ) as response:
                response.raise_for_status()
                body = json.loads(await response.read())
        except (aiohttp.ClientError, TimeoutError, ValueError) as error:
            raise EmbedderUnavailable(f"embedder request failed ({type(error).__name__})") from error
        try:
            data = sorted(body["data"], key=lambda item: item.get("index", 0))
            vectors = [list(map(float, item["embedding"])) for item in data]
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise EmbedderUnavailable("embedder answered an unexpected body") from error
        if len(vectors) != len(texts) or any(not v or not finite(v) for v in vectors):
            raise EmbedderUnavailable("embedder answered unusable vectors")
        return vectors
