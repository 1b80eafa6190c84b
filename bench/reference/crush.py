"""CRUSH4SQL's selection step, one question at a time: per-probe top-N columns, their union,
entropy-weighted probe scores and the greedy budget selection (the paper objective, or the
reference code's round robin), looping over steps, probes and picks as the reference does."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]


def candidates(probe_vectors: FloatArray, column_vectors: FloatArray, depth: int) -> list[int]:
    """C(x): the union of every probe's top ``depth`` columns, sorted by column id."""
    union: set[int] = set()
    for p in probe_vectors:
        scores = column_vectors @ p
        union.update(int(c) for c in np.argsort(-scores, kind="stable")[:depth])
    return sorted(union)


def weighted_scores(cos: FloatArray, entropy: bool = True) -> FloatArray:
    """s(k, d) = P(d|k) * sigmoid(mean H - H(k)), P = (cos + 1) / 2 (float32 like tabret)."""
    p: FloatArray = ((cos + np.float32(1.0)) / np.float32(2.0)).astype(np.float32)
    if not entropy:
        return p
    h = []
    for row in p:
        total = float(np.sum(row, dtype=np.float64))
        if total <= 0.0:
            h.append(0.0)
            continue
        q = row.astype(np.float64) / total
        q = q[q > 0]
        h.append(float(np.float32(-np.sum(q * np.log(q)))))
    mean = sum(h) / len(h)
    w = np.asarray([1.0 / (1.0 + math.exp(x - mean)) for x in h], dtype=np.float32)
    s: FloatArray = (p * w[:, None]).astype(np.float32)
    return s


def select_objective(
    s: FloatArray, linked: npt.NDArray[np.bool_] | None, budget: int, lam: float, gamma: float
) -> list[tuple[int, int]]:
    """Greedy marginal gain of sum_k logsumexp_{d in R} s(k,d)
    + lambda sum_{d in R} logsumexp_{d' in R} e(d,d').
    Returns (candidate, picking probe) in selection order."""
    probes, n = s.shape
    s64 = s.astype(np.float64)
    exp_s = np.exp(s64)
    edges = linked is not None and lam != 0.0
    link = np.where(linked, math.exp(gamma), 1.0) if edges and linked is not None else None
    if link is not None:
        np.fill_diagonal(link, math.exp(gamma))
    cover = np.zeros(probes)
    conn = np.zeros(n)
    chosen = np.zeros(n, dtype=bool)
    picks: list[tuple[int, int]] = []
    while len(picks) < min(budget, n):
        value = np.zeros(n)
        for k in range(probes):
            value += np.log(cover[k] + exp_s[k])
        if link is not None:
            e = np.log(conn + np.diagonal(link))
            for c, _ in picks:
                e += np.log(conn[c] + link[c])
            value += lam * e
        value[chosen] = -np.inf
        best = int(np.argmax(value))
        probe, best_gain, best_s = 0, -1.0, -math.inf
        for k in range(probes):
            v = float(s[k, best])
            gain = math.log1p(math.exp(v) / cover[k]) if cover[k] > 0 else math.inf
            if gain > best_gain or (gain == best_gain and v > best_s):
                probe, best_gain, best_s = k, gain, v
        picks.append((best, probe))
        chosen[best] = True
        cover += exp_s[:, best]
        if link is not None:
            conn += link[:, best]
    return picks


def select_round_robin(s: FloatArray, budget: int) -> list[tuple[int, int]]:
    """The reference greedy: uncovered probes pick their best unchosen candidate, highest first;
    coverage resets once every probe has picked."""
    probes, n = s.shape
    covered = [False] * probes
    chosen = [False] * n
    picks: list[tuple[int, int]] = []
    while probes and len(picks) < min(budget, n):
        if all(covered):
            covered = [False] * probes
        best, best_probe, best_s = n, probes, -math.inf
        for k in range(probes):
            if covered[k]:
                continue
            for c in range(n):
                if not chosen[c] and s[k, c] > best_s:
                    best, best_probe, best_s = c, k, float(s[k, c])
        if best == n:
            break
        picks.append((best, best_probe))
        chosen[best] = True
        covered[best_probe] = True
    return picks


def crush(
    probe_vectors: FloatArray,
    column_vectors: FloatArray,
    column_table: Sequence[int],
    fk_partners: Sequence[Sequence[int]],
    budget: int,
    k: int,
    *,
    depth: int = 100,
    objective: str = "paper",
    lam: float = 1.0,
    gamma: float = 0.01,
) -> tuple[list[int], list[int]]:
    """(selected columns, their distinct tables, at most k) for one question."""
    cand = candidates(probe_vectors, column_vectors, depth)
    cos = (probe_vectors @ column_vectors[cand].T).astype(np.float32)
    s = weighted_scores(cos)
    if objective == "round_robin":
        picks = select_round_robin(s, budget)
    else:
        n = len(cand)
        linked = np.zeros((n, n), dtype=bool)
        pos = {c: i for i, c in enumerate(cand)}
        for a, ca in enumerate(cand):
            for b, cb in enumerate(cand):
                linked[a, b] = column_table[ca] == column_table[cb]
            for partner in fk_partners[ca]:
                if partner in pos:
                    linked[a, pos[partner]] = True
        linked = linked | linked.T
        picks = select_objective(s, linked, budget, lam, gamma)
    columns = [cand[c] for c, _ in picks]
    tables: list[int] = []
    for c in columns:
        t = column_table[c]
        if t not in tables and len(tables) < k:
            tables.append(t)
    return columns, tables
