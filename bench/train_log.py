"""Your own query log (issue 50, scenario "your own log"): learning curves on a within-database
split.

Per database of the benchmark, its questions are shuffled (``--seed``); the first ``--held-out``
of them are the test questions for every row, and the log of size n is the next n (10 / 30 / 100
per database; databases with fewer left give all they have). Rows, scored on the same test
questions at k = 3 / 5 / 10 / 20:

- *no training*: all-MiniLM-L6-v2, single-hop and the default pipeline;
- *nearest logged question*: the baseline a user tries first (an example store, as Vanna's): the
  logged questions nearest the question (MiniLM cosine), their gold tables in that order, the
  first k distinct;
- *fine-tuned on the log*: :func:`tabret.training.train_embedder` with its defaults on the n
  logged questions per database, then single-hop and the default pipeline over the fine-tuned
  model. :func:`tabret.training.check_unseen` (within-database) is asserted for the test
  questions first.

Writes build/bench/train_log_<benchmark>.json; progress on stderr.

Run: ``python -m bench.train_log [--benchmark bird-union] [--sizes 10 30 100]``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import machine, write_json
from bench.tune_holdout import KS, indexed, log, row, score, table
from tabret.benchmarks import Benchmark, BenchmarkQuestion, load_benchmark
from tabret.embedders import DEFAULT_MODEL, default_embedder
from tabret.eval import evaluate
from tabret.results import Retrieval, ScoredTable
from tabret.training import TrainingOptions, check_unseen, train_embedder
from tabret.tuning import Choice, default_choice


def split(
    bench: Benchmark, held_out: int, sizes: list[int], seed: int
) -> tuple[Benchmark, dict[int, Benchmark]]:
    """The test questions (``held_out`` per database) and, per size n, the log (n per
    database, taken after the test questions)."""
    by_db: dict[str, list[BenchmarkQuestion]] = {}
    for q in bench.questions:
        by_db.setdefault(q.db, []).append(q)
    rng = random.Random(seed)
    test: list[BenchmarkQuestion] = []
    logs: dict[int, list[BenchmarkQuestion]] = {n: [] for n in sizes}
    for db in sorted(by_db):
        qs = by_db[db]
        rng.shuffle(qs)
        test += qs[:held_out]
        for n in sizes:
            logs[n] += qs[held_out : held_out + n]
    part = f"{bench.source}; within-database split, seed {seed}"
    return (
        replace(bench, questions=test, source=f"{part}: {held_out} test questions per database"),
        {
            n: replace(bench, questions=qs, source=f"{part}: a log of {n} per database")
            for n, qs in logs.items()
        },
    )


def nearest_logged(logged: Benchmark, test: Benchmark) -> Any:
    """``retrieve(questions, k)``: the tables of the nearest logged questions, best first."""
    embed = default_embedder().embed
    cat = logged.catalog

    def unit(texts: list[str]) -> Any:
        v = np.asarray(embed(texts), dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    log_vecs = unit([q.question for q in logged.questions])

    def retrieve(questions: list[str], k: int) -> list[Retrieval]:
        sims = unit(questions) @ log_vecs.T
        out = []
        for question, row_sims in zip(questions, sims, strict=True):
            tables: dict[int, float] = {}
            for j in np.argsort(-row_sims, kind="stable"):
                for t in logged.questions[j].gold_tables:
                    tables.setdefault(t, float(row_sims[j]))
                if len(tables) >= k:
                    break
            scored = [ScoredTable(t, cat.qualified_name(t), s) for t, s in tables.items()]
            out.append(Retrieval(question, scored[:k]))
        return out

    return retrieve


def pipelines(label: str, model: str, bench: Benchmark) -> list[dict[str, Any]]:
    index, inputs, _ = indexed(bench, model, "related")
    default = default_choice(graph=True, questions=True, values=False)
    rows = []
    for what, choice in (("single-hop", Choice("single-hop")), ("the default", default)):
        rows.append(row(f"{label}: {what}", choice, score(choice, index, inputs, bench)))
        log(f"{rows[-1]['what']}: k=5 {rows[-1]['complete_recall'][5]:.1f}")
    return rows


def run(name: str, held_out: int, sizes: list[int], seed: int, work: Path) -> dict[str, Any]:
    bench = load_benchmark(name)
    test, logs = split(bench, held_out, sizes, seed)
    log(f"{name}: {len(test.questions)} test questions")
    rows = pipelines("no training", DEFAULT_MODEL, test)
    training = []
    for n, logged in logs.items():
        result = evaluate(nearest_logged(logged, test), test, KS, progress=False, per_k=False)
        rows.append(row(f"log {n}/db: nearest logged question", Choice("single-hop"), result))
        rows[-1]["pipeline"] = "nearest logged question"
        out = work / f"{name}-{n}"
        start = time.perf_counter()
        done = train_embedder(logged, out, TrainingOptions(seed=seed), progress=False)
        log(f"{name}: log {n}/db ({len(logged.questions)} questions): {done}")
        training.append(
            {
                "per_database": n,
                "questions": len(logged.questions),
                "pairs": done.pairs,
                "steps": done.steps,
                "seconds": time.perf_counter() - start,
            }
        )
        check_unseen(out, test, within_database=True)
        rows += pipelines(f"log {n}/db: fine-tuned", str(out), test)
    return {"benchmark": name, "embedder": DEFAULT_MODEL, "rows": rows, "training": training}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--benchmark", nargs="+", default=["bird-union"])
    p.add_argument("--held-out", type=int, default=30, help="test questions per database")
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 30, 100])
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="tabret-train-log-") as work:
        for name in args.benchmark:
            result = run(name, args.held_out, args.sizes, args.seed, Path(work))
            print(table(result), flush=True)
            path = write_json(f"train_log_{name}.json", {"machine": machine(), **result})
            log(f"wrote {path}")


if __name__ == "__main__":
    main()
