"""Join-aware selection over the top-N dense candidates of one question: the inputs (coarse r,
fine F by looping over each candidate's columns, omega), the greedy of Boutaleb et al., and JAR's
objective maximised by enumerating every K-subset (the straightforward exact solver)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]


@dataclass
class Problem:
    tables: list[int]
    coarse: list[float]
    fine: list[list[float]]  # J x N
    omega: list[list[float]]  # N x N


def problem(
    question_vector: FloatArray,
    sub_vectors: FloatArray,
    table_vectors: FloatArray,
    column_vectors: FloatArray,
    table_columns: Sequence[Sequence[int]],
    omega: FloatArray,
    n: int,
) -> Problem:
    """The top-n tables by cosine and their F and omega (column_vectors: `table:column` texts)."""
    scores = table_vectors @ question_vector
    tables = [int(t) for t in np.argsort(-scores, kind="stable")[:n]]
    fine = []
    for sub in sub_vectors:
        row = []
        for t in tables:
            best = -1.0
            for c in table_columns[t]:
                best = max(best, float(column_vectors[c] @ sub))
            row.append(best)
        fine.append(row)
    om = [[float(omega[a, b]) for b in tables] for a in tables]
    return Problem(tables, [float(scores[t]) for t in tables], fine, om)


def greedy(p: Problem, k: int, weights: tuple[float, float, float] = (4.0, 2.0, 1.0)) -> list[int]:
    """Seed by argmax wc*r + wv*sum_j F, then repeatedly add
    argmax wc*r + wv*sum_j max(0, F - q_j) + wj*sum_{l in S} omega."""
    wc, wv, wj = weights
    n, m = len(p.tables), len(p.fine)
    taken = [False] * n
    covered = [0.0] * m
    join = [0.0] * n
    order: list[int] = []
    for step in range(min(k, n)):
        best, best_gain = -1, 0.0
        for i in range(n):
            if taken[i]:
                continue
            cov = 0.0
            for j in range(m):
                cov += p.fine[j][i] if step == 0 else max(0.0, p.fine[j][i] - covered[j])
            gain = wc * p.coarse[i] + wv * cov + wj * join[i]
            if best < 0 or gain > best_gain:
                best, best_gain = i, gain
        taken[best] = True
        order.append(best)
        for j in range(m):
            f = p.fine[j][best]
            covered[j] = f if step == 0 else max(covered[j], f)
        for i in range(n):
            join[i] += p.omega[i][best]
    return [p.tables[i] for i in order]


def _spanning_tree(p: Problem, s: Sequence[int]) -> float:
    """Weight of the maximum spanning forest of s under omega (Prim)."""
    k = len(s)
    if k <= 1:
        return 0.0
    inside = [False] * k
    best = [-1.0] * k
    best[0] = 0.0
    total = 0.0
    for _ in range(k):
        u = max((i for i in range(k) if not inside[i]), key=lambda i: best[i])
        inside[u] = True
        total += max(0.0, best[u])
        for i in range(k):
            if not inside[i]:
                best[i] = max(best[i], p.omega[s[u]][s[i]])
    return total


def jar_objective(p: Problem, s: Sequence[int], w: Sequence[float]) -> float:
    """w1*sumF(assigned) + w2*covered + w3*MST(omega) + w4*sumr, at most floor(w5*J) assignments."""
    w1, w2, w3, w4, w5 = w
    items = []
    for row in p.fine:
        values = sorted((row[t] for t in s), reverse=True)
        for r, f in enumerate(values):
            v = w1 * f + (w2 if r == 0 else 0.0)
            if v > 0.0:
                items.append(v)
    items.sort(reverse=True)
    assigned = sum(items[: math.floor(w5 * len(p.fine))])
    return assigned + w3 * _spanning_tree(p, s) + w4 * sum(p.coarse[t] for t in s)


def jar_exact(p: Problem, k: int, weights: Sequence[float]) -> list[int]:
    """The K-subset of the candidates with the best JAR objective, by enumeration (as a set of
    table ids in candidate order)."""
    best, best_set = -math.inf, tuple[int, ...]()
    for s in itertools.combinations(range(len(p.tables)), min(k, len(p.tables))):
        v = jar_objective(p, s, weights)
        if v > best:
            best, best_set = v, s
    return [p.tables[i] for i in best_set]
