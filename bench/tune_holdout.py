"""The default pipeline before and after, and ``tabret tune`` on a held-out split (issue 49
item 4).

For each benchmark: the index as ``tabret index`` now builds it by default (the table text
``--format``, default the index's; table and column vectors, the join graph of
:func:`tabret.join.automatic_graph`, one template question per table), then

- *before / after*: ``tabret query``'s old default (single-hop) and its new one (the pipeline
  :func:`tabret.tuning.default_choice` gives for this index) on all the questions;
- *tune*: the questions shuffled with ``--seed`` and halved; :func:`tabret.tuning.tune` chooses
  on the first half (5-fold cross-validation inside it, as ``tabret tune``), and the default and
  the choice are scored on the other half, which tuning never saw.

k = 3 / 5 / 10 / 20, complete recall, recall and mean tables; the choice is made at k = 5.
Writes build/bench/tune_holdout_<benchmark>_<embedder>_<format>.json; progress on stderr.

Run: ``python -m bench.tune_holdout [--benchmark spider-union bird-union] [--embedder hashing]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import replace
from typing import Any, get_args

from bench.common import machine, write_json
from tabret.benchmarks import Benchmark, load_benchmark
from tabret.eval import EvalResult, evaluate
from tabret.index import DEFAULT_TABLE_FORMAT, TableFormat, TableIndex
from tabret.join import JoinGraph, automatic_graph
from tabret.methods import Inputs
from tabret.reverse import GeneratedQuestions
from tabret.tuning import Choice, default_choice, tune

KS = [3, 5, 10, 20]


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def halves(bench: Benchmark, seed: int) -> tuple[Benchmark, Benchmark]:
    order = list(bench.questions)
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return (
        replace(bench, questions=order[:half], source=f"{bench.source}; tuning half"),
        replace(bench, questions=order[half:], source=f"{bench.source}; held-out half"),
    )


def row(what: str, choice: Choice, result: EvalResult) -> dict[str, Any]:
    return {
        "what": what,
        "pipeline": choice.label,
        "questions": result.questions,
        "complete_recall": result.complete_recall,
        "recall": result.recall,
        "mean_tables": result.mean_tables,
    }


def score(choice: Choice, index: TableIndex, inputs: Inputs, bench: Benchmark) -> EvalResult:
    return evaluate(choice.build(index, inputs).retrieve, bench, KS, progress=False)


def indexed(bench: Benchmark, embedder: str, text: TableFormat) -> tuple[TableIndex, Inputs, str]:
    """``bench``'s catalog indexed as ``tabret index`` builds it by default (with the table text
    ``text``): the index, its join graph and template questions, and which graph it is."""
    log(f"{bench.name}: indexing {bench.catalog!r} with {embedder}, format {text}")
    index = TableIndex.build(bench.catalog, embedder, format=text, progress=False)
    graph = automatic_graph(bench.catalog)  # as `tabret index` chooses it
    log(f"{bench.name}: join graph {graph}")
    inputs = Inputs(
        graph=JoinGraph.build(index, progress=False, infer_compatibility=graph != "keys"),
        questions=GeneratedQuestions.build(index, progress=False),
    )
    return index, inputs, graph


def run(name: str, embedder: str, seed: int, text: TableFormat) -> dict[str, Any]:
    bench = load_benchmark(name)
    start = time.perf_counter()
    index, inputs, graph = indexed(bench, embedder, text)
    built = time.perf_counter() - start
    default = default_choice(graph=True, questions=True, values=False)
    rows = [
        row(
            "before: single-hop",
            Choice("single-hop"),
            score(Choice("single-hop"), index, inputs, bench),
        ),
        row("after: the default", default, score(default, index, inputs, bench)),
    ]
    tuning, held_out = halves(bench, seed)
    log(f"{name}: tuning on {len(tuning.questions)} questions")
    report = tune(index, tuning, inputs, k=5, seed=seed, progress=log)
    log(f"{name}: chosen {report.chosen.label}")
    rows += [
        row("held-out half: the default", default, score(default, index, inputs, held_out)),
        row("held-out half: tuned", report.chosen, score(report.chosen, index, inputs, held_out)),
    ]
    return {
        "benchmark": name,
        "embedder": embedder,
        "format": text,
        "seed": seed,
        "index_seconds": built,
        "join_graph": graph,
        "rows": rows,
        "tune": report.to_json(),
        "trials": [
            {"pipeline": t.choice.label, "complete_recall": t.complete_recall, "recall": t.recall}
            for t in report.trials
        ],
    }


def table(result: dict[str, Any]) -> str:
    head = " | ".join(f"k={k}" for k in KS)
    lines = [
        f"| {result['benchmark']} ({result['embedder']}) | pipeline | {head} | "
        + " | ".join(f"r@{k}" for k in KS)
        + " | tables@5 |",
        "|---" * (3 + 2 * len(KS)) + "|",
    ]
    for r in result["rows"]:
        cr = " | ".join(f"{r['complete_recall'][k]:.1f}" for k in KS)
        rc = " | ".join(f"{r['recall'][k]:.1f}" for k in KS)
        lines.append(
            f"| {r['what']} ({r['questions']} q) | {r['pipeline']} | {cr} | {rc} | "
            f"{r['mean_tables'][5]:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--benchmark", nargs="+", default=["spider-union", "bird-union"])
    p.add_argument("--embedder", default="hashing")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--format",
        default=DEFAULT_TABLE_FORMAT,
        choices=get_args(TableFormat),
        help=f"the table text (default: {DEFAULT_TABLE_FORMAT}, as `tabret index`)",
    )
    args = p.parse_args()
    results = []
    for name in args.benchmark:
        result = run(name, args.embedder, args.seed, args.format)
        results.append(result)
        path = write_json(
            f"tune_holdout_{name}_{args.embedder}_{args.format}.json",
            {"machine": machine(), **result},
        )
        print(table(result), flush=True)
        log(f"wrote {path}")


if __name__ == "__main__":
    main()
