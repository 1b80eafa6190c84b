"""The sparse index's budget of postings over all 532,388 Spider 2.0-lite columns (hashing
vectors): column recall@10 by score against the same index without a budget (exact), and CPU
p50 per question, for a few budgets and re-scoring depths. Questions are split into the 200
that `bench.scale` queries (half of them chose the default budget and dimension rule) and the
other 347 (held out). Prints a markdown table; writes build/bench/sparse_budget.json.

    python3 -m bench.sparse_budget
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Sequence
from typing import Any

from bench.common import OUT, percentile, write_json
from bench.scale import Top, _recall
from tabret import HashingEmbedder, _core
from tabret.datasets import data_dir
from tabret.spider2 import QUESTIONS, spider2_catalog

#: (max postings, re-scored items); (0, ...) is the exact reference. The first budgeted one is
#: the default (sparse_params).
SETTINGS = ((0, 4000), (1_000_000, 4000), (500_000, 4000), (2_000_000, 4000), (1_000_000, 1000))
BENCH_QUESTIONS = 200  # bench.scale's queries


def _search(index: Any, embedder: Any, questions: Sequence[str]) -> tuple[Top, list[float]]:
    retriever = _core.DenseRetriever(index, embedder, embedder.name)
    tops: Top = []
    cpu_ms = []
    for q in questions:
        cpu = time.process_time()
        r = retriever.retrieve([q], 10, 10)[0]
        cpu_ms.append(1000 * (time.process_time() - cpu))
        tops.append([[], [[c.column, c.score] for c in r.columns]])
    return tops, cpu_ms


def run() -> dict[str, Any]:
    root = data_dir()
    lines = (root / QUESTIONS).read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines]
    catalog = spider2_catalog(root, 0)
    embedder = HashingEmbedder()
    exact: Top = []
    rows = []
    for max_postings, rescore in SETTINGS:
        index = _core.TableIndex.build(
            catalog,
            embedder,
            embedder.name,
            kind="sparse",
            sparse_max_postings=max_postings,
            sparse_rescore=rescore,
            progress=None,
        )
        tops, cpu_ms = _search(index, embedder, questions)
        del index
        gc.collect()
        if max_postings == 0:
            exact = tops
        row = {"max_postings": max_postings, "rescore": rescore, "p50_ms": percentile(cpu_ms, 50)}
        for name, part in (
            ("bench", slice(0, BENCH_QUESTIONS)),
            ("held_out", slice(BENCH_QUESTIONS, None)),
        ):
            row[f"{name}_recall"] = _recall(exact[part], tops[part], 1)[1]
            row[f"{name}_questions"] = len(tops[part])
        rows.append(row)
        print(json.dumps(row), flush=True)
    return {"columns": catalog.num_columns, "rows": rows}


def markdown(result: dict[str, Any]) -> str:
    rows = result["rows"]
    out = [
        "| max postings | re-scored | column recall@10 by score: bench questions "
        f"({rows[0]['bench_questions']}) / held out ({rows[0]['held_out_questions']}) "
        "| columns CPU p50 ms |",
        "|---|---|---|---|",
    ]
    for r in rows:
        budget = "none (exact)" if r["max_postings"] == 0 else f"{r['max_postings']:,}"
        out.append(
            f"| {budget} | {r['rescore']:,} | {r['bench_recall']:.1f} / {r['held_out_recall']:.1f} "
            f"| {r['p50_ms']:.2f} |"
        )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__).parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    result = run()
    write_json("sparse_budget.json", result)
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
