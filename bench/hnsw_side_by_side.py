"""tabret's HNSW beside the hnswlib wheel on the same vectors (issue 23, item 2).

The first ``--max-columns`` Spider 2.0-lite columns as 1024-d hashing vectors; both graphs with
M 16, ef_construction 200 and two threads; ``--rounds`` interleaved builds (tabret, wheel,
tabret, …) so that both see the same machine load. Build wall and CPU time of the column graph
only (tabret's is timed from its progress reports: from the end of the table graph to the end of
the column graph), search time at ef 64 over Spider 2.0-lite questions, and the load average.

    python -m bench.hnsw_side_by_side --max-columns 100000 --rounds 2
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.common import percentile, write_json
from bench.scale import spider2_questions
from tabret import HashingEmbedder, _core
from tabret.datasets import data_dir
from tabret.spider2 import spider2_catalog


def tabret_build(cat: _core.Catalog, embedder: HashingEmbedder) -> tuple[Any, float, float]:
    marks: dict[str, tuple[float, float]] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if done >= total:
            marks[stage] = (time.perf_counter(), time.process_time())

    index = _core.TableIndex.build(
        cat, embedder, embedder.name, kind="hnsw", ef_search=64, progress=progress
    )
    (w0, c0), (w1, c1) = marks["hnsw tables"], marks["hnsw columns"]
    return index, w1 - w0, c1 - c0


def wheel_build(vectors: np.ndarray) -> tuple[Any, float, float]:
    import hnswlib

    start, cpu = time.perf_counter(), time.process_time()
    index = hnswlib.Index(space="ip", dim=vectors.shape[1])
    index.init_index(max_elements=len(vectors), M=16, ef_construction=200, random_seed=100)
    index.add_items(vectors, np.arange(len(vectors)), num_threads=2)
    index.set_ef(64)
    return index, time.perf_counter() - start, time.process_time() - cpu


def run(max_columns: int, rounds: int, queries: int) -> dict[str, Any]:
    root = data_dir()
    embedder = HashingEmbedder()
    cat = spider2_catalog(root, max_columns)
    questions = spider2_questions(root, queries)
    q = np.asarray(embedder.embed(questions), dtype=np.float32)
    q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    rows: list[dict[str, Any]] = []
    for r in range(rounds):
        load = os.getloadavg()[0]
        index, wall, cpu = tabret_build(cat, embedder)
        retriever = _core.DenseRetriever(index, embedder, embedder.name)
        ms = []
        for question in questions:
            start = time.perf_counter()
            retriever.retrieve([question], 1, 10)
            ms.append(1000 * (time.perf_counter() - start))
        vectors = np.asarray(index.column_vectors)
        rows.append(
            {"round": r, "what": "tabret", "build_s": wall, "build_cpu_s": cpu,
             "p50_ms": percentile(ms, 50), "load": load}
        )  # fmt: skip
        del index, retriever
        load = os.getloadavg()[0]
        wheel, wall, cpu = wheel_build(vectors)
        ms = []
        for v in q:
            start = time.perf_counter()
            wheel.knn_query(v[None, :], k=10)
            ms.append(1000 * (time.perf_counter() - start))
        rows.append(
            {"round": r, "what": "hnswlib wheel", "build_s": wall, "build_cpu_s": cpu,
             "p50_ms": percentile(ms, 50), "load": load}
        )  # fmt: skip
        del wheel
    return {"columns": cat.num_columns, "rows": rows}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-columns", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--queries", type=int, default=50)
    args = ap.parse_args(argv)
    out = run(args.max_columns, args.rounds, args.queries)
    write_json("hnsw_side_by_side.json", out)
    print(f"{out['columns']:,} columns, 1024-d hashing vectors, M 16, ef_construction 200")
    print("| round | index | build s | build CPU s | search p50 ms | load |")
    print("|---|---|---|---|---|---|")
    for r in out["rows"]:
        print(
            f"| {r['round']} | {r['what']} | {r['build_s']:.1f} | {r['build_cpu_s']:.1f} | "
            f"{r['p50_ms']:.2f} | {r['load']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
