"""``tabret demo``: retrieve tables for the demo questions on the bundled demo catalog."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from tabret.cli._common import embedder_arg


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
    p.add_argument("--k", type=int, default=5, help="tables per question (default: 5)")
    p.add_argument("--limit", type=int, default=8, help="questions to show (default: 8)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def command(args: argparse.Namespace) -> int:
    return run(DemoOptions(args.embedder, args.k, args.limit, args.quiet))


def run(o: DemoOptions) -> int:
    from tabret.benchmarks import demo
    from tabret.eval import evaluate, format_table
    from tabret.index import DenseRetriever, TableIndex

    bench = demo()
    print(f"demo catalog: {bench.catalog!r}")
    index = TableIndex.build(bench.catalog, embedder_arg(o.embedder, o.quiet), progress=not o.quiet)  # type: ignore[arg-type]
    retriever = DenseRetriever(index)
    print(f"embedder: {index.embedder_name}; method: single-hop; top {o.k} tables\n")
    shown = bench.questions[: o.limit]
    for q, res in zip(shown, retriever.retrieve([q.question for q in shown], o.k), strict=True):
        gold = {bench.catalog.qualified_name(t) for t in q.gold_tables}
        print(f"[{q.id}] {q.question}")
        for t in res.tables:
            mark = "*" if t.name in gold else " "
            print(f"   {mark} {t.score:.3f}  {t.name}")
        missed = gold - set(res.table_names)
        if missed:
            print(f"     missed: {', '.join(sorted(missed))}")
    result = evaluate(
        retriever.retrieve,
        bench,
        (3, 5, 10),
        method="single-hop",
        embedder=index.embedder_name,
        progress=False,
    )
    print(f"\n* = a gold table. Over all {len(bench.questions)} demo questions:\n")
    print(format_table([result]))
    return 0
