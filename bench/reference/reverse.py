"""Reverse Engineering's fused score, one question at a time: r = cos(q, schema),
r_hat = cos(q, generated question), r_c = cos(q, E_s + E_qo), alpha = max(r_c, 1 - r_c),
R = alpha*r + (1 - alpha)*r_hat; top k by R."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]


def reverse(
    question_vectors: FloatArray, schema_vectors: FloatArray, generated: FloatArray, k: int
) -> list[list[int]]:
    sum_norms = np.linalg.norm(schema_vectors + generated, axis=1).astype(np.float32)
    out = []
    for q in question_vectors:
        r = schema_vectors @ q
        r_hat = generated @ q
        r_c = np.where(sum_norms > 0, (r + r_hat) / np.where(sum_norms > 0, sum_norms, 1), 0)
        alpha = np.maximum(r_c, 1 - r_c)
        fused = (alpha * r + (1 - alpha) * r_hat).astype(np.float32)
        out.append([int(t) for t in np.argsort(-fused, kind="stable")[:k]])
    return out
