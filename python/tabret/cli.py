"""The ``tabret`` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from tabret import _murre_cli, _query_cli
from tabret._core import Error
from tabret.benchmarks import BENCHMARKS
from tabret.catalog import Catalog

if TYPE_CHECKING:
    from tabret import CachedEmbedder
    from tabret.adaptive import AdaptiveRetriever, ThresholdRule
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


def _cmd_index(args: argparse.Namespace) -> int:
    from tabret.index import TableIndex

    _query_cli.check_index_arguments(args)
    cat = _LOADERS[args.format](args.source)
    index = TableIndex.build(
        cat,
        _embedder_arg(args.embedder),  # type: ignore[arg-type]
        format=args.text,
        columns=not args.no_columns,
        kind=args.kind,
        progress=not args.quiet,
    )
    graph, questions = _query_cli.build_extras(args, cat, index)
    index.save(args.out, join_graph=graph, questions=questions, replace=args.replace)
    print(f"indexed {cat!r} with {index.embedder_name} ({args.kind}) into {args.out}")
    if graph is not None:
        print(f"join graph: {len(graph):,} edges")
    if questions is not None:
        print(f"generated questions: {cat.num_tables:,} (template)")
    return 0


def _questions(args: argparse.Namespace) -> list[str]:
    questions = list(args.question)
    if args.file:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
        questions += [line.strip() for line in text.splitlines() if line.strip()]
    if not questions:
        raise ValueError("no question given (pass questions as arguments or --file)")
    return questions


def _cmd_query(args: argparse.Namespace) -> int:
    from tabret._core import load_index
    from tabret.index import TableIndex

    questions = _questions(args)
    core, graph, generated = load_index(args.index)  # one consistent read of the directory
    embedder = _embedder_arg(args.embedder or _embedder_name(core.embedder_name))
    index = TableIndex(core, embedder)  # type: ignore[arg-type]
    saved = _query_cli.SavedParts(args.index, graph, generated)
    results = _query_cli.make_retriever(args, index, saved).retrieve(questions, args.k)
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
        return 0
    for res in results:
        print(res.question)
        bridges = {s.table for s in res.trace if s.step == "bridge"}
        for rank, t in enumerate(res.selected, 1):
            print(
                f"  {rank:>3}. {t.score:7.3f}  {t.name}{'  (bridge)' if t.name in bridges else ''}"
            )
    return 0


def _embedder_name(saved: str) -> str:
    """The CLI name of the embedder an index was saved with."""
    from tabret.embedders import HashingEmbedder

    if saved == HashingEmbedder().name:
        return "hashing"
    if saved.startswith("hashing("):
        raise ValueError(
            f"the index was built with a non-default hashing embedder ({saved}); "
            "load it from Python with the same HashingEmbedder parameters"
        )
    return saved


def _cmd_plot(args: argparse.Namespace) -> int:
    from tabret.plot import save_recall_plot

    save_recall_plot(args.results, args.output, args.metric)
    print(f"wrote {args.output}")
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


def _memo(embedder: Any) -> CachedEmbedder:
    """``embedder`` behind an in-memory text -> vector cache, under the same name."""
    from tabret import CachedEmbedder, HashingEmbedder

    inner = embedder if isinstance(embedder, HashingEmbedder) else embedder.embed
    return CachedEmbedder(inner, embedder.name)


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
    if method == "reverse":
        return _query_cli.reverse_retriever(index, args.questions)
    if method not in _JOIN_METHODS:
        return DenseRetriever(index, hybrid=method == "hybrid")
    assert join is not None
    from tabret.join import GreedyJoinRetriever, JarExactRetriever

    if method == "greedy-join":
        return GreedyJoinRetriever(
            index,
            join.graph,
            join.llm,
            candidates=args.join_candidates,
            weights=args.greedy_weights,
        )
    weights = join.dataset if args.jar_weights == "auto" else args.jar_weights
    return JarExactRetriever(
        index,
        join.graph,
        join.llm,
        candidates=args.join_candidates,
        weights=weights,
        connectivity=args.jar_connectivity,
    )


def _adaptive(
    args: argparse.Namespace,
    index: TableIndex,
    rule: ThresholdRule,
    other: tuple[Benchmark, TableIndex] | None,
) -> tuple[str, AdaptiveRetriever]:
    """ATR with the similarity scorer (threshold ``rule``) over --first-stage; the rule's value
    is fitted on ``other`` (--calibrate-on: another benchmark and its index) when given."""
    from tabret.adaptive import AdaptiveRetriever, SimilarityScorer, fit_threshold

    sizes = {"candidates": args.candidates, "window": args.window, "retain": args.retain}
    value, fitted = args.threshold_value, ""
    if other is not None and rule != "gap":
        bench, other_index = other
        cal = fit_threshold(
            _make_retriever(args.first_stage, other_index, None, args),
            bench,
            rule,
            target_complete_recall=args.target_complete_recall,
            depth=args.threshold_depth,
            **sizes,
        )
        value = cal.value
        fitted = f", fitted on {bench.name}"
        print(
            f"calibrated {rule} = {value:g} on {bench.name}: complete recall "
            f"{cal.metrics.complete_recall:.1f}, recall {cal.metrics.recall:.1f}, "
            f"{cal.metrics.mean_tables:.2f} tables (target k= {args.target_complete_recall:g})",
            flush=True,
        )
    scorer = SimilarityScorer(rule, value, args.threshold_depth)
    retriever = AdaptiveRetriever(
        _make_retriever(args.first_stage, index, None, args), scorer, **sizes
    )
    return f"adaptive ({args.first_stage}; {scorer.describe()}{fitted})", retriever


def _calibration_bench(
    args: argparse.Namespace, embedder: object
) -> tuple[Benchmark, TableIndex] | None:
    """--calibrate-on: the other benchmark and its index (same embedder and format)."""
    from tabret.benchmarks import load_benchmark
    from tabret.index import TableIndex

    if "adaptive" not in args.method or not args.calibrate_on:
        return None
    if args.calibrate_on == args.benchmark:
        raise ValueError("--calibrate-on must name another benchmark than --benchmark")
    other = load_benchmark(args.calibrate_on, Path(args.data_dir) if args.data_dir else None)
    index = TableIndex.build(
        other.catalog,
        embedder,  # type: ignore[arg-type]
        format=args.format,
        columns=False,
        progress=not args.quiet,
    )
    return other, index


def _cmd_eval(args: argparse.Namespace) -> int:
    from tabret.benchmarks import load_benchmark
    from tabret.eval import evaluate, format_cut_table, format_table
    from tabret.index import TableIndex
    from tabret.murre import MurreRetriever

    column_level = args.level == "column"
    if column_level and not set(args.method) <= {"single-hop", "crush", *_JOIN_METHODS}:
        raise ValueError(
            "--level column needs columns ranked: --method single-hop, crush, greedy-join or "
            "jar-exact"
        )
    command = "tabret " + " ".join(args.argv)
    print(f"$ {command}\n", flush=True)
    bench = load_benchmark(args.benchmark, Path(args.data_dir) if args.data_dir else None)
    if args.recorded_only:
        bench = _murre_cli.recorded_only(bench, args.data_dir)
    if column_level and not bench.column_questions:
        raise ValueError(f"benchmark '{bench.name}' has no gold columns (use --level table)")
    embedder = _embedder_arg(args.embedder)
    if args.embedding_cache:
        from tabret.embedding_cache import DiskCachedEmbedder

        embedder = DiskCachedEmbedder(embedder, args.embedding_cache)  # type: ignore[arg-type]
    # Runs per k, per method, MURRE hops, adaptive windows and calibration embed the same
    # texts again.
    if args.cache_embeddings or {"adaptive", *_murre_cli.METHODS} & set(args.method):
        embedder = _memo(embedder)
    index = TableIndex.build(
        bench.catalog,
        embedder,  # type: ignore[arg-type]
        format=args.format,
        columns=column_level or "crush" in args.method,
        progress=not args.quiet,
    )
    other = _calibration_bench(args, embedder)
    join = _join_setup(args, bench, index)
    closure = {"off": [False], "on": [True], "both": [False, True]}[args.join_closure]
    per_k = args.per_k or "jar-exact" in args.method or True in closure
    runs: list[tuple[str, _Retriever]] = []
    results = []
    for method in args.method:
        if method == "crush":
            from tabret._crush_cli import crush_eval

            res = crush_eval(index, bench, args)
            res.command = command
            results.append(res)
        elif method == "adaptive":
            runs += [_adaptive(args, index, rule, other) for rule in args.threshold_rule]
        elif method in _murre_cli.METHODS:
            murre, label = _murre_cli.retriever(method, index, bench, args)
            runs.append((label, murre))
        else:
            runs.append((method, _make_retriever(method, index, join, args)))
    for (label, base), with_closure in [(r, c) for r in runs for c in closure]:
        retriever: _Retriever = base
        if with_closure:
            from tabret.join import JoinClosure

            retriever = JoinClosure(base, budget=args.closure_budget, mode=args.closure_mode)
        retrieve: RetrieveFn = _with_columns(retriever) if column_level else retriever.retrieve
        res = evaluate(
            retrieve,
            bench,
            args.k,
            method=label + ("+closure" if with_closure else ""),
            embedder=index.embedder_name,
            level=args.level,
            progress=not args.quiet,
            per_k=per_k,
        )
        res.command = command
        results.append(res)
        if isinstance(base, MurreRetriever):
            out = sys.stderr if args.json else sys.stdout
            _murre_cli.report_cost(base, label, len(bench.questions), out)
    if args.json:
        print(json.dumps([r.to_json() | {"per_question": None} for r in results], indent=2))
    else:
        print(format_table(results, seconds=per_k, tables=True in closure))
        if any(r.cut is not None for r in results):
            print("\nAdaptive cut vs fixed top-k of the same lists at the same mean size:\n")
            print(format_cut_table(results))
        scored = f"{results[0].questions} scored at column level, " if column_level else ""
        print(f"\n{bench.source}; {len(bench.questions)} questions, {scored}{bench.catalog!r}")
    if args.output:
        Path(args.output).write_text(json.dumps([r.to_json() for r in results], indent=1))
    return 0


def _add_embedding_arguments(p: argparse.ArgumentParser, text_flag: str) -> None:
    """--embedder and the table serialisation flag, shared by `index` and `eval`."""
    p.add_argument(
        "--embedder",
        default="all-MiniLM-L6-v2",
        help="'hashing' (built-in, no model) or a sentence-transformers model name/path "
        "(default: all-MiniLM-L6-v2, offline)",
    )
    p.add_argument(
        text_flag,
        default="signature",
        choices=["signature", "words", "ddl"],
        help="table serialisation that is embedded (default: signature, db.table(cols))",
    )


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
        "index",
        help="build a table index over a schema and save it",
        description="Embeds every table (and column) of the schema and saves a versioned, "
        "checksummed index directory that `tabret query` and TableIndex.load read.",
    )
    p.add_argument("format", choices=sorted(_LOADERS), help="what SOURCE is")
    p.add_argument("source", help="file path, or a SQLAlchemy URL for 'sqlalchemy'")
    p.add_argument(
        "out",
        metavar="INDEX_DIR",
        help="directory to write (replaced atomically; only an empty directory or one tabret "
        "saved is ever replaced)",
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="discard a join graph or generated questions saved in INDEX_DIR for another "
        "catalog or embedder (without it, such a save is refused)",
    )
    _add_embedding_arguments(p, "--text")
    p.add_argument(
        "--kind",
        default="exact",
        choices=["exact", "hnsw"],
        help="exact search (default) or an HNSW graph for large catalogs",
    )
    p.add_argument("--no-columns", action="store_true", help="index tables only, not columns")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    _query_cli.add_index_arguments(p)
    p.set_defaults(func=_cmd_index)
    p = sub.add_parser(
        "query",
        help="retrieve tables for questions from a saved index",
        description="Loads an index saved by `tabret index` and prints the top tables for each "
        "question, best first, with their scores.",
    )
    p.add_argument("index", metavar="INDEX_DIR", help="a directory written by `tabret index`")
    p.add_argument("question", nargs="*", help="questions (or use --file)")
    p.add_argument("--file", metavar="FILE", help="more questions, one per line ('-': stdin)")
    p.add_argument(
        "--k",
        type=int,
        default=5,
        help="tables per question (default: 5; adaptive prints its own cut instead)",
    )
    _query_cli.add_query_arguments(p)
    p.add_argument(
        "--embedder",
        help="the embedder the index was built with (default: the name saved in the index)",
    )
    p.add_argument("--json", action="store_true", help="print results as JSON")
    p.set_defaults(func=_cmd_query)
    p = sub.add_parser(
        "plot",
        help="plot recall@k curves from `tabret eval --output` files",
        description="One panel per benchmark, one line per method and embedder (needs "
        "matplotlib: pip install 'tabret[plot]').",
    )
    p.add_argument("results", nargs="+", metavar="EVAL.json", help="evaluation output files")
    p.add_argument("--output", required=True, metavar="FILE.png", help="image to write")
    p.add_argument(
        "--metric",
        default="complete_recall",
        choices=["complete_recall", "recall"],
        help="complete recall k= (default) or recall r@",
    )
    p.set_defaults(func=_cmd_plot)
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
        choices=sorted(BENCHMARKS),
        help="spider-union: 658 Spider dev questions without '*' over 166 DBs; "
        "bird-union: 1,534 BIRD dev questions over 11 DBs (MURRE's revision); "
        "bird-union-crush: the BirdUnion questions with a recorded CRUSH hallucination; "
        "spider-dev / bird-dev: JAR's dev questions over the dev DBs only (81 / 75 tables), "
        "-multi: only questions with two or more gold tables (459 / 1,171); "
        "demo: the bundled demo catalog",
    )
    p.add_argument(
        "--method",
        nargs="+",
        default=["single-hop"],
        choices=[
            "single-hop",
            "hybrid",
            "bm25",
            "reverse",
            "crush",
            "adaptive",
            *_JOIN_METHODS,
            *_murre_cli.METHODS,
        ],
        help="single-hop: dense cosine; hybrid: dense fused with BM25 (RRF); bm25: lexical only; "
        "reverse: Reverse Engineering (schema and generated-question similarity, dynamic alpha); "
        "crush: CRUSH4SQL with recorded LLM probes (k = column budget; --crush-* options); "
        "adaptive: ATR sliding-window re-ranking of --first-stage candidates with the "
        "similarity scorer, cut at its threshold (an adaptive number of tables); "
        "greedy-join: greedy join-aware re-ranking of the dense top candidates with JAR's "
        "recorded decompositions; jar-exact: the JAR objective solved exactly (one run per k); "
        + _murre_cli.METHODS_HELP,
    )
    j = p.add_argument_group("join-aware (greedy-join, jar-exact, --join-closure)")
    j.add_argument(
        "--join-closure",
        nargs="?",
        const="on",
        default="off",
        choices=["off", "on", "both"],
        help="add bridge tables on shortest FK paths after each method (bare flag: on; both: "
        "each method with and without); implies --per-k",
    )
    j.add_argument(
        "--closure-budget", type=int, default=2, help="bridge tables per question (default: 2)"
    )
    j.add_argument(
        "--closure-mode",
        default="append",
        choices=["append", "within_k"],
        help="append: bridges after the k tables (up to k + budget returned); within_k: keep k",
    )
    j.add_argument(
        "--join-candidates",
        type=int,
        default=20,
        help="first-stage tables re-ranked by greedy-join / jar-exact (default: 20)",
    )
    j.add_argument(
        "--greedy-weights",
        default="paper",
        choices=["paper", "reference"],
        help="greedy λ_coarse: paper 4 (default) or the reference code's 3",
    )
    j.add_argument(
        "--jar-weights",
        default="auto",
        choices=["auto", "spider", "bird"],
        help="JAR weights [w1..w5]: spider [2,8,1,10,1], bird [3,8,1,3,1]; auto: by benchmark",
    )
    j.add_argument(
        "--jar-connectivity",
        default="soft",
        choices=["soft", "strict"],
        help="jar-exact: soft (zero-weight edges may complete the join tree; default) or "
        "strict (JAR's hard connectivity over compatible tables, greedy fill where infeasible)",
    )
    j.add_argument(
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
    r = p.add_argument_group("reverse")
    r.add_argument(
        "--questions",
        default="template",
        metavar="template|DIR",
        help="generated questions for --method reverse: 'template' (offline, default) or a "
        "directory saved by GeneratedQuestions.save for this benchmark and embedder",
    )
    from tabret._crush_cli import add_crush_arguments

    add_crush_arguments(p)
    _add_embedding_arguments(p, "--format")
    p.add_argument(
        "--level",
        default="table",
        choices=["table", "column"],
        help="score ranked tables against gold tables (default), or ranked columns (cosine "
        "top-k of db.table.column texts) against gold columns; column needs single-hop",
    )
    p.add_argument("--k", nargs="+", type=int, default=[3, 5, 10, 20], help="cut-offs")
    a = p.add_argument_group("adaptive (ATR) options")
    a.add_argument(
        "--first-stage",
        default="single-hop",
        choices=["single-hop", "hybrid", "bm25"],
        help="where the adaptive re-ranker's candidates come from (default: single-hop)",
    )
    a.add_argument("--candidates", type=int, default=50, help="N candidates (default: 50)")
    a.add_argument("--window", type=int, default=20, help="W tables per window (default: 20)")
    a.add_argument("--retain", type=int, default=15, help="R tables kept (default: 15)")
    a.add_argument(
        "--threshold-rule",
        nargs="+",
        default=["relative"],
        choices=["fixed", "relative", "zscore", "gap"],
        help="similarity scorer threshold, one adaptive row per rule: fixed cosine τ, "
        "relative (best - δ), zscore (mean + z·std of the top --threshold-depth cosines), "
        "gap (largest drop; no value)",
    )
    a.add_argument("--threshold-value", type=float, default=0.1, help="τ, δ or z (default: 0.1)")
    a.add_argument(
        "--threshold-depth", type=int, default=50, help="top cosines for zscore/gap (default: 50)"
    )
    a.add_argument(
        "--calibrate-on",
        choices=["spider-union", "bird-union", "demo"],
        help="fit --threshold-value (per rule; gap has none) on this other benchmark's gold "
        "tables, never the evaluated one's: the fewest mean tables reaching "
        "--target-complete-recall there",
    )
    a.add_argument(
        "--target-complete-recall",
        type=float,
        default=90.0,
        help="complete recall (percent) the calibration aims for (default: 90)",
    )
    p.add_argument(
        "--embedding-cache",
        metavar="DIR",
        help="keep every embedding in DIR and reuse it in later runs (same embedder name)",
    )
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
    except BrokenPipeError:  # e.g. `tabret query ... | head`: the reader left early
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
