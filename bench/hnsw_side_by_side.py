"""tabret's HNSW beside the hnswlib wheel on the same vectors (issue 23, item 2).

The first ``--max-columns`` Spider 2.0-lite columns (0: all) as the 1024-d hashing vectors
(L2-normalised, as tabret indexes them), or with ``--embedding-cache DIR`` as MiniLM's 384-d
vectors from that cache (``bench.scale`` fills it), written once to ``build/bench/``. Both
graphs with M 16, ef_construction 200 and two threads, built from the same rows: tabret's
``HnswIndex`` (the graph ``TableIndex`` builds for kind ``hnsw``, holding the rows once) and the
wheel's ``hnswlib.Index``. ``--rounds`` interleaved builds (tabret, wheel, tabret, …), each in
its own process, so that both see the same machine load and each row's *MiB* is the resident
memory its build added (the wheel's is the vectors plus the graph, stored together). Per row:
build wall and CPU time, search CPU p50 and p99 and wall p50 at ef 64 (one Spider 2.0-lite
question at a time, top 10), recall@10 by score against exact, and the load average before →
after.

    python -m bench.hnsw_side_by_side --max-columns 100000 --rounds 3
    python -m bench.hnsw_side_by_side --embedding-cache build/bench/embeddings --max-columns 0
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.common import OUT, FloatArray, score_recall, timed_queries, write_json
from bench.scale import _rss_mib, spider2_questions
from bench.wheels import spider2_vectors
from tabret import _core
from tabret.datasets import data_dir
from tabret.spider2 import spider2_catalog

M, EF_CONSTRUCTION, EF_SEARCH, THREADS, K = 16, 200, 64, 2, 10
SIDES = ("tabret", "hnswlib wheel")
JSON = {"hashing": "hnsw_side_by_side.json", "minilm": "hnsw_side_by_side_minilm.json"}


def _build(side: str, x: FloatArray) -> Any:
    """The graph over ``x`` and a search of one query vector -> its top-K scores."""
    if side == "tabret":
        index = _core.HnswIndex(
            x, m=M, ef_construction=EF_CONSTRUCTION, ef_search=EF_SEARCH, threads=THREADS
        )
        return lambda q: index.search(q[None, :], K)[1][0]
    import hnswlib

    wheel = hnswlib.Index(space="ip", dim=x.shape[1])
    wheel.init_index(max_elements=len(x), M=M, ef_construction=EF_CONSTRUCTION, random_seed=100)
    wheel.add_items(x, np.arange(len(x)), num_threads=THREADS)
    wheel.set_ef(EF_SEARCH)
    return lambda q: 1.0 - wheel.knn_query(q[None, :], k=K)[1][0]  # distance 1 - ip


def worker(side: str) -> dict[str, Any]:
    """One row, in its own process: build over the stored vectors, then search."""
    x, q = np.load(OUT / "hnsw_vectors.npy"), np.load(OUT / "hnsw_queries.npy")
    kth = np.load(OUT / "hnsw_kth.npy")
    load, rss = os.getloadavg()[0], _rss_mib()
    start, cpu = time.perf_counter(), time.process_time()
    search = _build(side, x)
    build_s, build_cpu_s = time.perf_counter() - start, time.process_time() - cpu
    added = _rss_mib() - rss
    found = timed_queries(search, q)
    return {
        "what": side, "build_s": build_s, "build_cpu_s": build_cpu_s, "index_mib": added,
        **found.times(), "recall": score_recall(found.scores, kth, K),
        "load": [load, os.getloadavg()[0]],
    }  # fmt: skip


def _vectors(max_columns: int, queries: int, cache: str) -> dict[str, Any]:
    """Writes the column vectors (hashing, or MiniLM's from the embedding cache ``cache``), the
    query vectors and each query's exact 10th score to build/bench/; returns what they are."""
    root = data_dir()
    cat = spider2_catalog(root, max_columns)
    _, x, q, kth = spider2_vectors(cat, spider2_questions(root, queries), cache)
    OUT.mkdir(parents=True, exist_ok=True)
    for name, a in (("hnsw_vectors", x), ("hnsw_queries", q), ("hnsw_kth", kth)):
        np.save(OUT / f"{name}.npy", a)
    return {
        "embedder": "minilm" if cache else "hashing", "columns": len(x), "dim": x.shape[1],
        "vectors_mib": x.nbytes / 2**20,
    }  # fmt: skip


def run(max_columns: int, rounds: int, queries: int, cache: str = "") -> dict[str, Any]:
    vectors = _vectors(max_columns, queries, cache)
    rows: list[dict[str, Any]] = []
    try:
        for r in range(rounds):
            for side in SIDES:
                cmd = [sys.executable, "-m", "bench.hnsw_side_by_side", "--worker", side]
                out = subprocess.run(cmd, capture_output=True, text=True, check=True)
                rows.append({"round": r, **json.loads(out.stdout.strip().splitlines()[-1])})
                print(f"  round {r} {side}: {rows[-1]}", flush=True)
    finally:  # the vectors are 400 MB at 100k columns
        for name in ("hnsw_vectors", "hnsw_queries", "hnsw_kth"):
            (OUT / f"{name}.npy").unlink(missing_ok=True)
    return {**vectors, "rows": rows, "ratios": ratios(rows)}


def ratios(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """tabret over the wheel, median over rounds: build wall, build CPU, memory added."""

    def median(key: str) -> float:
        by_round: dict[int, dict[str, float]] = {}
        for r in rows:
            by_round.setdefault(r["round"], {})[r["what"]] = r[key]
        pairs = [v["tabret"] / v["hnswlib wheel"] for v in by_round.values() if len(v) == 2]
        return float(np.median(pairs))

    return {key: median(key) for key in ("build_s", "build_cpu_s", "index_mib")}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-columns", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument(
        "--embedding-cache", default="", metavar="DIR", help="MiniLM vectors (default: hashing)"
    )
    ap.add_argument("--worker", choices=SIDES, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker)))
        return 0
    out = run(args.max_columns, args.rounds, args.queries, args.embedding_cache)
    write_json(JSON[out["embedder"]], out)
    print(f"{out['columns']:,} columns ({out['vectors_mib']:.0f} MiB of vectors), {out['ratios']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
