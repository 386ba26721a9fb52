"""Optional server-side embedder: any OpenAI-compatible `/v1/embeddings` endpoint (Ollama too).

    MEMORYD_EMBEDDER_URL=http://localhost:11434/v1  MEMORYD_EMBEDDER_MODEL=nomic-embed-text

Vectors it computes are tagged `openai:<model>` unless MEMORYD_EMBEDDER_MODEL_ID names
the space otherwise (for example `ollama:nomic-embed-text`).
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

import httpx

from memoryd.domain import deadline
from memoryd.domain.errors import StorageUnavailable
from memoryd.domain.vectors import finite


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
    def __init__(
        self, url: str, model: str, *, api_key: str = "", model_id: str = "", timeout: float = 30.0
    ) -> None:
        self.url = endpoint(url)
        self.model = model
        self.model_id = model_id or f"openai:{model}"
        self.timeout = timeout
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(headers=headers, timeout=timeout)

    async def close(self) -> None:
        await self._client.aclose()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        try:
            response = await self._client.post(
                self.url,
                json={"model": self.model, "input": list(texts)},
                timeout=deadline.remaining(self.timeout),
            )
            response.raise_for_status()
            body = response.json()
        except (httpx.HTTPError, ValueError) as error:
            raise EmbedderUnavailable(f"embedder request failed ({type(error).__name__})") from error
        try:
            data = sorted(body["data"], key=lambda item: item.get("index", 0))
            vectors = [[float(x) for x in item["embedding"]] for item in data]
        except (KeyError, TypeError, ValueError) as error:
            raise EmbedderUnavailable("embedder answered an unexpected body") from error
        if len(vectors) != len(texts) or any(not v or not finite(v) for v in vectors):
            raise EmbedderUnavailable("embedder answered unusable vectors")
        return vectors
