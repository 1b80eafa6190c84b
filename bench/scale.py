"""Part 2: scale. Index build time, query latency (p50/p99), peak memory and HNSW recall
against exact search (swept over the search width ef, with the smallest ef reaching the
TARGET_RECALL of 95%: report.py refuses a row that reaches it at no ef), on the SocialDB
warehouse schema (1,046 tables, 18,891 columns) and
Spider 2.0-lite (8,255 tables, 532,388 columns), with the hashing embedder (1024 dims); and
how the cost grows with the number of indexed columns (Spider 2.0-lite prefixes). With
``--embedding-cache DIR``: Spider 2.0-lite with MiniLM's dense vectors instead (read from that
embedding cache, filled first where it lacks a text), every dense index kind against exact
search (scale_minilm.json). With ``--families``: all of Spider 2.0-lite with its table families
collapsed (date-sharded and numbered tables with the same columns as one table,
:func:`tabret.families.collapse_families`), exact and the default kind, with the hashing
vectors and (given ``--embedding-cache``) MiniLM's (scale_families.json).

Every configuration runs in its own process (``--worker``), so its peak RSS (ru_maxrss) is its
own: catalog + table index (+ HNSW graphs) + one query batch. Queries are Spider 2.0-lite
questions (SocialDB has none), one question per call, through the Python binding: each call
embeds the question (hashing, C++) and searches. Recall@10 of HNSW is measured against the
exact index's top 10 for the same questions. Query latencies are CPU time of the querying
process (a search runs on one thread; the machine is shared, so wall time carries other
tenants' load; the wall p50 is recorded too). Build time is wall time (the HNSW build uses
every core), its CPU time recorded beside it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import OUT, machine, percentile, write_json
from tabret import Catalog, HashingEmbedder, _core
from tabret.datasets import data_dir
from tabret.families import collapse_families
from tabret.spider2 import QUESTIONS, distinct, names, spider2_catalog

SOCIALDB = "crush4sql/demo/utils/ndap_super.json"

#: An approximate index must find this share (percent) of the exact top 10 columns, by score,
#: at some ef of EF_SWEEP; report.py refuses to report a row that does not.
TARGET_RECALL = 95.0
#: Search widths tried on an HNSW index: a search for k = ef results (hnswlib searches with
#: max(ef_search, k)), of which the first 10 are kept, is the search at that ef.
EF_SWEEP = (64, 128, 256, 512, 1024)


def socialdb_catalog(root: Path) -> Catalog:
    """SocialDB: one database, a table per dataset (its name), its columns."""
    raw = json.loads((root / SOCIALDB).read_text(encoding="utf-8"))
    cat = Catalog()
    db = cat.add_database("socialdb")
    for key, entry in raw.items():
        t = cat.add_table(db, f"t{key}", str(entry["name"]), str(entry.get("overview", ""))[:200])
        for _, name in distinct(names(entry["columns"])):
            cat.add_column(t, name)
    return cat


def spider2_questions(root: Path, n: int) -> list[str]:
    lines = (root / QUESTIONS).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines[:n]]


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mib() -> float:
    """Current resident set size (VmRSS)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Preloaded:
    """MiniLM vectors from an embedding cache (tabret.embedding_cache), held in memory so that
    an index build or a query costs tabret's time only (§6 measures the model's). A text the
    cache lacks is embedded by MiniLM and stored (filling the cache once takes 50 minutes
    to 2 hours for Spider 2.0-lite's columns on 2 cores, at 130 to 180 texts a second)."""

    def __init__(self, directory: str) -> None:
        from tabret.embedders import default_embedder
        from tabret.embedding_cache import DiskCachedEmbedder

        self.cache = DiskCachedEmbedder(default_embedder(), directory)
        self.name = self.cache.name
        self.memo: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.memo))
        for start in range(0, len(missing), 4096):
            batch = missing[start : start + 4096]
            self.memo.update(
                zip(batch, np.asarray(self.cache.embed(batch), dtype=np.float32), strict=True)
            )
        return np.stack([self.memo[t] for t in texts])


def _embedder(spec: dict[str, Any], cat: Catalog, questions: list[str]) -> Any:
    """The hashing embedder, or MiniLM preloaded with every text the build and the queries
    embed (tables through a tables-only index, so that their texts are the index's)."""
    if spec.get("embedder", "hashing") == "hashing":
        return HashingEmbedder()
    embedder = Preloaded(spec["embedding_cache"])
    embedder([cat.serialize_column(c) for c in range(cat.num_columns)] + questions)
    _core.TableIndex.build(cat, embedder, embedder.name, columns=False, progress=None)
    return embedder


def fill_cache(config: dict[str, Any]) -> None:
    """Embeds what the rows of @p config will read and the cache lacks, before any of them is
    timed: the first run's hour or more of MiniLM must not count against a row's timeout (it
    once made the exact row time out, leaving the other rows nothing to be compared with)."""
    print(f"  filling the embedding cache for {config} ...", flush=True)
    root = data_dir()
    _embedder(config, _catalog(config, root), spider2_questions(root, config["queries"]))


def _catalog(spec: dict[str, Any], root: Path) -> Catalog:
    """The catalog a configuration names: SocialDB, or Spider 2.0-lite (its first
    ``max_columns`` columns; its families collapsed with ``families``)."""
    if spec["catalog"] == "socialdb":
        return socialdb_catalog(root)
    cat = spider2_catalog(root, spec.get("max_columns", 0))
    return collapse_families(cat).catalog if spec.get("families") else cat


def _results(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows as written: without the top-10 lists kept for the comparisons, nor the cache's
    path."""
    for row in rows:
        row.pop("top", None)
        row.pop("embedding_cache", None)
    return rows


def worker(spec: dict[str, Any]) -> dict[str, Any]:
    """Builds one index and queries it; returns its measurements."""
    load = os.getloadavg()[0]
    root = data_dir()
    start = time.perf_counter()
    cat = _catalog(spec, root)
    load_s = time.perf_counter() - start
    questions = spider2_questions(root, spec["queries"])
    embedder = _embedder(spec, cat, questions)
    gc.collect()
    rss_catalog = _rss_mib()
    start, cpu = time.perf_counter(), time.process_time()
    options = {key: spec[key] for key in ("sparse_max_postings", "pca_rescore") if key in spec}
    index = _core.TableIndex.build(
        cat, embedder, embedder.name, columns=True, kind=spec["kind"], progress=None, **options
    )
    build_s = time.perf_counter() - start
    build_cpu_s = time.process_time() - cpu
    rss_index = _rss_mib()
    retriever = _core.DenseRetriever(index, embedder, embedder.name)
    table_ms, column_ms, table_wall, column_wall, tops = [], [], [], [], []
    retriever.retrieve(questions[:1], 10, 10)  # warm-up
    for q in questions:
        start, cpu = time.perf_counter(), time.process_time()
        retriever.retrieve([q], 10)
        table_ms.append(1000 * (time.process_time() - cpu))
        table_wall.append(1000 * (time.perf_counter() - start))
        start, cpu = time.perf_counter(), time.process_time()
        r = retriever.retrieve([q], 10, 10)[0]
        column_ms.append(1000 * (time.process_time() - cpu))
        column_wall.append(1000 * (time.perf_counter() - start))
        tops.append(
            [
                [[t.table, t.score] for t in r.tables],
                [[c.column, c.score] for c in r.columns],
            ]
        )
    sweep = _ef_sweep(retriever, questions) if spec["kind"] == "hnsw" else {}
    return {
        **spec,
        "searched": index.search_kinds,
        "load_average": [round(load, 2), round(os.getloadavg()[0], 2)],
        "sweep": sweep,
        "tables": cat.num_tables,
        "columns": cat.num_columns,
        "catalog_load_s": load_s,
        "build_s": build_s,
        "build_cpu_s": build_cpu_s,
        "table_wall_p50_ms": percentile(table_wall, 50),
        "column_wall_p50_ms": percentile(column_wall, 50),
        "table_p50_ms": percentile(table_ms, 50),
        "table_p99_ms": percentile(table_ms, 99),
        "column_p50_ms": percentile(column_ms, 50),
        "column_p99_ms": percentile(column_ms, 99),
        "rss_catalog_mib": rss_catalog,
        "index_mib": rss_index - rss_catalog,
        "rss_mib": _rss_mib(),
        "peak_rss_mib": _peak_rss_mib(),
        "top": tops,
    }


def _ef_sweep(retriever: Any, questions: Sequence[str]) -> dict[str, Any]:
    """Per ef of EF_SWEEP: the top 10 columns of each question when the column search asks
    for ef columns (= searches at ef), and the CPU time per query."""
    out: dict[str, Any] = {}
    for ef in EF_SWEEP:
        tops, cpu_ms = [], []
        for q in questions:
            cpu = time.process_time()
            r = retriever.retrieve([q], 10, ef)[0]
            cpu_ms.append(1000 * (time.process_time() - cpu))
            tops.append([[], [[c.column, c.score] for c in r.columns[:10]]])
        out[str(ef)] = {"p50_ms": percentile(cpu_ms, 50), "top": tops}
    return out


Top = list[list[list[list[float]]]]  # per query: [tables, columns], each [[id, score], ...]


def _recall(exact: Top, approx: Top, level: int) -> tuple[float, float]:
    """(recall by id, recall by score): the share of the exact top 10 found by id, and the
    share of the approximate top 10 scoring at least the exact 10th score (ties count: many
    Spider 2.0-lite columns have identical texts, so the exact top 10 is one arbitrary pick
    among equal scores)."""
    by_id = by_score = total = 0
    for e, a in zip(exact, approx, strict=True):
        ids = {int(x[0]) for x in e[level]}
        by_id += sum(1 for x in a[level] if int(x[0]) in ids)
        kth = min((x[1] for x in e[level]), default=0.0)
        by_score += sum(1 for x in a[level] if x[1] >= kth - 1e-6)
        total += len(e[level])
    n = max(total, 1)
    return 100.0 * by_id / n, 100.0 * by_score / n


def _choose_ef(hnsw: dict[str, Any], exact: Top) -> None:
    """Column recall@10 (by score) of each swept ef, and the smallest ef reaching
    TARGET_RECALL with its latency (``ef_for_target`` None when no ef does)."""
    sweep = []
    for ef, point in hnsw.pop("sweep").items():
        _, by_score = _recall(exact, point["top"], 1)
        sweep.append({"ef": int(ef), "column_score_recall": by_score, "p50_ms": point["p50_ms"]})
    hnsw["ef_sweep"] = sweep
    hnsw["target_recall"] = TARGET_RECALL
    good = [p for p in sweep if p["column_score_recall"] >= TARGET_RECALL]
    hnsw["ef_for_target"] = good[0]["ef"] if good else None


def run_worker(spec: dict[str, Any], timeout: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.scale", "--worker", json.dumps(spec)]
    print(f"  {spec} ...", flush=True)
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return {**spec, "error": f"did not finish within {timeout} s"}
    except subprocess.CalledProcessError as err:
        why = err.stderr.strip().splitlines()[-1] if err.stderr else "failed"
        print(f"    failed: {why}", flush=True)
        return {**spec, "error": why}
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"    build {result['build_s']:.1f} s, tables p50 {result['table_p50_ms']:.2f} ms, "
        f"columns p50 {result['column_p50_ms']:.2f} ms, index {result['index_mib']:.0f} MiB, "
        f"peak {result['peak_rss_mib']:.0f} MiB",
        flush=True,
    )
    return result


def _over_budget(config: dict[str, Any]) -> bool:
    """Whether a question's posting lists over this catalog's columns exceed the sparse index's
    default budget (about 50,000 hashed columns and more): Spider 2.0-lite from 100k columns."""
    return config["catalog"] == "spider2" and not 0 < config.get("max_columns", 0) < 50_000


def _score_against(exact: dict[str, Any], row: dict[str, Any]) -> None:
    """Recall@10 of @p row's tables and columns against the exact row's (by id and by score)."""
    if "top" in exact and "top" in row:
        for level, name in ((0, "table"), (1, "column")):
            by_id, by_score = _recall(exact["top"], row["top"], level)
            row[f"{name}_recall_at_10"] = by_id
            row[f"{name}_score_recall_at_10"] = by_score


#: Index kinds measured with MiniLM's dense vectors (sparse is for sparse vectors only; auto,
#: the default, picks exact or pca by size).
DENSE_KINDS = ("auto", "int8", "pca", "hnsw")


def run_dense(sizes: Sequence[int], queries: int, timeout: int, cache: str) -> dict[str, Any]:
    """Spider 2.0-lite prefixes (0: all 532,388 columns) with MiniLM vectors from ``cache``:
    every dense index kind against exact search."""
    rows = []
    for n in sizes:
        config = {
            "catalog": "spider2",
            "max_columns": n,
            "embedder": "minilm",
            "embedding_cache": cache,
            "queries": queries,
        }
        fill_cache(config)
        exact = run_worker({**config, "kind": "exact"}, timeout)
        rows.append(exact)
        for kind in DENSE_KINDS:
            row = run_worker({**config, "kind": kind}, timeout)
            _score_against(exact, row)
            if kind == "hnsw" and "top" in exact and row.get("sweep"):
                _choose_ef(row, exact["top"])
            rows.append(row)
    return {"machine": machine(), "queries": queries, "embedder": "minilm", "rows": _results(rows)}


def run_families(queries: int, timeout: int, cache: str | None) -> dict[str, Any]:
    """All of Spider 2.0-lite with its families collapsed: exact and auto, hashing vectors and
    (with ``cache``) MiniLM's, each approximate row against its own exact row."""
    rows = []
    embedders = [{"embedder": "hashing"}]
    if cache:
        embedders.append({"embedder": "minilm", "embedding_cache": cache})
    for vectors in embedders:
        config = {"catalog": "spider2", "families": True, "queries": queries, **vectors}
        if vectors["embedder"] == "minilm":
            fill_cache(config)
        exact = run_worker({**config, "kind": "exact"}, timeout)
        auto = run_worker({**config, "kind": "auto"}, timeout)
        _score_against(exact, auto)
        rows += [exact, auto]
    return {"machine": machine(), "queries": queries, "rows": _results(rows)}


def run(sizes: Sequence[int], queries: int, timeout: int, hnsw_max: int) -> dict[str, Any]:
    configs: list[dict[str, Any]] = [{"catalog": "socialdb"}]
    configs += [{"catalog": "spider2", "max_columns": n} for n in sizes]
    configs.append({"catalog": "spider2", "max_columns": 0})
    rows = []
    for config in configs:
        exact = run_worker({**config, "kind": "exact", "queries": queries}, timeout)
        rows.append(exact)
        # sparse with its default budget of postings (exact below it), and over catalogs where
        # the budget binds also without one (exact: recall 100 up to float ties)
        budgets = [{}, {"sparse_max_postings": 0}] if _over_budget(config) else [{}]
        # auto, the default kind (exact or sparse by size), then sparse by itself
        for kind, budget in [("auto", {}), *(("sparse", b) for b in budgets)]:
            row = run_worker({**config, "kind": kind, **budget, "queries": queries}, timeout)
            _score_against(exact, row)
            rows.append(row)
        columns = exact.get("columns", config.get("max_columns", 0))
        if columns and hnsw_max and columns > hnsw_max:
            rows.append({**config, "kind": "hnsw", "error": f"skipped (> {hnsw_max} columns)"})
            continue
        hnsw = run_worker({**config, "kind": "hnsw", "queries": queries}, timeout)
        _score_against(exact, hnsw)
        if "top" in exact and hnsw.get("sweep"):
            _choose_ef(hnsw, exact["top"])
        rows.append(hnsw)
    return {"machine": machine(), "queries": queries, "rows": _results(rows)}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        help="Spider 2.0-lite prefixes in columns (default 1000 10000 100000; with "
        "--embedding-cache 10000 100000 0, 0 meaning all columns)",
    )
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--timeout", type=int, default=2400, help="seconds per configuration")
    p.add_argument(
        "--hnsw-max", type=int, default=0, help="skip HNSW above this many columns (0: never)"
    )
    p.add_argument(
        "--embedding-cache",
        metavar="DIR",
        help="instead of the hashing rows: Spider 2.0-lite with MiniLM vectors from this "
        "embedding cache (filled first where it lacks texts), every dense index kind, "
        "written to scale_minilm.json; --sizes then defaults to 10000, 100000 and 0 (all "
        "columns)",
    )
    p.add_argument(
        "--families",
        action="store_true",
        help="instead: all of Spider 2.0-lite with table families collapsed, exact and auto "
        "(MiniLM too with --embedding-cache), written to scale_families.json",
    )
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    if args.families:
        families = run_families(args.queries, args.timeout, args.embedding_cache)
        write_json("scale_families.json", families)
        return 0
    if args.embedding_cache:
        dense = run_dense(
            args.sizes or [10000, 100000, 0], args.queries, args.timeout, args.embedding_cache
        )
        write_json("scale_minilm.json", dense)
        return 0
    sizes = args.sizes or [1000, 10000, 100000]
    write_json("scale.json", run(sizes, args.queries, args.timeout, args.hnsw_max))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
