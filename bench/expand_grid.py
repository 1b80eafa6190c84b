"""How ``expand``'s defaults (``seeds``, ``ratio``) were chosen (issue 49 item 3): a grid over a
seeded sample of the Spider **train** questions (``spider-train/questions.jsonl``; its databases
are disjoint from SpiderUnion's, so the benchmarks the defaults are reported on never take part).

The index is built as ``tabret index`` builds it by default (:func:`bench.tune_holdout.indexed`);
each grid point runs ``expand`` after ``hybrid`` and after ``hybrid > greedy-join`` (no
decompositions: Spider train has no recorded ones), k = 3 / 5 / 10 / 20, complete recall. The
point with the best mean gain over both stages and every k is printed last. Writes
build/bench/expand_grid_<embedder>.json; progress on stderr.

Run: ``python -m bench.expand_grid [--questions 1500] [--seed 0] [--embedder hashing]``.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import replace
from itertools import product
from typing import Any

from bench.common import machine, write_json
from bench.tune_holdout import KS, indexed, log, score
from tabret.benchmarks import questions_benchmark
from tabret.catalog import Catalog
from tabret.datasets import data_dir
from tabret.tuning import Choice

STAGES_BEFORE = ["hybrid", "hybrid > greedy-join"]
RATIOS = [0.6, 0.7, 0.75, 0.8, 0.85, 0.9]
SEEDS = [1, 2, 3]


def run(questions: int, seed: int, embedder: str) -> dict[str, Any]:
    root = data_dir()
    bench = questions_benchmark(
        root / "spider-train" / "questions.jsonl",
        Catalog.from_spider_json(root / "spider" / "tables.json"),
    )
    sample = random.Random(seed).sample(bench.questions, min(questions, len(bench.questions)))
    bench = replace(bench, questions=sample, source=f"{bench.source}; {len(sample)} sampled")
    index, inputs, _ = indexed(bench, embedder, "related")
    index = index.with_question_memo()
    base = {
        before: score(Choice(before), index, inputs, bench).complete_recall
        for before in STAGES_BEFORE
    }
    rows: list[dict[str, Any]] = []
    for ratio, seeds in product(RATIOS, SEEDS):
        options = (("expand", "ratio", ratio), ("expand", "seeds", seeds))
        got = {
            before: score(Choice(f"{before} > expand", options), index, inputs, bench)
            for before in STAGES_BEFORE
        }
        gains = [got[b].complete_recall[k] - base[b][k] for b in STAGES_BEFORE for k in KS]
        rows.append(
            {
                "ratio": ratio,
                "seeds": seeds,
                "complete_recall": {b: got[b].complete_recall for b in STAGES_BEFORE},
                "mean_gain": sum(gains) / len(gains),
            }
        )
        log(f"ratio {ratio} seeds {seeds}: mean gain {rows[-1]['mean_gain']:+.2f}")
    return {
        "questions": len(sample),
        "seed": seed,
        "embedder": embedder,
        "before": base,
        "grid": rows,
        "best": max(rows, key=lambda r: r["mean_gain"]),
        "machine": machine(),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--questions", type=int, default=1500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--embedder", default="all-MiniLM-L6-v2")
    a = p.parse_args()
    result = run(a.questions, a.seed, a.embedder)
    path = write_json(f"expand_grid_{a.embedder.replace('/', '_')}.json", result)
    for b in STAGES_BEFORE:
        print(f"| {b} | - | " + " | ".join(f"{result['before'][b][k]:.1f}" for k in KS) + " |")
    for r in result["grid"]:
        for b in STAGES_BEFORE:
            cells = " | ".join(f"{r['complete_recall'][b][k]:.1f}" for k in KS)
            print(f"| {b} > expand | ratio {r['ratio']} seeds {r['seeds']} | {cells} |")
    best = result["best"]
    print(f"best: ratio {best['ratio']} seeds {best['seeds']} (mean gain {best['mean_gain']:+.2f})")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
