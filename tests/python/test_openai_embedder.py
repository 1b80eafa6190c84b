"""OpenAICompatibleEmbedder against a real local embeddings server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np
import pytest

from local_http import serving
from tabret import DenseRetriever, EmbeddingError, TableIndex, demo_catalog
from tabret.embedders import HashingEmbedder, OpenAICompatibleEmbedder

HASHING = HashingEmbedder()


class Server:
    """Answers with the hashing embedder's vectors, rows in reverse order (with their index);
    ``broken`` makes the next answers malformed instead."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.broken: list[bytes] = []
        self.lock = threading.Lock()

    def answer(self, body: dict[str, Any]) -> bytes:
        with self.lock:
            self.requests.append(body)
            if self.broken:
                return self.broken.pop(0)
        vectors = np.asarray(HASHING.embed(body["input"]))
        data = [
            {"object": "embedding", "index": i, "embedding": vectors[i].tolist()}
            for i in reversed(range(len(body["input"])))
        ]
        return json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()


@pytest.fixture
def server() -> Iterator[tuple[str, Server]]:
    state = Server()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            payload = state.answer(body) if self.path == "/v1/embeddings" else b"{}"
            self.send_response(200 if self.path == "/v1/embeddings" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    with serving(Handler) as url:
        yield f"{url}/v1", state


def embedder(url: str, **kwargs: Any) -> OpenAICompatibleEmbedder:
    options: dict[str, Any] = {"max_retries": 0, "proxies": {}, "timeout": 5.0}
    return OpenAICompatibleEmbedder(url, "emb-model", **(options | kwargs))


def test_batches_in_order_and_drives_an_index(server: tuple[str, Server]) -> None:
    url, state = server
    emb = embedder(url, batch_size=2, dimensions=64)
    texts = ["singer names", "concert year", "stadium capacity"]
    out = emb.embed(texts)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.asarray(HASHING.embed(texts)), rtol=1e-6)
    assert [r["input"] for r in state.requests] == [texts[:2], texts[2:]]
    assert all(r["model"] == "emb-model" and r["dimensions"] == 64 for r in state.requests)

    index = TableIndex.build(demo_catalog(), emb, progress=False, columns=False)
    assert index.embedder_name == "emb-model"
    native = DenseRetriever(TableIndex.build(demo_catalog(), HASHING, progress=False))
    q = "Which customers placed orders last month?"
    assert DenseRetriever(index).retrieve(q, 5).table_names == native.retrieve(q, 5).table_names


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"not json", "not an embeddings answer"),
        (b'{"data": [{"index": 0, "embedding": [1.0]}]}', "not an embeddings answer"),
        (
            b'{"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]}',
            "unequal or wrong shape",
        ),
        (b'{"error": "quota"}', "KeyError"),
    ],
)
def test_malformed_answers_are_embedding_errors(
    server: tuple[str, Server], payload: bytes, message: str
) -> None:
    url, state = server
    state.broken.append(payload)
    with pytest.raises(EmbeddingError, match=message) as info:
        embedder(url).embed(["a", "b"])
    assert "/v1/embeddings" in str(info.value)


def test_http_errors_and_bad_arguments() -> None:
    with pytest.raises(EmbeddingError, match="failed after 1 attempts"):
        embedder("http://127.0.0.1:1/v1").embed(["a"])
    with pytest.raises(ValueError, match="base_url"):
        OpenAICompatibleEmbedder("localhost/v1", "m")
    with pytest.raises(ValueError, match="batch_size"):
        OpenAICompatibleEmbedder("http://x/v1", "m", batch_size=0)
    with pytest.raises(ValueError, match="model"):
        OpenAICompatibleEmbedder("http://x/v1", "")
