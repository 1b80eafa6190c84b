"""Shared pieces of the benchmarks: timed callbacks, a precomputed-vector embedder, machine
facts and JSON output."""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from tabret import HashingEmbedder
from tabret.rewriting import RewriteRequest, RewriteResult

FloatArray = npt.NDArray[np.float32]
Search = Callable[[FloatArray], FloatArray]  # one query vector -> the scores of its top k

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "build" / "bench"


class Clock:
    """Accumulates the time spent inside callbacks (to be subtracted from a total): process
    CPU seconds in ``seconds``, wall seconds in ``wall``."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.wall = 0.0
        self.calls = 0

    def reset(self) -> None:
        self.seconds = 0.0
        self.wall = 0.0
        self.calls = 0

    @contextmanager
    def timing(self) -> Iterator[None]:
        """Counts one call and the CPU and wall time of the ``with`` body."""
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            yield
        finally:
            self.seconds += time.process_time() - cpu
            self.wall += time.perf_counter() - wall
            self.calls += 1


def normalized(rows: FloatArray) -> FloatArray:
    """Rows L2-normalised in float32, as tabret does."""
    norms = np.linalg.norm(rows, axis=1, keepdims=True).astype(np.float32)
    norms[norms == 0] = 1.0
    out: FloatArray = (rows / norms).astype(np.float32)
    return out


class LookupEmbedder:
    """An embedder answering from stored vectors (text -> hashing vector, L2-normalised). A text
    seen for the first time is embedded with the hashing embedder and stored, so a warm-up run
    fills the store and a timed run only looks up. Every call is timed on ``clock``."""

    # Like the hashing embedder it answers for, a text with none of its features (only
    # function words, such as the JAR sub-query "state") is a zero vector, scoring 0 everywhere.
    allows_zero_rows = True

    def __init__(self, name: str = "hashing-lookup", dim: int = 1024) -> None:
        self._name = name
        self._hashing = HashingEmbedder(dim=dim)
        self._rows: dict[str, FloatArray] = {}
        self.clock = Clock()
        self.texts = 0

    @property
    def name(self) -> str:
        return self._name

    def vectors(self, texts: Sequence[str]) -> FloatArray:
        """Stored vectors of ``texts`` (computed on a miss), not timed."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._rows]
        if missing:
            rows = normalized(np.asarray(self._hashing.embed(missing), dtype=np.float32))
            self._rows.update(zip(missing, rows, strict=True))
        if not texts:
            return np.zeros((0, self._hashing.dim), dtype=np.float32)
        return np.stack([self._rows[t] for t in texts])

    def embed(self, texts: list[str]) -> FloatArray:
        with self.clock.timing():
            out = self.vectors(texts)
        self.texts += len(texts)
        return out


RewriteKey = tuple[str, tuple[int, ...]]


class RecordedRewriter:
    """Wraps a rewriter: each (question, path) is rewritten once by ``inner`` and remembered;
    later calls answer from the record. Every call is timed on ``clock``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.record: dict[RewriteKey, RewriteResult] = {}
        self.clock = Clock()
        self.requests = 0

    def lookup(self, requests: Sequence[RewriteRequest]) -> list[RewriteResult]:
        keys = [(r.question, tuple(r.path)) for r in requests]
        missing = [r for r, key in zip(requests, keys, strict=True) if key not in self.record]
        if missing:
            answers = self.inner.rewrite(missing)
            for r, a in zip(missing, answers, strict=True):
                self.record[(r.question, tuple(r.path))] = a
        return [self.record[key] for key in keys]

    def rewrite(self, requests: Sequence[RewriteRequest | str]) -> list[RewriteResult]:
        with self.clock.timing():
            reqs = [RewriteRequest(r) if isinstance(r, str) else r for r in requests]
            out = self.lookup(reqs)
        self.requests += len(reqs)
        return out


def machine() -> dict[str, Any]:
    """CPU model, cores, memory, versions: the facts docs/benchmarks.md starts with."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_kib = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_kib = int(line.split()[1])
    except OSError:
        pass
    return {
        "cpu": model or platform.processor(),
        "cores": len(os.sched_getaffinity(0)),
        "memory_gib": round(mem_kib / 2**20, 1),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
    }


def write_json(name: str, data: Any) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / name
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


class Queried(NamedTuple):
    """What :func:`timed_queries` measured: the scores found, CPU p50 and p99 and wall p50 of a
    query, in ms."""

    scores: list[FloatArray]
    p50_ms: float
    p99_ms: float
    wall_p50_ms: float

    def times(self) -> dict[str, float]:
        """The times, as a benchmark row's fields."""
        return {"p50_ms": self.p50_ms, "p99_ms": self.p99_ms, "wall_p50_ms": self.wall_p50_ms}


def timed_queries(
    search: Callable[[Any], FloatArray], queries: Sequence[Any] | FloatArray
) -> Queried:
    """Each query (a vector or a question) searched alone: the scores found, the p50 and p99
    CPU and the p50 wall milliseconds of a query."""
    scores, cpu_ms, wall_ms = [], [], []
    for q in queries:
        cpu, wall = time.process_time(), time.perf_counter()
        scores.append(search(q))
        cpu_ms.append(1000 * (time.process_time() - cpu))
        wall_ms.append(1000 * (time.perf_counter() - wall))
    return Queried(scores, percentile(cpu_ms, 50), percentile(cpu_ms, 99), percentile(wall_ms, 50))


def score_recall(scores: Sequence[FloatArray], kth: FloatArray, k: int = 10) -> float:
    """Recall@k by score, in %: the share of each query's k found scores at least its exact k-th
    score ``kth`` (so an item tied with the k-th counts)."""
    found = sum(int(np.sum(s >= t - 1e-5)) for s, t in zip(scores, kth, strict=True))
    return 100.0 * found / (k * len(kth))
