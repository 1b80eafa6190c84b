"""Incremental re-indexing (issue 51 item 2): a full build of a catalog after a schema change
beside ``TableIndex.update`` of the index before it (what ``tabret index --update`` runs), on the
same changed catalog: texts embedded, seconds, and that both indexes hold the same texts and
vectors.

The change: ``--share`` of the tables (chosen with a fixed seed) gain one text column, as a
migration adding a field does; their texts change, and each gains a column text.

Run: ``python -m bench.update [--benchmark spider2-lite] [--embedder hashing] [--share 0.01]``.
Prints one Markdown row per benchmark.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import time
from typing import Any

import numpy as np

from tabret import _core
from tabret.benchmarks import load_benchmark
from tabret.catalog import Catalog
from tabret.cli._common import embedder_arg
from tabret.index import TableIndex, reusing


class Counting:
    """``inner``, counting the texts it embeds."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.texts = inner, inner.name, 0

    def embed(self, texts: list[str]) -> Any:
        self.texts += len(texts)
        return self.inner.embed(texts)


def changed(cat: Catalog, share: float, seed: int = 0) -> tuple[Catalog, int]:
    """``cat`` with ``share`` of its tables (at least one) given a new text column."""
    doc = json.loads(cat.to_json())
    tables = [t for db in doc["databases"] for t in db["tables"]]
    chosen = random.Random(seed).sample(tables, max(1, round(share * len(tables))))
    for t in chosen:
        t["columns"].append({"name": "migration_note", "type": "text"})
    return Catalog(_core.catalog_from_json_text(json.dumps(doc))), len(chosen)


def timed_build(
    cat: Catalog, embedder: Counting, reuse: TableIndex | None
) -> tuple[TableIndex, float]:
    start = time.perf_counter()
    index = TableIndex.build(
        cat, embedder if reuse is None else reusing(embedder, reuse), progress=False
    )
    return index, time.perf_counter() - start


def row(benchmark: str, embedder_name: str, share: float) -> str:
    """One catalog's row. The index before is dropped once the update is built, so that no
    more than two indexes of a large catalog are held at once."""
    cat = load_benchmark(benchmark).catalog
    embedder = Counting(embedder_arg(embedder_name, quiet=True))
    before, _ = timed_build(cat, embedder, None)
    after, tables = changed(cat, share)
    embedder.texts = 0
    updated, update_s = timed_build(after, embedder, before)
    update_texts, embedder.texts = embedder.texts, 0
    del before
    gc.collect()
    full, full_s = timed_build(after, embedder, None)
    same = (
        full.core.table_texts() == updated.core.table_texts()
        and full.core.column_texts() == updated.core.column_texts()
        and np.allclose(full.core.table_vectors, updated.core.table_vectors, atol=1e-6)
        and np.allclose(full.core.column_vectors, updated.core.column_vectors, atol=1e-6)
    )
    return (
        f"| {benchmark} | {embedder.name} | {cat.num_tables:,} / {cat.num_columns:,} | "
        f"{tables:,} | {embedder.texts:,} | {update_texts:,} | {full_s:.1f} | {update_s:.1f} | "
        f"{100 * update_s / full_s:.1f} % | {'yes' if same else 'NO'} |"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--benchmark", nargs="+", default=["spider2-lite"])
    p.add_argument("--embedder", default="hashing")
    p.add_argument("--share", type=float, default=0.01, help="share of tables changed")
    a = p.parse_args()
    print(
        "| catalog | embedder | tables / columns | tables changed | texts embedded: full build "
        "| update | seconds: full build | update | update / full | same texts and vectors |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for benchmark in a.benchmark:
        print(row(benchmark, a.embedder, a.share), flush=True)


if __name__ == "__main__":
    main()
