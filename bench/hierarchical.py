"""Hierarchical column search, measured (issue 23, item 1): rank the tables first, then search
only the columns of the top T tables, and compare its top-10 columns with the exact top 10.

All Spider 2.0-lite columns (or the first ``--max-columns``) as 1024-d hashing vectors, the
first ``--queries`` Spider 2.0-lite questions embedded the same way. Both stages are exact
(numpy products over the index's vectors), so whatever is missed is missed by the hierarchy
itself. Recall@10 by score: a returned column counts when its score reaches the exact 10th
best (ties with the 10th count). The milliseconds are numpy's, per question, with the gather
of the T tables' columns: a shape of the cost, not tabret's.

    python -m bench.hierarchical --tables 50 100 200 500 1000 2000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import numpy as np

from bench.common import FloatArray, percentile
from bench.scale import spider2_questions
from tabret import HashingEmbedder, _core
from tabret.datasets import data_dir
from tabret.spider2 import spider2_catalog


def columns_by_table(cat: _core.Catalog) -> tuple[np.ndarray, np.ndarray]:
    """Column ids ordered by table, and where each table's run starts (num_tables + 1)."""
    table = np.fromiter((c.table for c in cat.columns), dtype=np.int64, count=cat.num_columns)
    order = np.argsort(table, kind="stable")
    return order, np.searchsorted(table[order], np.arange(cat.num_tables + 1))


def tenth_best(scores: FloatArray) -> float:
    return float(np.partition(scores, len(scores) - 10)[len(scores) - 10])


def run(max_columns: int, queries: int, sizes: Sequence[int]) -> list[dict[str, float]]:
    root = data_dir()
    cat = spider2_catalog(root, max_columns)
    embedder = HashingEmbedder()
    index = _core.TableIndex.build(
        cat, embedder, embedder.name, columns=True, kind="exact", progress=None
    )
    tables = np.asarray(index.table_vectors)
    columns = np.asarray(index.column_vectors)
    order, starts = columns_by_table(cat)
    q = np.asarray(embedder.embed(spider2_questions(root, queries)), dtype=np.float32)
    q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    exact = [tenth_best(columns @ row) for row in q]
    rows = []
    for t in sizes:
        recall, ms, scanned = [], [], []
        for row, tenth in zip(q, exact, strict=True):
            start = time.perf_counter()
            top = np.argpartition(-(tables @ row), min(t, len(tables) - 1))[:t]
            ids = np.concatenate([order[starts[x] : starts[x + 1]] for x in top])
            scores = columns[ids] @ row
            best = scores[np.argpartition(-scores, min(10, len(scores) - 1))[:10]]
            ms.append(1000 * (time.perf_counter() - start))
            recall.append(float(np.sum(best >= tenth)) / 10)
            scanned.append(len(ids))
        rows.append(
            {
                "tables": t,
                "recall_at_10": float(np.mean(recall)),
                "columns_scanned_p50": percentile([float(x) for x in scanned], 50),
                "numpy_ms_p50": percentile(ms, 50),
            }
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-columns", type=int, default=0, help="0 = all 532,388")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--tables", type=int, nargs="+", default=[50, 100, 200, 500, 1000, 2000])
    args = p.parse_args(argv)
    print("| top tables T | recall@10 vs exact | columns scanned (p50) | numpy ms (p50) |")
    print("|---|---|---|---|")
    for r in run(args.max_columns, args.queries, args.tables):
        print(
            f"| {r['tables']} | {r['recall_at_10']:.3f} | {r['columns_scanned_p50']:,.0f} "
            f"| {r['numpy_ms_p50']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
