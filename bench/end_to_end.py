"""Part 6: end to end with the default embedder (all-MiniLM-L6-v2).

Per-question latency of single-hop and hybrid retrieval over SpiderUnion (876 tables), with the
question embedded by MiniLM, three ways: one question per call, the questions as batches of
64, each without a cache and with a warm embedding cache (``DiskCachedEmbedder`` that has seen
the questions). Each run is split into model time (wall time inside the embedder callback) and
tabret time (the rest: index search, BM25, fusion, the binding), with the process's CPU time
and the load average beside the wall time (the machine is shared). The index is built once,
through the same cache, before the timed runs.

Run: ``HF_HUB_OFFLINE=1 python -m bench.end_to_end [--questions 200]`` (writes
build/bench/end_to_end.json).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bench.common import Clock, machine, percentile, write_json
from bench.report import end_to_end_section
from tabret import DenseRetriever, TableIndex
from tabret.benchmarks import load_benchmark
from tabret.embedders import FloatArray, default_embedder
from tabret.embedding_cache import DiskCachedEmbedder

BATCH = 64


class TimedEmbedder:
    """``inner`` with the wall time of each call counted on ``clock`` (same name)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.clock = Clock()

    def embed(self, texts: list[str]) -> FloatArray:
        start = time.perf_counter()
        out: FloatArray = np.asarray(self.inner.embed(texts), dtype=np.float32)
        self.clock.seconds += time.perf_counter() - start
        self.clock.calls += 1
        return out


def _measure(
    retrieve: Callable[[list[str], int], object],
    batches: Sequence[list[str]],
    clock: Clock,
    n: int,
) -> dict[str, Any]:
    """Runs ``retrieve`` over ``batches`` (after one untimed call: the model's first call
    sets itself up); per-call wall times and the model/tabret split."""
    retrieve(["a question to warm up with"], 5)
    clock.reset()
    load = os.getloadavg()[0]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    per_call = []
    for batch in batches:
        start = time.perf_counter()
        retrieve(batch, 5)
        per_call.append(time.perf_counter() - start)
    wall = time.perf_counter() - wall0
    cpu = time.process_time() - cpu0
    return {
        "questions": n,
        "calls": len(batches),
        "wall_ms_per_question": 1000 * wall / n,
        "cpu_ms_per_question": 1000 * cpu / n,
        "model_ms_per_question": 1000 * clock.seconds / n,
        "tabret_ms_per_question": 1000 * (wall - clock.seconds) / n,
        "embedder_calls": clock.calls,
        "p50_ms_per_call": 1000 * percentile(per_call, 50),
        "p99_ms_per_call": 1000 * percentile(per_call, 99),
        "load_average": [round(load, 2), round(os.getloadavg()[0], 2)],
    }


def run(n: int) -> dict[str, Any]:
    bench = load_benchmark("spider-union")
    questions = [q.question for q in bench.questions[:n]]
    timed = TimedEmbedder(default_embedder())
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="tabret-e2e-") as cache_dir:
        cached = DiskCachedEmbedder(timed, cache_dir)
        start = time.perf_counter()
        index = TableIndex.build(bench.catalog, cached, progress=False)
        build = {"seconds": time.perf_counter() - start, "model_seconds": timed.clock.seconds}
        one = [[q] for q in questions]
        batched = [questions[i : i + BATCH] for i in range(0, len(questions), BATCH)]
        for method, hybrid in [("single-hop", False), ("hybrid", True)]:
            plain = DenseRetriever(TableIndex(index.core, timed), hybrid=hybrid)  # no cache
            for mode, batches in [("one question per call", one), ("batches of 64", batched)]:
                row = _measure(plain.retrieve, batches, timed.clock, len(questions))
                rows.append({"method": method, "mode": mode, "cache": "none", **row})
            warm = DenseRetriever(TableIndex(index.core, cached), hybrid=hybrid)
            warm.retrieve(questions, 5)  # the cache sees every question once
            for mode, batches in [("one question per call", one), ("batches of 64", batched)]:
                row = _measure(warm.retrieve, batches, timed.clock, len(questions))
                rows.append({"method": method, "mode": mode, "cache": "warm", **row})
    return {"machine": machine(), "embedder": timed.name, "build": build, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--questions", type=int, default=200, help="SpiderUnion questions")
    args = parser.parse_args(argv)
    if args.questions < 1:
        parser.error("--questions must be at least 1")
    result = run(args.questions)
    path = write_json("end_to_end.json", result)
    print("\n".join(end_to_end_section(result)))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
