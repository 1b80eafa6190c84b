from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tabret.embedders import CallableEmbedder, HashingEmbedder
from tabret.embedding_cache import DiskCachedEmbedder

HASHING = HashingEmbedder()


def test_each_text_is_embedded_once_across_instances(tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> Any:
        calls.append(texts)
        return HASHING.embed(texts)

    inner = CallableEmbedder(embed, "counting")
    first = DiskCachedEmbedder(inner, tmp_path)
    a = first.embed(["x", "y", "x"])
    assert calls == [["x", "y"]]
    assert np.array_equal(a[0], a[2])
    assert first.name == "counting"
    again = DiskCachedEmbedder(inner, tmp_path)  # a later run reads the shards
    b = again.embed(["y", "z"])
    assert calls == [["x", "y"], ["z"]]
    assert np.array_equal(b[0], a[1])
    assert np.allclose(b[1], HASHING.embed(["z"])[0])
    assert len(DiskCachedEmbedder(inner, tmp_path)) == 3
    assert len(DiskCachedEmbedder(CallableEmbedder(embed, "other"), tmp_path)) == 0


def test_caches_around_the_hashing_embedder_keep_its_zero_vectors(tmp_path: Path) -> None:
    """A question with no hashing features ('a') is a zero vector, which the hashing embedder
    declares legitimate; a cache around it says the same, so retrieval through it works."""
    import tabret
    from tabret import _core
    from tabret.index import DenseRetriever, TableIndex

    disk = DiskCachedEmbedder(HASHING, tmp_path)
    memory = _core.CachedEmbedder(HASHING, HASHING.name)
    assert HASHING.allows_zero_rows
    assert disk.allows_zero_rows
    assert memory.allows_zero_rows
    assert not DiskCachedEmbedder(
        CallableEmbedder(HASHING.embed, "plain"), tmp_path
    ).allows_zero_rows
    index = TableIndex.build(tabret.demo_catalog(), HASHING, progress=False)
    for embed in (disk.embed, memory):  # as resolve_embedder passes them to _core
        core = _core.DenseRetriever(index.core, embed, HASHING.name)
        assert len(core.retrieve(["a"], 3, 0)[0].tables) == 3
    assert len(DenseRetriever(index).retrieve("a", 3).tables) == 3
