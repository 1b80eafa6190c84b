"""Exact search near the memory bandwidth (issue 23, item 3): tabret's exact scan, float32 and
int8 (quantised, exact re-scoring), one query at a time and in batches, beside numpy's matmul and
a memory-bandwidth scan of the same bytes, interleaved in one process.

The first ``--max-columns`` Spider 2.0-lite columns (0 = all 532,388) as 1024-d hashing vectors
(what ``TableIndex.build`` embeds), or random unit vectors of ``--dim`` dimensions when given
(a dense, MiniLM-sized shape: speed depends on the shape, not on the model). Queries are
Spider 2.0-lite questions embedded the same way (hashing), or random unit vectors. Everything
runs on one thread (numpy's BLAS limited to one before it loads), and times are CPU time of this
process, with the wall time of the same calls and the load average beside them.

- *bandwidth*: one pass over the same bytes, the fastest of three numpy passes (``sum``, a
  bitwise OR reduction, and a matrix-vector product without the top-k), once beside every
  single query: the p50 a single-query scan's p50 is held to;
- *single*: top-10 for one query per call (tabret ``ExactIndex.search``; numpy ``v @ q`` then
  ``argpartition``);
- *batch*: ``--batch`` queries per call (tabret one call; numpy ``Q @ V.T`` then a top-10 per
  row).
Recall@10 of int8 against float32 exact is checked on every query (it must be 100: the int8
search is exact by construction).

    python -m bench.exact_scan --max-columns 0 --queries 30 --batch 64
    python -m bench.exact_scan --dim 384      # 532,388 random 384-d rows: MiniLM's shape

Writes build/bench/exact_scan_hashing.json or exact_scan_random.json (report section 9).
"""

from __future__ import annotations

import argparse
import os

# One BLAS thread, set before numpy loads: tabret's search runs on one thread too.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

from bench.common import normalized, percentile, write_json  # noqa: E402
from bench.scale import spider2_questions  # noqa: E402
from tabret import HashingEmbedder, _core  # noqa: E402
from tabret.datasets import data_dir  # noqa: E402
from tabret.spider2 import spider2_catalog  # noqa: E402

K = 10
Floats = npt.NDArray[np.float32]


def cpu_ms(fn: Callable[..., object], *args: object) -> float:
    return timed_ms(fn, *args)[0]


def timed_ms(fn: Callable[..., object], *args: object, per: int = 1) -> tuple[float, float]:
    """CPU and wall milliseconds of fn(*args), each divided by ``per``."""
    start, begun = time.process_time(), time.perf_counter()
    fn(*args)
    return (
        1000 * (time.process_time() - start) / per,
        1000 * (time.perf_counter() - begun) / per,
    )


def numpy_top_k(vectors: Floats, queries: Floats) -> npt.NDArray[np.int64]:
    scores = queries @ vectors.T
    part = np.argpartition(-scores, K - 1, axis=1)[:, :K]
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def bandwidth_ms(vectors: Floats, query: Floats) -> float:
    """One pass over the bytes: the fastest of three numpy passes (two SIMD reductions and
    OpenBLAS's matrix-vector product, which numpy's huge-page-backed arrays make the fastest
    here)."""
    words = vectors.reshape(-1).view(np.uint64)
    return min(
        cpu_ms(vectors.sum),
        cpu_ms(np.bitwise_or.reduce, words),
        cpu_ms(np.matmul, vectors, query),
    )


def vectors_and_queries(
    max_columns: int, dim: int, queries: int, batch: int
) -> tuple[Floats, Floats, str]:
    count = max(queries, batch)
    if dim:
        rng = np.random.default_rng(0)
        n = max_columns or 532_388
        vectors = normalized(rng.standard_normal((n, dim), dtype=np.float32))
        return vectors, normalized(rng.standard_normal((count, dim), dtype=np.float32)), "random"
    root = data_dir()
    embedder = HashingEmbedder()
    cat = spider2_catalog(root, max_columns)
    index = _core.TableIndex.build(cat, embedder, embedder.name, kind="exact", progress=None)
    vectors = np.ascontiguousarray(index.column_vectors, dtype=np.float32)
    del index
    q = normalized(np.asarray(embedder.embed(spider2_questions(root, count)), dtype=np.float32))
    return vectors, q, "hashing"


def run(max_columns: int, dim: int, queries: int, batch: int, rounds: int) -> dict[str, Any]:
    load = os.getloadavg()[0]
    vectors, qs, source = vectors_and_queries(max_columns, dim, queries, batch)
    start = time.process_time()
    exact = _core.ExactIndex(vectors)
    build_exact = time.process_time() - start
    start = time.process_time()
    int8 = _core.ExactIndex(vectors, quantize=True)
    build_int8 = time.process_time() - start
    searches: dict[str, Callable[[Floats], object]] = {
        "float": lambda q: exact.search(q, K),
        "int8": lambda q: int8.search(q, K),
        "numpy": lambda q: numpy_top_k(vectors, q),
    }
    times: dict[str, list[float]] = {k: [] for k in ("bandwidth", *searches)}
    walls: dict[str, list[float]] = {k: [] for k in searches}
    batch_times: dict[str, list[float]] = {k: [] for k in searches}
    batch_walls: dict[str, list[float]] = {k: [] for k in searches}
    found = total = 0
    for r in range(rounds):  # interleaved: every kind sees the same load
        for i in range(queries):
            times["bandwidth"].append(bandwidth_ms(vectors, qs[i]))
            q = qs[i : i + 1]
            for kind, search in searches.items():
                cpu, wall = timed_ms(search, q)
                times[kind].append(cpu)
                walls[kind].append(wall)
            if r == 0:
                want, _ = exact.search(q, K)
                got, _ = int8.search(q, K)
                found += len(set(got[0].tolist()) & set(want[0].tolist()))
                total += len(want[0])
        for kind, search in searches.items():
            cpu, wall = timed_ms(search, qs[:batch], per=batch)
            batch_times[kind].append(cpu)
            batch_walls[kind].append(wall)
    mib = vectors.nbytes / 2**20
    bw = percentile(times["bandwidth"], 50)
    return {
        "source": source,
        "rows": int(vectors.shape[0]),
        "dim": int(vectors.shape[1]),
        "vector_mib": mib,
        "queries": queries,
        "batch": batch,
        "rounds": rounds,
        "load_average": [round(load, 2), round(os.getloadavg()[0], 2)],
        "build_cpu_s": {"float": build_exact, "int8": build_int8},
        "index_mib": {"float": exact.bytes / 2**20, "int8": int8.bytes / 2**20},
        "bandwidth_ms": bw,
        "bandwidth_gb_s": vectors.nbytes / bw / 1e6,
        "single_p50_ms": {k: percentile(v, 50) for k, v in times.items() if k != "bandwidth"},
        "single_p99_ms": {k: percentile(v, 99) for k, v in times.items() if k != "bandwidth"},
        "batch_ms_per_query": {k: min(v) for k, v in batch_times.items()},
        "single_wall_p50_ms": {k: percentile(v, 50) for k, v in walls.items()},
        "batch_wall_ms_per_query": {k: min(v) for k, v in batch_walls.items()},
        "int8_recall_at_10": 100.0 * found / max(total, 1),
    }


def markdown(row: dict[str, Any]) -> str:
    s, p, b = row["single_p50_ms"], row["single_p99_ms"], row["batch_ms_per_query"]
    ws, wb = row["single_wall_p50_ms"], row["batch_wall_ms_per_query"]

    def cells(k: str) -> str:
        return (
            f"{s[k]:.1f} / {p[k]:.1f} ({ws[k]:.1f}) | {s[k] / row['bandwidth_ms']:.2f} | "
            f"{b[k]:.2f} ({wb[k]:.2f})"
        )

    return "\n".join(
        [
            f"{row['rows']:,} x {row['dim']} {row['source']} vectors ({row['vector_mib']:.0f} "
            f"MiB), one thread, CPU ms (wall in parentheses), load average "
            f"{row['load_average'][0]} → {row['load_average'][1]}; bandwidth scan "
            f"{row['bandwidth_ms']:.1f} ms ({row['bandwidth_gb_s']:.1f} GB/s) p50.",
            "",
            f"| search | single p50 / p99 ms (wall p50) | / bandwidth scan | batch of "
            f"{row['batch']}, ms per query (wall) | index MiB | recall@10 vs exact |",
            "|---|---|---|---|---|---|",
            f"| tabret exact float32 | {cells('float')} | {row['index_mib']['float']:.0f} | 100 |",
            f"| tabret exact int8 + re-scoring | {cells('int8')} | "
            f"{row['index_mib']['int8']:.0f} | {row['int8_recall_at_10']:.1f} |",
            f"| numpy matmul + argpartition | {cells('numpy')} | {row['vector_mib']:.0f} | 100 |",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-columns", type=int, default=0, help="0 = all 532,388")
    p.add_argument("--dim", type=int, default=0, help="random unit vectors of this dimension")
    p.add_argument("--queries", type=int, default=30)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    row = run(args.max_columns, args.dim, args.queries, args.batch, args.rounds)
    name = "exact_scan_" + row["source"] + ".json"
    print(f"wrote {write_json(name, row)}")
    print(markdown(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
