"""Database routing as a first stage for greedy-join (issue 19): how often the routed database
is the gold one, and greedy-join's recall over routed candidates, on SpiderUnion and BirdUnion
with all-MiniLM-L6-v2 and JAR's recorded decompositions (as ``tabret eval``).

Variants: the router over the dense ranking, keeping the other databases' tables after the
routed ones (``others``, the default) or dropping them, for 1-3 routed databases. Greedy-join
re-ranks the top 20 candidates it is given.

Run: ``python -m bench.routing [--benchmark spider-union bird-union] [--embedding-cache DIR]``.
Prints one Markdown table per benchmark (the format of ``tabret eval``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from tabret import DatabaseRouter, DenseRetriever, TableIndex
from tabret.benchmarks import Benchmark, load_benchmark
from tabret.cli._common import embedder_arg, memo
from tabret.cli._eval_join import JoinEval, join_setup
from tabret.eval import EvalResult, evaluate, format_table
from tabret.methods import ClosureOptions, GreedyJoinOptions, JarExactOptions
from tabret.pipeline import GreedyJoin, Pipeline, Route

VARIANTS = [(1, True), (1, False), (2, False), (3, False)]


def _routing_accuracy(router: DatabaseRouter, index: TableIndex, bench: Benchmark) -> float:
    cat = index.catalog
    questions = [q.question for q in bench.questions]
    routed = router.retrieve(questions, 1)
    gold = [cat.table(q.gold_tables[0]).database for q in bench.questions]
    hits = sum(cat.table(r.tables[0].id).database == g for r, g in zip(routed, gold, strict=True))
    return 100.0 * hits / len(gold)


def run(bench_name: str, embedding_cache: str | None) -> None:
    bench = load_benchmark(bench_name)
    embedder = embedder_arg("all-MiniLM-L6-v2")
    if embedding_cache:
        from tabret.embedding_cache import DiskCachedEmbedder

        embedder = DiskCachedEmbedder(embedder, embedding_cache)  # type: ignore[arg-type]
    index = TableIndex.build(bench.catalog, memo(embedder), progress=False)
    options = JoinEval(
        [False], ClosureOptions(), GreedyJoinOptions(), JarExactOptions(), False, value_stats=True
    )
    join = join_setup(["greedy-join"], options, bench, index, None)
    assert join is not None
    assert join.llm is not None
    select = GreedyJoin(join.graph, join.llm)
    runs = [("greedy-join", Pipeline(DenseRetriever(index), select))]
    for databases, others in VARIANTS:
        route = Route(databases=databases, others=others)
        name = f"route(m={databases}{'' if others else ', routed only'}) > greedy-join"
        runs.append((name, Pipeline(DenseRetriever(index), post=[route, select])))
    results: list[EvalResult] = []
    for name, retriever in runs:
        results.append(
            evaluate(
                retriever.retrieve,
                bench,
                method=name,
                embedder=index.embedder_name,
                progress=False,
                per_k=True,
            )
        )
    print(format_table(results, seconds=False, tables=True))
    accuracy = _routing_accuracy(DatabaseRouter(DenseRetriever(index)), index, bench)
    top1 = _routing_accuracy(
        DatabaseRouter(DenseRetriever(index), column_depth=0, depth=1), index, bench
    )
    print(f"\nrouted database = gold database: {accuracy:.1f}% (top-1 table's: {top1:.1f}%)\n")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--benchmark", nargs="+", default=["spider-union", "bird-union"])
    p.add_argument("--embedding-cache", help="a DiskCachedEmbedder directory")
    args = p.parse_args(argv)
    for name in args.benchmark:
        print(f"## {name}\n")
        run(name, args.embedding_cache)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
