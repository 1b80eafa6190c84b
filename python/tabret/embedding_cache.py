"""An embedder wrapper that keeps every vector it has computed on disk, so that repeated runs
(e.g. the ablations of one method over one benchmark) embed each distinct text once."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np

from tabret.embedders import Embedder, FloatArray, HashingEmbedder, resolve_embedder

__all__ = ["DiskCachedEmbedder"]


class DiskCachedEmbedder:
    """Wraps ``inner`` (same ``name``): texts already seen come from ``directory``, the others
    go to ``inner`` in one batch and are appended to the cache as a new shard file
    (``<directory>/<hash of the name>/shard-*.npz``). Vectors are stored as ``inner`` returned
    them (tabret normalises them afterwards). Not safe for two processes writing at once."""

    def __init__(
        self, inner: Embedder | HashingEmbedder | str, directory: str | os.PathLike[str]
    ) -> None:
        self._embed, self._name = resolve_embedder(inner)
        key = hashlib.sha1(self._name.encode("utf-8")).hexdigest()[:16]
        self._dir = Path(directory) / key
        self._dir.mkdir(parents=True, exist_ok=True)
        self._vectors: dict[str, FloatArray] = {}
        for shard in sorted(self._dir.glob("shard-*.npz")):
            with np.load(shard) as data:
                self._vectors.update(zip(data["texts"].tolist(), data["vectors"], strict=True))
        self.misses = 0

    @property
    def name(self) -> str:
        return self._name

    def __len__(self) -> int:
        return len(self._vectors)

    def embed(self, texts: list[str]) -> Any:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            fn = self._embed.embed if isinstance(self._embed, HashingEmbedder) else self._embed
            vectors = np.asarray(fn(missing), dtype=np.float32)
            if vectors.shape[0] != len(missing):
                return vectors  # let tabret report the wrong shape
            self._vectors.update(zip(missing, vectors, strict=True))
            self.misses += len(missing)
            shard = self._dir / f"shard-{len(list(self._dir.glob('shard-*.npz'))):05d}.npz"
            tmp = shard.with_suffix(".tmp.npz")
            np.savez(tmp, texts=np.array(missing), vectors=vectors)
            tmp.replace(shard)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])
