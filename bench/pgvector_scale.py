"""tabret.pgvector beside the in-process exact index, on Spider 2.0-lite's column vectors.

Starts a throwaway PostgreSQL + pgvector cluster (bench/postgres_cluster.py), publishes the
hashing-embedder index of the first ``--max-columns`` Spider 2.0-lite columns, and measures, for
``--queries`` real Spider 2.0-lite questions: publish time, exact search in the server and in
process (p50/p99 wall, ms per query; beside it the mean CPU time per query of this process and
of the server's processes together, from /proc), and with ``--hnsw`` pgvector's HNSW build and
its recall@10 against exact (by score, ties counted, as bench/scale.py) at each ef_search.
Writes build/bench/pgvector.json (pgvector_532k.json for all columns) and prints a markdown
table.

    python -m bench.pgvector_scale --max-columns 100000 --queries 50 --hnsw
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import percentile, write_json
from bench.postgres_cluster import pgvector_server_bin, throwaway_cluster
from bench.scale import TARGET_RECALL, spider2_questions
from tabret import HashingEmbedder, TableIndex
from tabret.datasets import data_dir
from tabret.pgvector import PgVectorIndex
from tabret.spider2 import spider2_catalog

EF_SWEEP = (40, 100, 400, 1000)  # pgvector's hnsw.ef_search is at most 1000
# pgvector builds its HNSW graph in memory when it fits in maintenance_work_mem (and on two
# workers here): 532k columns need about 2.4 GB; the 64 MB default makes it build on disk.
SERVER = {"maintenance_work_mem": "4GB", "max_parallel_maintenance_workers": "2"}


def _timed(fn: Any) -> tuple[Any, float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - start, time.process_time() - cpu


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and of its children it has reaped."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def server_cpu(data_dir: Path) -> Callable[[], float]:
    """A clock of the CPU seconds of a running PostgreSQL server: its postmaster (with the
    children it reaped, such as parallel workers) and every live child (backends included)."""
    postmaster = int((data_dir / "postmaster.pid").read_text().split()[0])

    def clock() -> float:
        total = _cpu_s(postmaster)
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                    total += _cpu_s(int(stat.parent.name))
            except (OSError, ValueError):
                continue  # a process that ended meanwhile
        return total

    return clock


def _latencies(
    search: Any, queries: np.ndarray, server: Callable[[], float] | None = None
) -> tuple[list[Any], list[float], float]:
    """Hits and wall ms per query, and the mean CPU ms per query (this process, plus the
    server's when ``server`` is its clock)."""
    hits, ms = [], []
    cpu, served = time.process_time(), server() if server else 0.0
    for q in queries:
        start = time.perf_counter()
        hits.append(search(q[None, :])[0])
        ms.append(1000 * (time.perf_counter() - start))
    spent = time.process_time() - cpu + ((server() - served) if server else 0.0)
    return hits, ms, 1000 * spent / len(queries)


def _recall_by_score(exact: list[Any], approx: list[Any]) -> float:
    found = total = 0
    for e, a in zip(exact, approx, strict=True):
        kth = min(s for _, s in e)
        found += sum(1 for _, s in a if s >= kth - 1e-6)
        total += len(e)
    return 100.0 * found / max(total, 1)


def run(max_columns: int, queries: int, hnsw: bool) -> dict[str, Any]:
    root = data_dir()
    embedder = HashingEmbedder()
    cat = spider2_catalog(root, max_columns)
    index, build_s, _ = _timed(lambda: TableIndex.build(cat, embedder, progress=False))
    q = np.asarray(embedder.embed(spider2_questions(root, queries)), dtype=np.float32)
    q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    columns = np.asarray(index.core.column_vectors)

    def in_process(v: np.ndarray) -> list[list[tuple[int, float]]]:
        s = v @ columns.T
        top = np.argpartition(-s[0], 10)[:10]
        return [sorted(((int(i), float(s[0, i])) for i in top), key=lambda x: -x[1])]

    row: dict[str, Any] = {
        "columns": len(columns),
        "dim": columns.shape[1],
        "vectors_mib": columns.nbytes / 2**20,
        "index_build_s": build_s,
        "queries": len(q),
        "load_average_start": os.getloadavg()[0],
    }
    exact_local, local_ms, row["numpy_exact_cpu_ms"] = _latencies(in_process, q)
    row["numpy_exact_p50_ms"] = percentile(local_ms, 50)
    with pgvector_server_bin() as bindir:
        if bindir is None:
            raise SystemExit("no PostgreSQL server with pgvector (pip install pgserver)")
        with throwaway_cluster(bindir, "tabret-pgvector-bench-", SERVER) as cluster:
            url = f"{cluster.url}/postgres"
            server = server_cpu(cluster.socket_dir / "data")
            store, wall, cpu = _timed(lambda: PgVectorIndex.publish(index, url, "bench"))
            row["publish_s"], row["publish_cpu_s"] = wall, cpu
            exact, ms, row["pg_exact_cpu_ms"] = _latencies(
                lambda v: store.search(v, 10, kind="c", exact=True), q, server
            )
            row["pg_exact_p50_ms"], row["pg_exact_p99_ms"] = percentile(ms, 50), percentile(ms, 99)
            row["pg_exact_recall"] = _recall_by_score(exact_local, exact)
            store.close()
            if hnsw:
                store, wall, cpu = _timed(
                    lambda: PgVectorIndex.publish(index, url, "bench", hnsw=True)
                )
                row["publish_hnsw_s"] = wall
                sweep = {}
                for ef in EF_SWEEP:
                    got, ms, cpu_ms = _latencies(
                        lambda v, ef=ef: store.search(v, 10, kind="c", exact=False, ef_search=ef),
                        q,
                        server,
                    )
                    sweep[ef] = {
                        "cpu_ms": cpu_ms,
                        "p50_ms": percentile(ms, 50),
                        "p99_ms": percentile(ms, 99),
                        "recall": _recall_by_score(exact, got),
                    }
                row["hnsw"] = sweep
                store.close()
    row["load_average_end"] = os.getloadavg()[0]
    return row


def table(row: dict[str, Any]) -> str:
    lines = [
        f"Spider 2.0-lite, first {row['columns']:,} columns, {row['dim']}-d hashing vectors "
        f"({row['vectors_mib']:.0f} MiB), {row['queries']} questions; load average "
        f"{row['load_average_start']:.1f} → {row['load_average_end']:.1f}",
        "",
        "| search | build / publish s | p50 ms | p99 ms | CPU ms/q | recall@10 vs exact |",
        "|---|---|---|---|---|---|",
        f"| in-process exact (numpy matmul) | {row['index_build_s']:.1f} (embed) | "
        f"{row['numpy_exact_p50_ms']:.1f} | | {row['numpy_exact_cpu_ms']:.1f} | 100 |",
        f"| pgvector exact (sequential scan) | {row['publish_s']:.1f} | "
        f"{row['pg_exact_p50_ms']:.1f} | {row['pg_exact_p99_ms']:.1f} | "
        f"{row['pg_exact_cpu_ms']:.1f} | {row['pg_exact_recall']:.1f} |",
    ]
    for ef, s in row.get("hnsw", {}).items():
        flag = "" if s["recall"] >= TARGET_RECALL else " (below target)"
        lines.append(
            f"| pgvector HNSW, ef_search {ef} | {row['publish_hnsw_s']:.1f} | "
            f"{s['p50_ms']:.1f} | {s['p99_ms']:.1f} | {s['cpu_ms']:.1f} | "
            f"{s['recall']:.1f}{flag} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-columns", type=int, default=100_000, help="0: all 532,388")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--hnsw", action="store_true", help="also pgvector's HNSW (slow to build)")
    args = ap.parse_args(argv)
    row = run(args.max_columns, args.queries, args.hnsw)
    write_json("pgvector_532k.json" if args.max_columns == 0 else "pgvector.json", row)
    print(table(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
