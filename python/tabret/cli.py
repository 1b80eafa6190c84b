"""The ``tabret`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from tabret._core import Error
from tabret.catalog import Catalog

if TYPE_CHECKING:
    from tabret.benchmarks import Benchmark
    from tabret.eval import RetrieveFn
    from tabret.index import TableIndex, _Retriever
    from tabret.join import JoinGraph
    from tabret.llms import CallableLLM


class JoinSetup(NamedTuple):
    dataset: Literal["spider", "bird"]
    graph: JoinGraph
    llm: CallableLLM


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


class _MemoEmbedder:
    """Embeds each distinct text once per command (``--cache-embeddings``): an evaluation run
    per k and per method repeats the same questions and sub-queries."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._memo: dict[str, Any] = {}

    @property
    def name(self) -> str:
        return str(self._inner.name)

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        from tabret.embedders import embed_texts

        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            rows = embed_texts(self._inner, missing)
            for text, row in zip(missing, rows, strict=True):
                self._memo[text] = row
        return np.stack([self._memo[t] for t in texts])


def _with_columns(retriever: _Retriever) -> RetrieveFn:
    """``retrieve(questions, k)`` that also asks for the top ``k`` columns."""
    return lambda questions, k: retriever.retrieve(questions, k, k_columns=k)


_JOIN_METHODS = ("greedy-join", "jar-exact")


def _jar_dataset(bench: str) -> Literal["spider", "bird"]:
    """Which JAR recordings (decompositions, value statistics) a benchmark's questions use."""
    if bench.startswith("spider"):
        return "spider"
    if bench.startswith("bird"):
        return "bird"
    raise ValueError(f"greedy-join and jar-exact need JAR decompositions: none for '{bench}'")


def _join_setup(args: argparse.Namespace, bench: Benchmark, index: TableIndex) -> JoinSetup | None:
    """The join graph and the recorded decompositions, when a join-aware method runs."""
    if not set(args.method) & set(_JOIN_METHODS):
        return None
    from tabret.join import JoinGraph, jar_column_stats, lenient_replay
    from tabret.llms import jar_decompositions

    dataset = _jar_dataset(bench.name)
    data = Path(args.data_dir) if args.data_dir else None
    stats = None if args.no_value_stats else jar_column_stats(bench.catalog, dataset, data)
    source = jar_decompositions(dataset, data)
    missing = sum(1 for q in bench.questions if q.question not in source)
    print(
        f"JAR {dataset} decompositions: {len(bench.questions) - missing} questions recorded, "
        f"{missing} without a recording (their sub-query is the question itself)\n",
        flush=True,
    )
    return JoinSetup(dataset, JoinGraph.build(index, stats), lenient_replay(source))


def _make_retriever(
    method: str, index: TableIndex, join: JoinSetup | None, args: argparse.Namespace
) -> _Retriever:
    from tabret.index import DenseRetriever, LexicalRetriever

    if method == "bm25":
        return LexicalRetriever(index)
    if method not in _JOIN_METHODS:
        return DenseRetriever(index, hybrid=method == "hybrid")
    assert join is not None
    from tabret.join import GreedyJoinRetriever, JarExactRetriever

    if method == "greedy-join":
        return GreedyJoinRetriever(
            index, join.graph, join.llm, candidates=args.candidates, weights=args.greedy_weights
        )
    weights = join.dataset if args.jar_weights == "auto" else args.jar_weights
    return JarExactRetriever(
        index,
        join.graph,
        join.llm,
        candidates=args.candidates,
        weights=weights,
        connectivity=args.jar_connectivity,
    )


def _cmd_eval(args: argparse.Namespace) -> int:
    from tabret.benchmarks import load_benchmark
    from tabret.eval import evaluate, format_table
    from tabret.index import TableIndex

    column_level = args.level == "column"
    if column_level and not set(args.method) <= {"single-hop", *_JOIN_METHODS}:
        raise ValueError(
            "--level column needs columns ranked: --method single-hop, greedy-join or jar-exact"
        )
    command = "tabret " + " ".join(args.argv)
    print(f"$ {command}\n", flush=True)
    bench = load_benchmark(args.benchmark, Path(args.data_dir) if args.data_dir else None)
    if column_level and not bench.column_questions:
        raise ValueError(f"benchmark '{bench.name}' has no gold columns (use --level table)")
    embedder = _embedder_arg(args.embedder)
    if args.cache_embeddings:
        embedder = _MemoEmbedder(embedder)
    index = TableIndex.build(
        bench.catalog,
        embedder,  # type: ignore[arg-type]
        format=args.format,
        columns=column_level,
        progress=not args.quiet,
    )
    join = _join_setup(args, bench, index)
    closure = {"off": [False], "on": [True], "both": [False, True]}[args.join_closure]
    per_k = args.per_k or "jar-exact" in args.method or True in closure
    results = []
    for method, with_closure in [(m, c) for m in args.method for c in closure]:
        retriever = _make_retriever(method, index, join, args)
        if with_closure:
            from tabret.join import JoinClosure

            retriever = JoinClosure(retriever, budget=args.closure_budget, mode=args.closure_mode)
        retrieve: RetrieveFn = _with_columns(retriever) if column_level else retriever.retrieve
        res = evaluate(
            retrieve,
            bench,
            args.k,
            method=method + ("+closure" if with_closure else ""),
            embedder=index.embedder_name,
            level=args.level,
            progress=not args.quiet,
            per_k=per_k,
        )
        res.command = command
        results.append(res)
    if args.json:
        print(json.dumps([r.to_json() | {"per_question": None} for r in results], indent=2))
    else:
        print(format_table(results, seconds=per_k, tables=True in closure))
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
        choices=[
            "spider-union",
            "bird-union",
            "spider-dev",
            "bird-dev",
            "spider-dev-multi",
            "bird-dev-multi",
            "demo",
        ],
        help="spider-union: 658 Spider dev questions without '*' over 166 DBs; "
        "bird-union: 1,534 BIRD dev questions over 11 DBs (MURRE's revision); "
        "spider-dev / bird-dev: JAR's dev questions over the dev DBs only (81 / 75 tables), "
        "-multi: only questions with two or more gold tables (459 / 1,171); "
        "demo: the bundled demo catalog",
    )
    p.add_argument(
        "--method",
        nargs="+",
        default=["single-hop"],
        choices=["single-hop", "hybrid", "bm25", *_JOIN_METHODS],
        help="single-hop: dense cosine; hybrid: dense fused with BM25 (RRF); bm25: lexical only; "
        "greedy-join: greedy join-aware re-ranking of the dense top candidates with JAR's "
        "recorded decompositions; jar-exact: the JAR objective solved exactly (one run per k)",
    )
    p.add_argument(
        "--join-closure",
        nargs="?",
        const="on",
        default="off",
        choices=["off", "on", "both"],
        help="add bridge tables on shortest FK paths after each method (bare flag: on; both: "
        "each method with and without); implies --per-k",
    )
    p.add_argument(
        "--closure-budget", type=int, default=2, help="bridge tables per question (default: 2)"
    )
    p.add_argument(
        "--closure-mode",
        default="append",
        choices=["append", "within_k"],
        help="append: bridges after the k tables (up to k + budget returned); within_k: keep k",
    )
    p.add_argument(
        "--candidates",
        type=int,
        default=20,
        help="first-stage tables re-ranked by greedy-join / jar-exact (default: 20)",
    )
    p.add_argument(
        "--greedy-weights",
        default="paper",
        choices=["paper", "reference"],
        help="greedy λ_coarse: paper 4 (default) or the reference code's 3",
    )
    p.add_argument(
        "--jar-weights",
        default="auto",
        choices=["auto", "spider", "bird"],
        help="JAR weights [w1..w5]: spider [2,8,1,10,1], bird [3,8,1,3,1]; auto: by benchmark",
    )
    p.add_argument(
        "--jar-connectivity",
        default="soft",
        choices=["soft", "strict"],
        help="jar-exact: soft (zero-weight edges may complete the join tree; default) or "
        "strict (JAR's hard connectivity over compatible tables, greedy fill where infeasible)",
    )
    p.add_argument(
        "--no-value-stats",
        action="store_true",
        help="build the join graph without JAR's recorded uniqueness and sample values",
    )
    p.add_argument(
        "--cache-embeddings",
        action="store_true",
        help="embed each distinct text once per command (runs per k and per method repeat "
        "texts); s@k then counts an embedding only in the first run that needs it",
    )
    p.add_argument(
        "--per-k",
        action="store_true",
        help="one run per k, scoring all returned tables (automatic for jar-exact and closure)",
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
