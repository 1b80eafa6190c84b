"""MURRE's beam search (paper form), one question at a time: hop 1 with the question, then per
live beam one rewrite (or stop) and one retrieval, every (beam, table) extension scored by
sum log P(t|q), P = (cos + 1) / 2, the best B table sets kept, a table scored by the best path
that contains it. Loops over beams, extensions and candidates as the reference code does."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tabret.rewriting import RewriteRequest, RewriteResult

FloatArray = npt.NDArray[np.float32]
Embed = Callable[[list[str]], FloatArray]
Rewrite = Callable[[Sequence[RewriteRequest]], list[RewriteResult]]


@dataclass
class Path:
    tables: tuple[int, ...] = ()
    score: float = 0.0
    stopped: bool = False


def _log_p(cos: float) -> float:
    return math.log(max(1e-12, (cos + 1.0) / 2.0))


def murre(
    question: str,
    embed: Embed,
    rewrite: Rewrite,
    table_vectors: FloatArray,
    k: int,
    *,
    beam: int = 5,
    hops: int = 3,
) -> list[int]:
    """The top-k tables of one question."""
    n = len(table_vectors)
    best = [-math.inf] * n
    beams = [Path()]
    for hop in range(1, hops + 1):
        live: list[tuple[int, str]] = []
        if hop == 1:
            live.append((0, question))
        else:
            waiting = [b for b, p in enumerate(beams) if not p.stopped]
            if not waiting:
                break
            answers = rewrite([RewriteRequest(question, list(beams[b].tables)) for b in waiting])
            for b, answer in zip(waiting, answers, strict=True):
                if answer.stop:
                    beams[b].stopped = True
                    continue
                live.append((b, "\n".join(answer.queries) if answer.queries else question))
            if not live:
                break
        texts = list(dict.fromkeys(text for _, text in live))
        vectors = dict(zip(texts, embed(texts), strict=True))
        candidates: list[tuple[float, int, int | None]] = []  # score, parent, table
        for b, text in live:
            parent = beams[b]
            cos = table_vectors @ vectors[text]
            for t in np.argsort(-cos, kind="stable"):
                if int(t) in parent.tables:
                    continue
                candidates.append((parent.score + _log_p(float(cos[t])), b, int(t)))
        for b, p in enumerate(beams):
            if p.stopped:
                candidates.append((p.score, b, None))
        for score, b, t in candidates:
            for u in (*beams[b].tables, *(() if t is None else (t,))):
                best[u] = max(best[u], score)
        candidates.sort(key=lambda c: -c[0])  # stable: candidate order breaks ties
        kept: list[Path] = []
        seen: set[tuple[int, ...]] = set()
        for score, b, t in candidates:
            if len(kept) >= beam:
                break
            tables = beams[b].tables if t is None else (*beams[b].tables, t)
            key = tuple(sorted(tables))
            if key in seen:
                continue
            seen.add(key)
            kept.append(Path(tables, score, beams[b].stopped if t is None else False))
        beams = kept
    ranked = sorted((t for t in range(n) if best[t] > -math.inf), key=lambda t: (-best[t], t))
    return ranked[:k]
