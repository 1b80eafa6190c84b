"""tabret's HNSW graph through its thin binding (tabret._core.HnswIndex): what it finds against
exact search, its search width, and bad input."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

import tabret
from tabret import _core


def unit_rows(rng: np.random.Generator, n: int, d: int) -> npt.NDArray[np.float32]:
    rows = rng.standard_normal((n, d)).astype(np.float32)
    unit: npt.NDArray[np.float32] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


def test_hnsw_finds_the_exact_neighbours_of_column_like_queries() -> None:
    # Queries near indexed rows (the graph's easy case): a wide search finds the exact top 10.
    rng = np.random.default_rng(3)
    vectors = unit_rows(rng, 2000, 32)
    queries = vectors[:50] + rng.normal(0, 0.05, (50, 32)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    index = _core.HnswIndex(vectors, m=16, ef_construction=100, ef_search=200, threads=1)
    assert (index.size, index.dim) == (2000, 32)
    ids, scores = index.search(queries, 10)
    assert ids.shape == scores.shape == (50, 10)
    want = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    found = sum(len(set(a) & set(b)) for a, b in zip(ids.tolist(), want.tolist(), strict=True))
    assert found >= 0.98 * 500
    # scores are the inner products of the rows found, best first
    np.testing.assert_allclose(
        scores, np.take_along_axis(queries @ vectors.T, ids, axis=1), atol=1e-5
    )
    assert (np.diff(scores, axis=1) <= 0).all()


def test_hnsw_width_is_at_least_k() -> None:
    # ef_search 1 would keep one candidate; a search for k widens itself to k.
    vectors = unit_rows(np.random.default_rng(4), 300, 8)
    ids, _ = _core.HnswIndex(vectors, ef_search=1, threads=1).search(vectors[:3], 300)
    assert [sorted(row) for row in ids.tolist()] == [list(range(300))] * 3


def test_hnsw_index_rejects_bad_input() -> None:
    vectors = unit_rows(np.random.default_rng(5), 20, 4)
    with pytest.raises(tabret.EmbeddingError, match="NaN or infinity"):
        _core.HnswIndex(np.full((2, 4), np.nan, dtype=np.float32))
    with pytest.raises(tabret.Error, match="m"):
        _core.HnswIndex(vectors, m=1)
    index = _core.HnswIndex(vectors, threads=1)
    with pytest.raises(tabret.EmbeddingError, match="dimension 3, the index has 4"):
        index.search(np.ones((1, 3), dtype=np.float32), 2)
    with pytest.raises(tabret.Error, match="k must be positive"):
        index.search(vectors[:1], 0)
