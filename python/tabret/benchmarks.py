"""Benchmarks with gold tables: SpiderUnion, BirdUnion (from ``$TABRET_DATA_DIR``) and the demo.

- SpiderUnion: the 658 Spider dev questions whose SQL has no ``*``; corpus = all 166 Spider
  databases (876 tables). Questions and gold tables from ``murre/dataset/spider/dev.json``.
- BirdUnion: the 1,534 BIRD dev questions; corpus = the 11 dev databases (75 tables).
  Questions and gold tables from ``murre/dataset/bird/dev.json``, the *intermediate* BIRD
  revision (MURRE's); ``bird/dev.json`` is newer and CRUSH's file older.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tabret.catalog import Catalog
from tabret.datasets import data_dir, demo_catalog, demo_questions

__all__ = ["BENCHMARKS", "Benchmark", "BenchmarkQuestion", "load_benchmark"]


@dataclass(frozen=True)
class BenchmarkQuestion:
    id: str
    db: str
    question: str
    gold_tables: tuple[int, ...]  # table ids in the benchmark's catalog


@dataclass(frozen=True)
class Benchmark:
    name: str
    catalog: Catalog
    questions: list[BenchmarkQuestion]
    source: str  # which files (and which BIRD revision) the gold comes from


def _gold_from_rel_schema(
    cat: Catalog, db: str, rel_schema: list[str], where: str
) -> tuple[int, ...]:
    """``rel_schema`` names tables by natural-language name (``db.table name(cols…)``)."""
    by_nl: dict[tuple[str, str], int] = {}
    for t_id, t in enumerate(cat.tables):
        key = (cat.database(t.database).name.lower(), t.nl_name.lower())
        by_nl.setdefault(key, t_id)
    gold = []
    for item in rel_schema:
        db_name, rest = item.split(".", 1)
        name = rest.split("(", 1)[0].strip().lower()
        t = by_nl.get((db_name.lower(), name))
        if t is None or db_name != db:
            raise ValueError(f"{where}: gold table '{db_name}.{name}' is not in the catalog")
        gold.append(t)
    return tuple(dict.fromkeys(gold))


def _murre(name: str, tables: str, questions: str, source: str, root: Path | None) -> Benchmark:
    root = root or data_dir()
    cat = Catalog.from_spider_json(root / tables)
    path = root / questions
    raw = json.loads(path.read_text(encoding="utf-8"))
    qs = [
        BenchmarkQuestion(
            str(q["id"]),
            q["db_id"],
            q["utterance"],
            _gold_from_rel_schema(cat, q["db_id"], q["rel_schema"], f"{path} question {q['id']}"),
        )
        for q in raw
    ]
    return Benchmark(name, cat, qs, source)


def spider_union(root: Path | None = None) -> Benchmark:
    return _murre(
        "spider-union",
        "spider/tables.json",
        "murre/dataset/spider/dev.json",
        "Spider dev without '*' (murre/dataset/spider/dev.json); corpus spider/tables.json",
        root,
    )


def bird_union(root: Path | None = None) -> Benchmark:
    return _murre(
        "bird-union",
        "bird/dev_tables.json",
        "murre/dataset/bird/dev.json",
        "BIRD dev, intermediate revision (murre/dataset/bird/dev.json); "
        "corpus bird/dev_tables.json",
        root,
    )


def demo(root: Path | None = None) -> Benchmark:
    cat = demo_catalog()
    qs = []
    for q in demo_questions():
        ids = []
        for name in q.gold_tables:
            db, table = name.split(".", 1)
            t = cat.find_table(db, table)
            assert t is not None, f"demo gold table {name} missing"
            ids.append(t)
        qs.append(BenchmarkQuestion(q.id, q.db, q.question, tuple(ids)))
    return Benchmark("demo", cat, qs, "tabret demo catalog (package data)")


BENCHMARKS: dict[str, Callable[[Path | None], Benchmark]] = {
    "spider-union": spider_union,
    "bird-union": bird_union,
    "demo": demo,
}


def load_benchmark(name: str, root: Path | None = None) -> Benchmark:
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark '{name}' (choose from {', '.join(BENCHMARKS)})")
    return BENCHMARKS[name](root)
