"""HNSW wheels beside tabret's default index and its ``hnsw`` on the vectors of every Spider
2.0-lite column (issue 23: "beside hnswlib / faiss / usearch wheels on the same vectors").

All 532,388 column texts (or the first ``--max-columns``) and the first ``--queries``
questions as all-MiniLM-L6-v2 vectors read from an embedding cache (``--embedding-cache``, as
``bench.scale``), or without it as the hashing embedder's 1024-d vectors. One process, one run:
each wheel's graph (hnswlib, faiss ``IndexHNSWFlat``, usearch; inner product, M 16,
ef_construction 200, two threads) is built and searched over an ef sweep, and tabret's ``auto``
(the default: ``pca`` for MiniLM, ``sparse`` for hashing at this size) and ``hnsw`` table
indexes are built and queried through the retriever (tables and columns, so tabret's rows
include its table search and, for hashing, the question's embedding), all against the exact top
10 of a numpy matrix product. Recall@10 is by score (an item tied with the 10th exact score
counts). Query times are CPU time of one question at a time, p50, with the wall p50 beside it;
build times wall and CPU; the load average beside each row. A wheel that is not installed is
skipped and named. Writes build/bench/wheels_minilm.json or wheels_hashing.json.

    python -m bench.wheels --embedding-cache DIR
    python -m bench.wheels
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

import numpy as np

from bench.common import FloatArray, Search, normalized, score_recall, timed_queries, write_json
from bench.scale import Preloaded, _rss_mib, spider2_questions
from tabret import HashingEmbedder, _core
from tabret.datasets import data_dir
from tabret.spider2 import spider2_catalog

M, EF_CONSTRUCTION, THREADS, K = 16, 200, 2, 10
EFS = (64, 256, 1024)


def _hnswlib(x: np.ndarray) -> tuple[Any, Callable[[Any, int], Search]]:
    import hnswlib

    index = hnswlib.Index(space="ip", dim=x.shape[1])
    index.init_index(max_elements=len(x), M=M, ef_construction=EF_CONSTRUCTION, random_seed=100)
    index.add_items(x, np.arange(len(x)), num_threads=THREADS)

    def at(ix: Any, ef: int) -> Search:
        ix.set_ef(ef)
        return lambda q: 1.0 - ix.knn_query(q[None, :], k=K)[1][0]  # distance 1 - ip

    return index, at


def _faiss(x: np.ndarray) -> tuple[Any, Callable[[Any, int], Search]]:
    import faiss

    faiss.omp_set_num_threads(THREADS)
    index = faiss.IndexHNSWFlat(x.shape[1], M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = EF_CONSTRUCTION
    index.add(x)
    faiss.omp_set_num_threads(1)

    def at(ix: Any, ef: int) -> Search:
        ix.hnsw.efSearch = ef
        return lambda q: ix.search(q[None, :], K)[0][0]

    return index, at


def _usearch(x: np.ndarray) -> tuple[Any, Callable[[Any, int], Search]]:
    from usearch.index import Index

    index = Index(
        ndim=x.shape[1], metric="ip", connectivity=M, expansion_add=EF_CONSTRUCTION, dtype="f32"
    )
    index.add(np.arange(len(x)), x, threads=THREADS)

    def at(ix: Any, ef: int) -> Search:
        ix.expansion_search = ef
        return lambda q: 1.0 - ix.search(q, K).distances  # distance 1 - ip

    return index, at


WHEELS = {"hnswlib": _hnswlib, "faiss": _faiss, "usearch": _usearch}


def _wheel_rows(
    name: str, x: np.ndarray, queries: np.ndarray, kth: np.ndarray
) -> list[dict[str, Any]]:
    load, rss = os.getloadavg()[0], _rss_mib()
    start, cpu = time.perf_counter(), time.process_time()
    index, at = WHEELS[name](x)
    build = {"build_s": time.perf_counter() - start, "build_cpu_s": time.process_time() - cpu}
    added = _rss_mib() - rss
    rows = []
    for ef in EFS:
        found = timed_queries(at(index, ef), queries)
        rows.append(
            {"what": name, "ef": ef, **build, "index_mib": added, **found.times(),
             "recall": score_recall(found.scores, kth), "load": load}
        )  # fmt: skip
    return rows


def _tabret_row(
    kind: Literal["auto", "hnsw"],
    cat: Any,
    embedder: Any,
    questions: list[str],
    kth: np.ndarray,
) -> dict[str, Any]:
    load, rss = os.getloadavg()[0], _rss_mib()
    start, cpu = time.perf_counter(), time.process_time()
    index = _core.TableIndex.build(
        cat, embedder, embedder.name, kind=kind, ef_search=EFS[0], progress=None
    )
    build = {"build_s": time.perf_counter() - start, "build_cpu_s": time.process_time() - cpu}
    added = _rss_mib() - rss
    retriever = _core.DenseRetriever(index, embedder, embedder.name)
    retriever.retrieve(questions[:1], K, K)  # warm-up

    def search(question: str) -> np.ndarray:
        columns = retriever.retrieve([question], K, K)[0].columns
        return np.array([c.score for c in columns], dtype=np.float32)

    found = timed_queries(search, questions)
    what = f"tabret {kind}" + (f" ({index.search_kinds['columns']})" if kind == "auto" else "")
    return {
        "what": what, "ef": EFS[0] if kind == "hnsw" else None, **build,
        "index_mib": added, **found.times(),
        "recall": score_recall(found.scores, kth), "load": load,
    }  # fmt: skip


class Vectors(NamedTuple):
    """Spider 2.0-lite columns and questions as one embedder's unit vectors."""

    embedder: Any  # Preloaded (MiniLM from the cache) or HashingEmbedder
    columns: FloatArray
    queries: FloatArray
    kth: FloatArray  # each query's exact 10th score


def spider2_vectors(cat: Any, questions: list[str], cache: str) -> Vectors:
    """The columns of ``cat`` and ``questions`` as MiniLM's vectors from the embedding cache
    ``cache``, or the hashing embedder's where it is empty."""
    texts = [cat.serialize_column(c) for c in range(cat.num_columns)]
    embedder: Any
    if cache:
        embedder = Preloaded(cache)
        x, q = embedder(texts), embedder(questions)
    else:
        embedder = HashingEmbedder()
        x = normalized(np.asarray(embedder.embed(texts), dtype=np.float32))
        q = normalized(np.asarray(embedder.embed(questions), dtype=np.float32))
    x = np.ascontiguousarray(x, dtype=np.float32)
    return Vectors(embedder, x, q, -np.partition(-(q @ x.T), K - 1, axis=1)[:, K - 1])


def run(cache: str, queries: int, wheels: Sequence[str], max_columns: int) -> dict[str, Any]:
    root = data_dir()
    cat = spider2_catalog(root, max_columns)
    questions = spider2_questions(root, queries)
    embedder, x, q, kth = spider2_vectors(cat, questions, cache)
    rows = [_tabret_row("auto", cat, embedder, questions, kth)]
    missing = [w for w in wheels if importlib.util.find_spec(w) is None]
    for name in wheels:
        if name not in missing:
            rows += _wheel_rows(name, x, q, kth)
    rows.append(_tabret_row("hnsw", cat, embedder, questions, kth))
    return {"embedder": "minilm" if cache else "hashing", "columns": len(x),
            "dim": int(x.shape[1]), "queries": len(q), "rows": rows,
            "missing": missing}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--embedding-cache", default="", metavar="DIR", help="MiniLM vectors (default: hashing)"
    )
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--max-columns", type=int, default=0, help="the first N columns (0: all)")
    ap.add_argument("--wheels", nargs="*", default=list(WHEELS), choices=list(WHEELS))
    args = ap.parse_args(argv)
    out = run(args.embedding_cache, args.queries, args.wheels, args.max_columns)
    write_json(f"wheels_{out['embedder']}.json", out)
    if out["missing"]:
        print("not installed, skipped:", ", ".join(out["missing"]))
    from bench.report import wheels_section

    print("\n".join(wheels_section(out)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
