"""A trained cross-encoder on catalogs it never saw (issue 50 item 2, scenario "new catalog,
no log").

Trains a cross-encoder from all-MiniLM-L6-v2 with :func:`tabret.training.train_cross_encoder`
on the Spider **train** questions (``spider-train/questions.jsonl``; none of SpiderUnion's
databases, BIRD's ``formula_1`` excepted and left out) over ``spider/tables.json`` (skipped when
``--model`` already holds one), then scores on each benchmark, with the index as ``tabret
index`` builds it (:func:`bench.tune_holdout.indexed`): single-hop and the default pipeline,
each alone and followed by ``rerank`` (20 candidates); ATR over single-hop with the similarity
scorer and with the cross-encoder as its window scorer; Reverse Engineering with and without
the cross-encoder as its re-ranker (40 candidates). k = 3 / 5 / 10 / 20. A (question, table
text) pair is scored once per run (a memo). Also the latency the re-ranker adds per question
at 20 candidates. :func:`tabret.training.check_unseen` is asserted first. Writes
build/bench/train_reranker.json; progress on stderr.

ATR's rows are also scored at each question's own cut (``cut``: complete recall, recall and
mean tables at the cut, beside fixed k of the same lists).

Run: ``python -m bench.train_reranker [--time-budget 1200] [--benchmark spider-union]
[--rows ATR] [--output FILE]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.common import machine, write_json
from bench.train_embedder import trained, unseen
from bench.tune_holdout import indexed, log, row, score, table
from tabret.benchmarks import load_benchmark
from tabret.embedders import DEFAULT_MODEL
from tabret.methods import Inputs
from tabret.rerank import CrossEncoderScorer
from tabret.training import check_unseen, train_cross_encoder
from tabret.tuning import Choice, default_choice


class Memo:
    """A pair scorer that scores each (question, text) pair once."""

    def __init__(self, scorer: CrossEncoderScorer) -> None:
        self.scorer, self.name, self.format = scorer, scorer.name, scorer.format
        self.seen: dict[tuple[str, str], float] = {}

    def __call__(self, pairs: list[tuple[str, str]]) -> list[float]:
        new = list(dict.fromkeys(p for p in pairs if p not in self.seen))
        self.seen.update(zip(new, self.scorer(new), strict=True))
        return [self.seen[p] for p in pairs]


def latency(scorer: CrossEncoderScorer, bench: Any, index: Any, n: int = 50) -> dict[str, float]:
    """Seconds the cross-encoder takes per question for 20 candidates (single-hop's top 20)."""
    first = Choice("single-hop").build(index, Inputs())
    times = []
    for q in bench.questions[:n]:
        tables = first.retrieve(q.question, k=20).tables
        pairs = [
            (q.question, index.catalog.serialize_table(t.id, index.core.format)) for t in tables
        ]
        start = time.perf_counter()
        scorer(pairs)
        times.append(time.perf_counter() - start)
    return {"questions": n, "median_s": statistics.median(times), "mean_s": statistics.mean(times)}


def run(name: str, model: str, only: list[str]) -> dict[str, Any]:
    bench = unseen(load_benchmark(name), {"cross-encoder": model})
    check_unseen(model, bench, within_database=False)
    scorer = CrossEncoderScorer(model)
    index, inputs, _ = indexed(bench, DEFAULT_MODEL, "related")
    memo = Memo(scorer)
    trained_inputs = Inputs(graph=inputs.graph, questions=inputs.questions, reranker=memo)
    default = default_choice(graph=True, questions=True, values=False).pipeline
    rows = []
    for what, pipeline, given in (
        ("single-hop", "single-hop", inputs),
        ("single-hop > rerank", "single-hop > rerank", trained_inputs),
        ("the default", default, inputs),
        ("the default > rerank", f"{default} > rerank", trained_inputs),
        ("ATR, similarity scorer", "single-hop > adaptive", inputs),
        ("ATR, trained scorer", "single-hop > adaptive", trained_inputs),
        ("RE (template questions)", "reverse", inputs),
        ("RE + trained re-ranker", "reverse", trained_inputs),
    ):
        if not any(part in what for part in only):
            continue
        start = time.perf_counter()
        choice = Choice(pipeline)
        result = score(choice, index, given, bench)
        rows.append(row(what, choice, result))
        if result.cut is not None:  # ATR: scored at each question's own cut too
            rows[-1]["cut"] = asdict(result.cut)
        log(
            f"{name}: {what} k=5 {rows[-1]['complete_recall'][5]:.1f} "
            f"({time.perf_counter() - start:.0f} s, {len(memo.seen)} pairs scored)"
        )
    return {
        "benchmark": name,
        "embedder": DEFAULT_MODEL,
        "rows": rows,
        "latency_20_candidates": latency(scorer, bench, index),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--benchmark", nargs="+", default=["spider-union"])
    p.add_argument("--model", default="build/bench/ce-spider-train")
    p.add_argument("--time-budget", type=float, default=1200.0, help="training seconds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--rows", nargs="+", default=[""], help="run only the rows whose label holds one of these"
    )
    p.add_argument("--output", default="train_reranker.json", help="file name in build/bench")
    args = p.parse_args()
    manifest = trained(Path(args.model), args.time_budget, args.seed, train_cross_encoder)
    model = str(Path(args.model).resolve())
    training = {k: v for k, v in manifest.items() if k != "questions"}
    results = []
    for name in args.benchmark:
        results.append(run(name, model, args.rows))
        print(table(results[-1]), flush=True)
        print(f"latency: {results[-1]['latency_20_candidates']}", flush=True)
        for r in results[-1]["rows"]:
            if "cut" in r:
                print(f"{r['what']} at its cut: {r['cut']}", flush=True)
        path = write_json(
            args.output, {"machine": machine(), "training": training, "results": results}
        )
        log(f"wrote {path}")


if __name__ == "__main__":
    main()
