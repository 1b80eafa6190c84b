"""Database routing as a first stage for greedy-join (issue 19): how often the routed database
is the gold one, and greedy-join's recall over routed candidates, on SpiderUnion and BirdUnion
with all-MiniLM-L6-v2 and JAR's recorded decompositions (as ``tabret eval``).

Variants: the router over the dense ranking, keeping the other databases' tables after the
routed ones (``others``, the default) or dropping them, for 1-3 routed databases. Greedy-join
re-ranks the top 20 candidates it is given.

Run: ``python -m bench.routing [--benchmark spider-union bird-union] [--embedding-cache DIR]``.
Prints one Markdown table per benchmark (the format of ``tabret eval``).

``--spider2``: instead, how often the question's own database ranks first / in the first three
among Spider 2.0-lite's 162 (248 questions with gold, MiniLM), by the router's table votes, by a
"database card" (the database's name and table names, embedded) and by both fused (reciprocal
rank, k 60): whether a description of each database could route where the tables do not.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

import numpy as np

from tabret import DatabaseRouter, DenseRetriever, TableIndex, _core
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


def _hits(rankings: list[list[int]], gold: list[int]) -> str:
    first = 100 * np.mean([r[0] == g for r, g in zip(rankings, gold, strict=True)])
    three = 100 * np.mean([g in r[:3] for r, g in zip(rankings, gold, strict=True)])
    return f"{first:.1f} % first, {three:.1f} % in the first three"


def spider2(embedding_cache: str | None) -> None:
    bench = load_benchmark("spider2-lite")
    cat = bench.catalog
    embedder = embedder_arg("all-MiniLM-L6-v2", quiet=True)
    if embedding_cache:
        from tabret.embedding_cache import DiskCachedEmbedder

        embedder = DiskCachedEmbedder(embedder, embedding_cache)  # type: ignore[arg-type]
    cached = memo(embedder)
    index = TableIndex.build(cat, cached, kind="exact", columns=False, progress=False)
    questions = [q.question for q in bench.questions]
    gold = [cat.table(q.gold_tables[0]).database for q in bench.questions]
    o, n = _core.RoutingOptions(), cat.num_databases
    votes = np.zeros((len(questions), n))  # the router's table votes
    for i, r in enumerate(DenseRetriever(index).retrieve(questions, o.depth)):
        counted = np.zeros(n, dtype=int)
        for rank, hit in enumerate(r.tables):
            d = cat.table(hit.id).database
            counted[d] += 1
            if counted[d] <= o.per_database:
                votes[i, d] += 1 / (o.rank_constant + rank)
    names: list[list[str]] = [[] for _ in range(n)]
    for t in cat.tables:
        names[t.database].append(t.nl_name or t.name)
    cards = [
        re.sub(r"[_\W]+", " ", cat.database(d).name).strip() + ": " + ", ".join(sorted(names[d]))
        for d in range(n)
    ]
    vectors = np.asarray(cached.embed(cards + questions), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    similarity = vectors[n:] @ vectors[:n].T
    by_votes = [list(np.argsort(-v, kind="stable")) for v in votes]
    by_card = [list(np.argsort(-s, kind="stable")) for s in similarity]
    fused = []
    for a, b in zip(by_votes, by_card, strict=True):
        score = np.zeros(n)
        for ranking in (a, b):
            score[ranking] += 1 / (60 + np.arange(n))
        fused.append(list(np.argsort(-score, kind="stable")))
    print(f"Spider 2.0-lite, {len(questions)} questions, {n} databases (MiniLM):")
    print(f"- table votes (the router's, top {o.depth}): {_hits(by_votes, gold)}")
    print(f"- database cards: {_hits(by_card, gold)}")
    print(f"- both, reciprocal-rank fused: {_hits(fused, gold)}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--benchmark", nargs="+", default=["spider-union", "bird-union"])
    p.add_argument("--embedding-cache", help="a DiskCachedEmbedder directory")
    p.add_argument("--spider2", action="store_true", help="database choice on Spider 2.0-lite")
    args = p.parse_args(argv)
    if args.spider2:
        spider2(args.embedding_cache)
        return 0
    for name in args.benchmark:
        print(f"## {name}\n")
        run(name, args.embedding_cache)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
