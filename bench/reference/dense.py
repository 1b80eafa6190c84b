"""Single-hop dense retrieval: one question at a time, cosine against every table, sort."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]


def top_k(question_vectors: FloatArray, table_vectors: FloatArray, k: int) -> list[list[int]]:
    """Per question row, the k tables with the largest cosine (ties: smaller id first)."""
    out = []
    for q in question_vectors:
        scores = table_vectors @ q
        order = np.argsort(-scores, kind="stable")[:k]
        out.append([int(t) for t in order])
    return out
