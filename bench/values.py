"""Cell values as evidence (issue 49 item 1): the ``values`` stage fused with the others, beside
the same pipelines without it, on SpiderUnion (values from ``spider-db/``: 19 of the 20 dev
databases) and BirdUnion (JAR's sample values, the only BIRD values in the data); all questions
(``tabret eval --values``) and, from the same runs, the questions that name a value (one of the
question's matched values lies in a column of a gold table); and what reading the values cost.

Run: ``python -m bench.values [--benchmark spider-union bird-union] [--embedder hashing]
[--pipeline P …]``.
Prints ``tabret eval``'s tables, then one Markdown table per benchmark for the subset.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tabret import _core
from tabret.benchmarks import Benchmark, load_benchmark, spider_values
from tabret.join import jar_column_stats
from tabret.values import ValueIndex, from_column_stats

PIPELINES = [
    "single-hop",
    "values",
    "hybrid",
    "hybrid + values",
    "hybrid + reverse > greedy-join",
    "hybrid + reverse + values > greedy-join",
]


def read(bench: Benchmark, cache: Path) -> tuple[ValueIndex, float]:
    """The benchmark's values and the seconds reading them took (SQLite files made first)."""
    cat = bench.catalog
    if bench.name.startswith("spider"):
        spider_values(cat, cache, progress=False)  # makes the SQLite files: not timed
        start = time.perf_counter()
        values, _ = spider_values(cat, cache, progress=False)
        return values, time.perf_counter() - start
    start = time.perf_counter()
    values = from_column_stats(cat, jar_column_stats(cat, "bird"))
    return values, time.perf_counter() - start


def value_questions(bench: Benchmark, values: ValueIndex) -> set[str]:
    """The ids of the questions one of whose matched values lies in a column of a gold table."""
    cat = bench.catalog
    return {
        q.id
        for q in bench.questions
        if any(cat.column(m.column).table in set(q.gold_tables) for m in values.match(q.question))
    }


def subset_table(results: list[dict[str, Any]], ids: set[str], ks: list[int]) -> str:
    """Complete recall, recall and mean tables at each k over the questions ``ids``."""
    head = " | ".join(f"k={k} | r@{k} | n@{k}" for k in ks)
    lines = [f"| method | {head} |", "|---|" + "---|" * (3 * len(ks))]
    for res in results:
        rows = [r for r in res["per_question"] if r["id"] in ids]
        cells = []
        for k in ks:
            pairs = [(r["answers"][str(k)], r["gold"]) for r in rows]
            n = max(len(pairs), 1)
            cr = sum(_core.complete_recall_at(a, g, max(len(a), 1)) for a, g in pairs) / n
            rc = sum(_core.recall_at(a, g, max(len(a), 1)) for a, g in pairs) / n
            mean = sum(len(a) for a, _ in pairs) / n
            cells += [f"{100 * cr:.1f}", f"{100 * rc:.1f}", f"{mean:.1f}"]
        lines.append(f"| {res['method']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--benchmark", nargs="+", default=["spider-union", "bird-union"])
    p.add_argument("--embedder", default="all-MiniLM-L6-v2")
    p.add_argument("--k", nargs="+", type=int, default=[3, 5, 10, 20])
    p.add_argument("--values-cache", type=Path, default=None)
    p.add_argument("--pipeline", nargs="+", default=PIPELINES, help="(default: all above)")
    a = p.parse_args(argv)
    cache = a.values_cache or Path(tempfile.mkdtemp(prefix="tabret-spider-db-"))
    for name in a.benchmark:
        bench = load_benchmark(name)
        values, seconds = read(bench, cache)
        cols = bench.catalog.num_columns
        print(
            f"\n{name}: {len(values):,} values in {values.columns_with_values:,} of {cols:,} "
            f"columns, {values.bytes:,} bytes, read in {seconds:.2f} s ("
            f"{1000 * seconds / cols:.2f} s and {1000 * values.bytes / cols:,.0f} bytes per "
            "1,000 columns)",
            flush=True,
        )
        out = cache / f"{name}-{a.embedder.replace('/', '_')}.json"
        cmd = [
            sys.executable, "-m", "tabret", "eval", "--benchmark", name, "--values",
            "--values-cache", str(cache), "--embedder", a.embedder, "--quiet",
            "--k", *map(str, a.k), "--pipeline", *a.pipeline, "--output", str(out),
        ]  # fmt: skip
        subprocess.run(cmd, check=True)
        ids = value_questions(bench, values)
        print(f"\n{name}, the {len(ids)} of {len(bench.questions)} questions that name a value:")
        print(subset_table(json.loads(out.read_text()), ids, a.k), flush=True)


if __name__ == "__main__":
    main()
