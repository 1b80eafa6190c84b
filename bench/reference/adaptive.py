"""ATR's sliding window over a first stage's candidates, one question at a time, with the
training-free similarity scorer (logit = cosine, threshold = best cosine - delta)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]


def sliding_window(
    candidates: list[int], logits: dict[int, float], threshold: float, window: int, retain: int
) -> tuple[list[int], int]:
    """The re-ranked candidate list and the cut: windows from the bottom up, the best ``retain``
    of each carried up, the cut fixed where the threshold first ranks below ``retain``."""
    order = list(candidates)
    cut: int | None = None if order else 0
    end = len(order)
    while order:
        start = max(0, end - window)
        win = order[start:end]
        win.sort(key=lambda t: -logits[t])  # stable: equal logits keep their order
        order[start:end] = win
        above = sum(1 for t in win if logits[t] > threshold)
        if cut is None and (above >= retain or start == 0):
            cut = start + above
        if start == 0:
            break
        end = start + retain
    return order, cut or 0


def adaptive(
    question_vector: FloatArray,
    table_vectors: FloatArray,
    *,
    candidates: int = 50,
    window: int = 20,
    retain: int = 15,
    delta: float = 0.1,
    depth: int = 50,
) -> tuple[list[int], int]:
    """Dense top-``candidates`` first stage, then the window walk (relative threshold rule)."""
    scores = table_vectors @ question_vector
    ranked = np.argsort(-scores, kind="stable")
    threshold = float(np.float32(scores[ranked[0]]) - np.float32(delta))
    _ = depth  # the relative rule reads only the best of the top-depth cosines
    first = [int(t) for t in ranked[:candidates]]
    logits = {t: float(scores[t]) for t in first}
    return sliding_window(first, logits, threshold, window, retain)
