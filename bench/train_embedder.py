"""A fine-tuned embedder on catalogs it never saw (issue 50, scenario "new catalog, no log").

Trains all-MiniLM-L6-v2 with :func:`tabret.training.train_embedder` on the Spider **train**
questions (``spider-train/questions.jsonl``, 146 databases, none of SpiderUnion's questions'
databases nor BIRD's) over ``spider/tables.json`` (skipped when ``--model`` is a directory already
trained), then scores the base and the fine-tuned model on each benchmark, with the index as
``tabret index`` builds it (:func:`bench.tune_holdout.indexed`): single-hop and the default
pipeline, k = 3 / 5 / 10 / 20; on ``--tables-only`` benchmarks (Spider 2.0-lite) single-hop
over table vectors only. :func:`tabret.training.check_unseen` is asserted first, so no
benchmark question is on a training database. Writes
build/bench/train_embedder_<benchmarks>.json; progress on stderr.

Run: ``python -m bench.train_embedder [--time-budget 1500] [--benchmark spider-union bird-union]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.common import machine, write_json
from bench.tune_holdout import indexed, log, row, score, table
from tabret.benchmarks import load_benchmark, questions_benchmark
from tabret.catalog import Catalog
from tabret.datasets import data_dir
from tabret.embedders import DEFAULT_MODEL
from tabret.index import TableIndex
from tabret.methods import Inputs
from tabret.training import TrainingOptions, check_unseen, read_manifest, train_embedder
from tabret.tuning import Choice, default_choice


def trained(
    model: Path, budget: float, seed: int, train: Callable[..., Any] = train_embedder
) -> dict[str, Any]:
    """The manifest of ``model``, trained on Spider train by ``train`` (:func:`train_embedder`
    or :func:`tabret.training.train_cross_encoder`) first when it is not there."""
    if read_manifest(model) is None:
        root = data_dir()
        bench = questions_benchmark(
            root / "spider-train" / "questions.jsonl",
            Catalog.from_spider_json(root / "spider" / "tables.json"),
        )
        log(f"training on {len(bench.questions)} Spider train questions, budget {budget:.0f} s")
        done = train(bench, model, TrainingOptions(time_budget=budget, seed=seed), progress=True)
        log(f"trained: {done}")
    manifest = read_manifest(model)
    assert manifest is not None
    return manifest


def unseen(bench: Any, models: dict[str, str]) -> Any:
    """``bench`` without the questions on a database a model was trained on (BIRD dev's
    ``formula_1`` is also a Spider train database), said in its source."""
    trained = set()
    for model in models.values():
        manifest = read_manifest(model)
        trained |= set(manifest["databases"]) if manifest else set()
    kept = [q for q in bench.questions if q.db not in trained]
    if len(kept) == len(bench.questions):
        return bench
    left = sorted({q.db for q in bench.questions} & trained)
    log(f"{bench.name}: {len(bench.questions) - len(kept)} questions on {left} left out")
    return replace(bench, questions=kept, source=f"{bench.source}; without {', '.join(left)}")


def run(name: str, models: dict[str, str]) -> dict[str, Any]:
    bench = unseen(load_benchmark(name), models)
    rows = []
    default = default_choice(graph=True, questions=True, values=False)
    for label, model in models.items():
        check_unseen(model, bench, within_database=False)
        start = time.perf_counter()
        index, inputs, _ = indexed(bench, model, "related")
        log(f"{name}: {label} indexed in {time.perf_counter() - start:.0f} s")
        for what, choice in (("single-hop", Choice("single-hop")), ("the default", default)):
            rows.append(row(f"{label}: {what}", choice, score(choice, index, inputs, bench)))
            log(f"{name}: {rows[-1]['what']} k=5 {rows[-1]['complete_recall'][5]:.1f}")
    return {"benchmark": name, "embedder": " vs ".join(models), "rows": rows}


def run_tables_only(name: str, models: dict[str, str]) -> dict[str, Any]:
    """Single-hop over table vectors only: Spider 2.0-lite's 532 thousand columns take MiniLM
    an hour or more to embed on two cores, its 8,255 tables minutes."""
    bench = unseen(load_benchmark(name), models)
    rows = []
    for label, model in models.items():
        check_unseen(model, bench, within_database=False)
        start = time.perf_counter()
        index = TableIndex.build(bench.catalog, model, format="related", columns=False)
        log(f"{name}: {label} indexed (tables only) in {time.perf_counter() - start:.0f} s")
        choice = Choice("single-hop")
        rows.append(
            row(f"{label}: single-hop, tables only", choice, score(choice, index, Inputs(), bench))
        )
        log(f"{name}: {rows[-1]['what']} k=5 {rows[-1]['complete_recall'][5]:.1f}")
    return {"benchmark": name, "embedder": " vs ".join(models), "rows": rows}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--benchmark", nargs="+", default=["spider-union", "bird-union"])
    p.add_argument(
        "--tables-only",
        nargs="*",
        default=["spider2-lite"],
        help="benchmarks scored with single-hop over table vectors only",
    )
    p.add_argument("--model", default="build/bench/minilm-spider-train")
    p.add_argument("--time-budget", type=float, default=1500.0, help="training seconds")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    manifest = trained(Path(args.model), args.time_budget, args.seed)
    models = {"MiniLM": DEFAULT_MODEL, "fine-tuned": str(Path(args.model).resolve())}
    results = [run(name, models) for name in args.benchmark]
    results += [run_tables_only(name, models) for name in args.tables_only]
    for result in results:
        print(table(result), flush=True)
    training = {k: v for k, v in manifest.items() if k != "questions"}
    path = write_json(
        "train_embedder.json", {"machine": machine(), "training": training, "results": results}
    )
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
