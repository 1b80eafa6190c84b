"""The ``tabret`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tabret import _murre_cli
from tabret._core import Error
from tabret.catalog import Catalog

if TYPE_CHECKING:
    from tabret.eval import RetrieveFn
    from tabret.index import _Retriever

_LOADERS: dict[str, Callable[[str], Catalog]] = {
    "spider": Catalog.from_spider_json,
    "ddl": Catalog.from_ddl,
    "sqlite": Catalog.from_sqlite,
    "json": Catalog.from_json,
    "sqlalchemy": Catalog.from_sqlalchemy,
}


def _stats(cat: Catalog) -> dict[str, int]:
    return {
        "databases": cat.num_databases,
        "tables": cat.num_tables,
        "columns": cat.num_columns,
        "foreign_keys": cat.num_foreign_keys,
    }


def _cmd_catalog(args: argparse.Namespace) -> int:
    cat = _LOADERS[args.format](args.source)
    if args.save:
        cat.save_json(args.save)
    stats = _stats(cat)
    if args.json:
        print(json.dumps(stats))
    else:
        for key, value in stats.items():
            print(f"{key.replace('_', ' '):>13}: {value:,}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from tabret.benchmarks import demo
    from tabret.eval import evaluate, format_table
    from tabret.index import DenseRetriever, TableIndex

    bench = demo()
    print(f"demo catalog: {bench.catalog!r}")
    index = TableIndex.build(bench.catalog, _embedder_arg(args.embedder), progress=not args.quiet)  # type: ignore[arg-type]
    retriever = DenseRetriever(index)
    print(f"embedder: {index.embedder_name}; method: single-hop; top {args.k} tables\n")
    shown = bench.questions[: args.limit]
    for q, res in zip(shown, retriever.retrieve([q.question for q in shown], args.k), strict=True):
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


def _embedder_arg(name: str) -> object:
    from tabret.embedders import HashingEmbedder, SentenceTransformerEmbedder

    if name == "hashing":
        return HashingEmbedder()
    return SentenceTransformerEmbedder(name)


def _with_columns(retriever: _Retriever) -> RetrieveFn:
    """``retrieve(questions, k)`` that also asks for the top ``k`` columns."""
    return lambda questions, k: retriever.retrieve(questions, k, k_columns=k)


def _cmd_eval(args: argparse.Namespace) -> int:
    from tabret.benchmarks import load_benchmark
    from tabret.eval import evaluate, format_table
    from tabret.index import DenseRetriever, LexicalRetriever, TableIndex
    from tabret.murre import MurreRetriever

    column_level = args.level == "column"
    if column_level and set(args.method) != {"single-hop"}:
        raise ValueError(
            "--level column ranks columns by dense cosine: only --method single-hop is valid"
        )
    command = "tabret " + " ".join(args.argv)
    print(f"$ {command}\n", flush=True)
    bench = load_benchmark(args.benchmark, Path(args.data_dir) if args.data_dir else None)
    if args.recorded_only:
        bench = _murre_cli.recorded_only(bench, args.data_dir)
    if column_level and not bench.column_questions:
        raise ValueError(f"benchmark '{bench.name}' has no gold columns (use --level table)")
    embedder = _murre_cli.cached(_embedder_arg(args.embedder), args.method)
    index = TableIndex.build(
        bench.catalog,
        embedder,  # type: ignore[arg-type]
        format=args.format,
        columns=column_level,
        progress=not args.quiet,
    )
    results = []
    for method in args.method:
        label = method
        retriever: _Retriever
        if method in _murre_cli.METHODS:
            retriever, label = _murre_cli.retriever(method, index, bench, args)
        elif method == "bm25":
            retriever = LexicalRetriever(index)
        else:
            retriever = DenseRetriever(index, hybrid=method == "hybrid")
        retrieve: RetrieveFn = _with_columns(retriever) if column_level else retriever.retrieve
        res = evaluate(
            retrieve,
            bench,
            args.k,
            method=label,
            embedder=index.embedder_name,
            level=args.level,
            progress=not args.quiet,
        )
        res.command = command
        results.append(res)
        if isinstance(retriever, MurreRetriever):
            out = sys.stderr if args.json else sys.stdout
            _murre_cli.report_cost(retriever, label, len(bench.questions), out)
    if args.json:
        print(json.dumps([r.to_json() | {"per_question": None} for r in results], indent=2))
    else:
        print(format_table(results))
        scored = f"{results[0].questions} scored at column level, " if column_level else ""
        print(f"\n{bench.source}; {len(bench.questions)} questions, {scored}{bench.catalog!r}")
    if args.output:
        Path(args.output).write_text(json.dumps([r.to_json() for r in results], indent=1))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tabret", description="Table retrieval for text-to-SQL over large catalogs."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("catalog", help="load a schema and print its size (or convert it)")
    p.add_argument("format", choices=sorted(_LOADERS), help="what SOURCE is")
    p.add_argument("source", help="file path, or a SQLAlchemy URL for 'sqlalchemy'")
    p.add_argument("--save", metavar="OUT.json", help="also write tabret catalog JSON")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(func=_cmd_catalog)
    p = sub.add_parser(
        "demo", help="retrieve tables for the demo questions on the bundled demo catalog"
    )
    p.add_argument(
        "--embedder",
        default="all-MiniLM-L6-v2",
        help="'hashing' or a sentence-transformers model (default: all-MiniLM-L6-v2)",
    )
    p.add_argument("--k", type=int, default=5, help="tables per question (default: 5)")
    p.add_argument("--limit", type=int, default=8, help="questions to show (default: 8)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd_demo)
    p = sub.add_parser(
        "eval",
        help="evaluate retrieval methods on a benchmark (prints k= and r@ per k)",
        description="Builds an index over the benchmark's catalog with the embedder, runs each "
        "method over every question and prints complete recall (k=) and recall (r@) in percent.",
    )
    p.add_argument(
        "--benchmark",
        required=True,
        choices=["spider-union", "bird-union", "demo"],
        help="spider-union: 658 Spider dev questions without '*' over 166 DBs; "
        "bird-union: 1,534 BIRD dev questions over 11 DBs (MURRE's revision); "
        "demo: the bundled demo catalog",
    )
    p.add_argument(
        "--method",
        nargs="+",
        default=["single-hop"],
        choices=["single-hop", "hybrid", "bm25", *_murre_cli.METHODS],
        help="single-hop: dense cosine; hybrid: dense fused with BM25 (RRF); bm25: lexical only; "
        + _murre_cli.METHODS_HELP,
    )
    p.add_argument(
        "--embedder",
        default="all-MiniLM-L6-v2",
        help="'hashing' (built-in, no model) or a sentence-transformers model name/path "
        "(default: all-MiniLM-L6-v2, offline)",
    )
    p.add_argument(
        "--format",
        default="signature",
        choices=["signature", "words", "ddl"],
        help="table serialisation that is embedded (default: signature, db.table(cols))",
    )
    p.add_argument(
        "--level",
        default="table",
        choices=["table", "column"],
        help="score ranked tables against gold tables (default), or ranked columns (cosine "
        "top-k of db.table.column texts) against gold columns; column needs single-hop",
    )
    p.add_argument("--k", nargs="+", type=int, default=[3, 5, 10, 20], help="cut-offs")
    p.add_argument(
        "--data-dir", help="benchmark data (default: $TABRET_DATA_DIR or ../shared/data)"
    )
    p.add_argument("--output", metavar="FILE.json", help="write results with per-question ranks")
    p.add_argument("--json", action="store_true", help="print results as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    _murre_cli.add_arguments(p)
    p.set_defaults(func=_cmd_eval)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    try:
        return int(args.func(args))
    except (Error, FileNotFoundError, ValueError) as err:
        print(f"tabret: error: {err}", file=sys.stderr)
        return 1
