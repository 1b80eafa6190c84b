"""The ONNX Runtime backend of SentenceTransformerEmbedder (issue 51 item 3): the model's own
vectors, in input order, from length-sorted batches."""

from __future__ import annotations

import numpy as np
import pytest

from tabret import EmbeddingError
from tabret.embedders import SentenceTransformerEmbedder

pytest.importorskip("sentence_transformers")
pytest.importorskip("onnxruntime")

TEXTS = [
    "singer.country (text)",
    "",
    "concert_singer.singer(singer_id, name, country, song_name, song_release_year, age) " * 8,
    "a",
    "How many singers are from France?",
]


@pytest.fixture(scope="module")
def pair() -> tuple[SentenceTransformerEmbedder, SentenceTransformerEmbedder]:
    onnx = SentenceTransformerEmbedder(progress=False, batch_size=2)
    torch = SentenceTransformerEmbedder(progress=False, backend="torch")
    return onnx, torch


def test_default_on_the_cpu_is_onnx_and_keeps_the_model_name(
    pair: tuple[SentenceTransformerEmbedder, SentenceTransformerEmbedder],
) -> None:
    onnx, torch = pair
    assert (onnx.backend, torch.backend) == ("onnx", "torch")
    assert onnx.name == torch.name == "all-MiniLM-L6-v2"  # same vectors: one index serves both


def test_same_vectors_as_pytorch_in_input_order(
    pair: tuple[SentenceTransformerEmbedder, SentenceTransformerEmbedder],
) -> None:
    onnx, torch = pair
    # batch_size=2 over texts of very different lengths: the batches are sorted by length and
    # padded, the rows must come back where their texts were
    got, expected = onnx.embed(TEXTS), torch.embed(TEXTS)
    assert got.shape == (len(TEXTS), 384)
    assert got.dtype == np.float32
    assert np.abs(got - expected).max() < 1e-4
    one_by_one = np.vstack([onnx.embed([t]) for t in TEXTS])
    assert np.abs(got - one_by_one).max() < 1e-4  # padding does not change a text's vector
    assert onnx.embed([]).shape == (0, 384)


def test_bad_backend_and_device() -> None:
    with pytest.raises(ValueError, match="backend must be one of onnx, torch"):
        SentenceTransformerEmbedder(backend="tensorrt")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="CPU only"):
        SentenceTransformerEmbedder(device="cuda", backend="onnx")


def test_a_graph_that_gives_other_vectors_is_refused(
    pair: tuple[SentenceTransformerEmbedder, SentenceTransformerEmbedder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tabret._onnx as backend

    onnx, _ = pair
    real = backend.export

    def scaled(model: object) -> tuple[bytes, list[str]]:
        # the model's graph with its output halved: what a tracer that took a wrong branch
        # would give
        import onnx as onnx_lib

        graph, keys = real(model)
        proto = onnx_lib.load_from_string(graph)
        half = onnx_lib.helper.make_tensor("half", onnx_lib.TensorProto.FLOAT, [], [0.5])
        proto.graph.initializer.append(half)
        out = proto.graph.output[0].name
        for node in proto.graph.node:
            node.output[:] = [f"{o}_raw" if o == out else o for o in node.output]
        proto.graph.node.append(onnx_lib.helper.make_node("Mul", [f"{out}_raw", "half"], [out]))
        return proto.SerializeToString(), keys

    monkeypatch.setattr(backend, "export", scaled)
    with pytest.raises(EmbeddingError, match="other vectors than the model"):
        backend.OnnxModel(onnx._model)


def test_the_backend_variable_chooses_where_none_is_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABRET_EMBEDDER_BACKEND", "torch")
    assert SentenceTransformerEmbedder(progress=False).backend == "torch"
    assert SentenceTransformerEmbedder(progress=False, backend="onnx").backend == "onnx"
    monkeypatch.setenv("TABRET_EMBEDDER_BACKEND", "cuda")
    with pytest.raises(ValueError, match="TABRET_EMBEDDER_BACKEND='cuda'"):
        SentenceTransformerEmbedder(progress=False)
