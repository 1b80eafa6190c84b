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
