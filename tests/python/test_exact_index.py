"""The exact scan through its thin binding (tabret._core.ExactIndex): float32 and int8 codes
with exact re-scoring, against numpy, and the int8 index kind of TableIndex."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import tabret
from tabret import _core
from tabret.benchmarks import load_benchmark
from tabret.embedders import HashingEmbedder
from tabret.index import DenseRetriever, TableIndex


def unit_rows(rng: np.random.Generator, n: int, d: int) -> npt.NDArray[np.float32]:
    rows = rng.standard_normal((n, d)).astype(np.float32)
    unit: npt.NDArray[np.float32] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


def brute_force(vectors: np.ndarray, queries: np.ndarray, k: int) -> list[list[int]]:
    """Top k by float64 inner product, ties by smaller id."""
    scores = queries.astype(np.float64) @ vectors.astype(np.float64).T
    return [np.lexsort((np.arange(len(row)), -row))[:k].tolist() for row in scores]


@pytest.mark.parametrize("nq", [1, 2, 5, 6, 7, 13, 64])
def test_float_scan_matches_numpy_for_every_batch_path(nq: int) -> None:
    # 1 to 6 queries stream the rows, 7 and more run the packed micro-kernel; 301 rows and 37
    # dimensions leave remainders in both.
    rng = np.random.default_rng(nq)
    vectors, queries = unit_rows(rng, 301, 37), unit_rows(rng, nq, 37)
    ids, scores = _core.ExactIndex(vectors).search(queries, 10)
    assert ids.shape == scores.shape == (nq, 10)
    assert ids.tolist() == brute_force(vectors, queries, 10)
    want = np.take_along_axis(queries @ vectors.T, ids, axis=1)
    np.testing.assert_allclose(scores, want, atol=1e-5)


def test_int8_search_is_exact_on_near_duplicates() -> None:
    # Families of near-duplicate rows and exact duplicates: scores closer together than the
    # int8 codes' error, where only the re-scoring keeps the exact order (ties by id).
    rng = np.random.default_rng(7)
    base = unit_rows(rng, 40, 96)
    vectors = np.repeat(base, 25, axis=0) + rng.normal(0, 0.003, (1000, 96)).astype(np.float32)
    vectors[::7] = np.repeat(base, 25, axis=0)[::7]
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = unit_rows(rng, 30, 96)
    exact, int8 = _core.ExactIndex(vectors), _core.ExactIndex(vectors, quantize=True)
    assert int8.quantized
    assert not exact.quantized
    assert exact.bytes == vectors.nbytes
    assert int8.bytes > exact.bytes
    for k in (1, 10, 40):
        for q in queries:
            got_ids, got_scores = int8.search(q[None, :], k)
            want_ids, want_scores = exact.search(q[None, :], k)
            assert got_ids.tolist() == want_ids.tolist()
            assert got_scores.tolist() == want_scores.tolist()


def test_exact_index_rejects_bad_input() -> None:
    vectors = unit_rows(np.random.default_rng(1), 5, 4)
    index = _core.ExactIndex(vectors)
    with pytest.raises(tabret.EmbeddingError, match="dimension 3, the index has 4"):
        index.search(np.ones((1, 3), dtype=np.float32), 2)
    with pytest.raises(tabret.EmbeddingError, match="NaN or infinity"):
        index.search(np.full((1, 4), np.nan, dtype=np.float32), 2)
    with pytest.raises(tabret.Error, match="k must be positive"):
        index.search(vectors[:1], 0)
    with pytest.raises(tabret.EmbeddingError):
        _core.ExactIndex(np.full((2, 4), np.inf, dtype=np.float32))
    ids, _ = index.search(vectors[:1], 50)  # k above n: every row
    assert ids.shape == (1, 5)


def test_int8_table_index_answers_as_exact(tmp_path: Path, data_dir: Path) -> None:
    bench = load_benchmark("spider-union", data_dir)
    hashing = HashingEmbedder()
    exact = TableIndex.build(bench.catalog, hashing, kind="exact", progress=False)
    int8 = TableIndex.build(bench.catalog, hashing, kind="int8", progress=False)
    assert int8.core.kind == "int8"
    for q in [q.question for q in bench.questions[:40]]:
        assert DenseRetriever(int8).retrieve(q, 10, k_columns=10) == DenseRetriever(exact).retrieve(
            q, 10, k_columns=10
        )
    int8.save(tmp_path / "i")
    loaded = TableIndex.load(tmp_path / "i", hashing)
    assert loaded.core.kind == "int8"
    q = bench.questions[0].question
    assert DenseRetriever(loaded).retrieve(q, 10) == DenseRetriever(int8).retrieve(q, 10)
