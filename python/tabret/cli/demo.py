"""``tabret demo``: retrieve tables for the demo questions on the bundled demo catalog."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from tabret.cli._common import embedder_arg, positive_int


@dataclass(frozen=True)
class DemoOptions:
    embedder: str
    k: int
    limit: int
    quiet: bool


HELP = "retrieve tables for the demo questions on the bundled demo catalog"
DESCRIPTION = None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--embedder",
        default="all-MiniLM-L6-v2",
        help="'hashing' or a sentence-transformers model (default: all-MiniLM-L6-v2)",
    )
    p.add_argument("--k", type=positive_int, default=5, help="tables per question (default: 5)")
    p.add_argument("--limit", type=positive_int, default=8, help="questions to show (default: 8)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def command(args: argparse.Namespace) -> int:
    return run(DemoOptions(args.embedder, args.k, args.limit, args.quiet))


#: The documented default pipeline (docs/choosing-a-method.md), here without an LLM: each
#: question is its own only sub-query, and the generated questions are templates.
PIPELINE = "hybrid + reverse > greedy-join"
#: The same with the demo catalog's cell values fused in (the values stage, tabret.values).
WITH_VALUES = "hybrid + reverse + values > greedy-join"


def run(o: DemoOptions) -> int:
    from tabret.benchmarks import demo
    from tabret.datasets import demo_values
    from tabret.eval import evaluate, format_table
    from tabret.index import DenseRetriever, TableIndex
    from tabret.join import JoinGraph
    from tabret.methods import Inputs, build_pipeline
    from tabret.reverse import GeneratedQuestions

    bench = demo()
    print(f"demo catalog: {bench.catalog!r}")
    embedder = embedder_arg(o.embedder, o.quiet)
    index = TableIndex.build(
        bench.catalog,
        embedder,  # type: ignore[arg-type]
        values=demo_values(bench.catalog),
        progress=not o.quiet,
    )
    progress = not o.quiet
    inputs = Inputs(
        graph=JoinGraph.build(index, progress=progress),
        questions=GeneratedQuestions.build(index, progress=progress),
    )
    methods = {
        "single-hop": DenseRetriever(index),
        PIPELINE: build_pipeline(PIPELINE, index, inputs),
        WITH_VALUES: build_pipeline(WITH_VALUES, index, inputs),
    }
    print(
        f"embedder: {index.embedder_name}; top {o.k} tables of single-hop, {PIPELINE} and, "
        f"with the demo's cell values, {WITH_VALUES}\n"
    )
    shown = bench.questions[: o.limit]
    texts = [q.question for q in shown]
    answers = {name: r.retrieve(texts, o.k) for name, r in methods.items()}
    for i, q in enumerate(shown):
        gold = {bench.catalog.qualified_name(t) for t in q.gold_tables}
        print(f"[{q.id}] {q.question}")
        for name, results in answers.items():
            names = results[i].table_names
            marked = [f"{'*' if t in gold else ''}{t}" for t in names]
            print(f"   {name}: {', '.join(marked)}")
            missed = gold - set(names)
            if missed:
                print(f"     missed: {', '.join(sorted(missed))}")
    table = [
        evaluate(
            r.retrieve, bench, (3, 5, 10), method=name, embedder=index.embedder_name, progress=False
        )
        for name, r in methods.items()
    ]
    print(f"\n* = a gold table. Over all {len(bench.questions)} demo questions:\n")
    print(format_table(table))
    return 0
