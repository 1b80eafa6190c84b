"""``tabret eval``: methods of :mod:`tabret.methods` on a benchmark (k= and r@ per k)."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tabret import _core
from tabret.benchmarks import BENCHMARKS
from tabret.cli import _adaptive, _crush, _eval_join, _llm, _murre
from tabret.cli._common import (
    LOADERS,
    CopiesChoice,
    FamiliesChoice,
    Identifiers,
    Keys,
    add_catalog_arguments,
    add_embedding_arguments,
    add_reranker_argument,
    embedder_arg,
    load_reranker,
    memo,
    positive_int,
    understood,
)
from tabret.index import TableFormat
from tabret.methods import (
    METHODS,
    GreedyJoinOptions,
    Inputs,
    JarExactOptions,
    Method,
    compose,
    is_prefix,
    method_help,
    method_names,
    pipeline_stages,
)

if TYPE_CHECKING:
    from tabret.benchmarks import Benchmark
    from tabret.eval import EvalResult, RetrieveFn
    from tabret.index import BaseRetriever, TableIndex
    from tabret.reverse import GeneratedQuestions
    from tabret.rewriting import LLMLike
    from tabret.tokens import TokenCounter
    from tabret.values import ValueIndex


@dataclass(frozen=True)
class EvalOptions:
    command: str
    benchmark: str
    methods: list[str]
    pipelines: list[str]
    k: list[int]
    level: Literal["table", "column"]
    text: TableFormat
    embedder: str
    embedding_cache: str | None
    cache_embeddings: bool
    reranker: str | None
    per_k: bool
    generated: str
    questions: str | None
    catalog: str | None
    catalog_format: str
    identifiers: Identifiers
    abbreviations: str | None
    families: FamiliesChoice
    copies: CopiesChoice
    score_copies: bool
    keys: Keys
    knowledge: bool
    documents: bool
    values: bool
    values_cache: str | None
    data_dir: Path | None
    recorded_only: bool
    first: int | None
    within_database: bool
    llm: _llm.LLMChoice
    output: str | None
    json: bool
    quiet: bool
    prompt_tokens: bool
    join: _eval_join.JoinEval
    crush: _crush.CrushEval
    murre: _murre.MurreEval
    adaptive: _adaptive.AdaptiveEval


HELP = "evaluate retrieval methods on a benchmark (prints k= and r@ per k)"
DESCRIPTION = (
    "Builds an index over the benchmark's catalog with the embedder, runs each "
    "method over every question and prints complete recall (k=) and recall (r@) in percent."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--benchmark",
        choices=sorted(BENCHMARKS),
        help="spider-union: 658 Spider dev questions without '*' over 166 DBs; "
        "bird-union: 1,534 BIRD dev questions over 11 DBs (MURRE's revision); "
        "bird-union-crush: the BirdUnion questions with a recorded CRUSH hallucination; "
        "spider-dev / bird-dev: JAR's dev questions over the dev DBs only (81 / 75 tables), "
        "-multi: only questions with two or more gold tables (459 / 1,171); "
        "spider2-lite: the 248 Spider 2.0-lite questions with gold tables over all 162 "
        "warehouses (8,255 tables); spider2-lite-db: the same, each against its own "
        "database only; demo: the bundled demo catalog",
    )
    what.add_argument(
        "--questions",
        metavar="FILE.jsonl",
        help="your own questions instead of a benchmark: JSON lines "
        '{"question": …, "gold_tables": ["db.table", …]} (optional "id", "db"), over --catalog',
    )
    p.add_argument(
        "--catalog", metavar="SOURCE", help="the catalog --questions names its tables in"
    )
    p.add_argument(
        "--catalog-format",
        default="json",
        choices=sorted(LOADERS),
        help="what --catalog is (default: json, tabret's catalog JSON as `tabret catalog` "
        "writes it)",
    )
    add_catalog_arguments(p, ", gold items mapped onto the families")
    p.add_argument(
        "--score-copies",
        action="store_true",
        help="score a gold table's copies in other databases (tabret.copies) as the gold table "
        "itself: retrieval unchanged, for a union of databases",
    )
    p.add_argument(
        "--method",
        nargs="+",
        choices=method_names(),
        help=method_help() + ". The LLM's answers are recorded ones (JAR's decompositions, "
        "CRUSH's hallucinations) unless --llm says otherwise; crush takes k as its column "
        "budget; see the method groups below for their options (default: single-hop, unless "
        "--pipeline)",
    )
    p.add_argument(
        "--pipeline",
        nargs="+",
        default=[],
        metavar="'FIRST > STAGE …'",
        help="composed methods, each evaluated like a method: a first stage, then stages that "
        "take one (e.g. 'reverse > greedy-join > closure', 'route > greedy-join'); each stage "
        "takes the options and inputs of its --method",
    )
    _eval_join.add_arguments(p)
    p.add_argument(
        "--cache-embeddings",
        action="store_true",
        help="embed each distinct text once per command (runs per k and per method repeat "
        "texts); s@k then counts an embedding only in the first run that needs it",
    )
    p.add_argument(
        "--knowledge",
        action="store_true",
        help="append each question's external knowledge to its text before retrieval (BIRD's "
        'evidence, the Spider 2.0-lite document it names, a --questions file\'s "knowledge"); '
        "rows are named <benchmark>+knowledge. Recorded LLM answers are keyed by the plain "
        "question, so LLM methods need --llm offline, local or --llm-url with it",
    )
    p.add_argument(
        "--documents",
        action="store_true",
        help="attach the documents a benchmark ships with its databases (Spider 2.0-lite's "
        "external knowledge documents) to the tables they name: a table's description gains "
        "those passages (tabret.documents); needs --format described, which embeds "
        "descriptions; rows are named <benchmark>+documents",
    )
    p.add_argument(
        "--values",
        action="store_true",
        help="give the index the cell values of the benchmark's databases, for the values "
        "stage (tabret.values): Spider benchmarks (and --questions over a spider --catalog) "
        "from spider-db/'s dumps (SQLite files made once under --values-cache), BIRD from "
        "JAR's sample values (the only BIRD values in the data), a --questions run over a "
        "sqlite --catalog from that file",
    )
    p.add_argument(
        "--values-cache",
        metavar="DIR",
        default=None,
        help="where --values keeps the SQLite files it makes from spider-db/ (default: "
        "$XDG_CACHE_HOME/tabret/spider-db or ~/.cache/tabret/spider-db)",
    )
    p.add_argument(
        "--per-k",
        action="store_true",
        help="one run per k, scoring all returned tables, for every method (the default for "
        "all but the methods whose answer at k is the first k of their answer at a larger k: "
        "single-hop, bm25, reverse, adaptive, MURRE; those are run once at the largest k)",
    )
    p.add_argument(
        "--first",
        type=int,
        metavar="N",
        help="score only the benchmark's first N questions (said in the results' source line)",
    )
    p.add_argument(
        "--within-database",
        action="store_true",
        help="an --embedder that `tabret train` made may be scored on databases it was trained "
        "on (a within-database split): its training questions are still refused",
    )
    _llm.add_arguments(
        p,
        "LLM (crush, murre, greedy-join, jar-exact, reverse)",
        sources=["recorded", "offline", "local", "replay"],
        default="recorded",
        help="where the LLM steps' answers come from: recorded (default): JAR's decompositions "
        "and CRUSH's hallucinations as the papers recorded them, MURRE's coverage removal over "
        "JAR's decompositions; offline: no LLM (the question is the only probe or sub-query, "
        "MURRE's lexical removal, template questions for reverse); " + _llm.LIVE_HELP,
    )
    r = p.add_argument_group("reverse")
    r.add_argument(
        "--generated-questions",
        metavar="template|llm|DIR",
        help="generated questions for --method reverse: 'template' (offline), 'llm' (one per "
        "table, by the --llm model), or a directory saved by GeneratedQuestions.save for this "
        "benchmark and embedder (default: llm with a live or replayed --llm, else template)",
    )
    _crush.add_arguments(p)
    add_embedding_arguments(p, "--format")
    add_reranker_argument(p)
    p.add_argument(
        "--level",
        default="table",
        choices=["table", "column"],
        help="score ranked tables against gold tables (default), or ranked columns (cosine "
        "top-k of db.table.column texts) against gold columns; column needs single-hop",
    )
    p.add_argument(
        "--k",
        nargs="+",
        type=positive_int,
        default=[3, 5, 10, 20],
        help="cut-offs (each at least 1)",
    )
    _adaptive.add_arguments(p)
    p.add_argument(
        "--data-dir", help="benchmark data (default: $TABRET_DATA_DIR or ../shared/data)"
    )
    p.add_argument("--output", metavar="FILE.json", help="write results with per-question ranks")
    p.add_argument("--json", action="store_true", help="print results as JSON")
    p.add_argument(
        "--prompt-tokens",
        action="store_true",
        help="also print the mean prompt tokens of the DDL of the tables returned at each k "
        "(tok@k; table level; the bundled Gemma 3 tokenizer, tabret.tokens: needs the "
        "local-llm extra)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    _murre.add_arguments(p)


def command(args: argparse.Namespace) -> int:
    return run(
        EvalOptions(
            command="tabret " + " ".join(args.argv),
            benchmark=args.benchmark or "",
            methods=list(args.method or ([] if args.pipeline else ["single-hop"])),
            pipelines=list(args.pipeline),
            k=list(args.k),
            level=args.level,
            text=args.format,
            embedder=args.embedder,
            embedding_cache=args.embedding_cache,
            cache_embeddings=args.cache_embeddings,
            reranker=args.reranker,
            per_k=args.per_k,
            generated=args.generated_questions or "",
            questions=args.questions,
            catalog=args.catalog,
            catalog_format=args.catalog_format,
            identifiers=args.identifiers,
            abbreviations=args.abbreviations,
            families=args.families,
            copies=args.copies,
            score_copies=args.score_copies,
            keys=args.keys,
            knowledge=args.knowledge,
            documents=args.documents,
            values=args.values,
            values_cache=args.values_cache,
            data_dir=Path(args.data_dir) if args.data_dir else None,
            recorded_only=args.recorded_only,
            first=args.first,
            within_database=args.within_database,
            llm=_llm.choice(args),
            output=args.output,
            json=args.json,
            quiet=args.quiet,
            prompt_tokens=args.prompt_tokens,
            join=_eval_join.options(args),
            crush=_crush.options(args),
            murre=_murre.options(args),
            adaptive=_adaptive.options(args),
        )
    )


def _benchmark(o: EvalOptions) -> Benchmark:
    from tabret.benchmarks import load_benchmark, questions_benchmark

    if o.questions is not None:
        if o.catalog is None:
            raise ValueError("--questions needs --catalog (the catalog its gold tables are in)")
        catalog = LOADERS[o.catalog_format](o.catalog)
        bench = questions_benchmark(o.questions, catalog)
    else:
        if o.catalog is not None:
            raise ValueError("--catalog goes with --questions (a benchmark has its own catalog)")
        bench = load_benchmark(o.benchmark, o.data_dir)
    bench = replace(
        bench, catalog=understood(bench.catalog, o.identifiers, o.keys, o.abbreviations)
    )
    if o.documents:
        from tabret.benchmarks import with_documents

        if o.text != "described":
            raise ValueError("--documents adds to table descriptions: add --format described")
        bench = with_documents(bench)
    if o.families == "collapse":
        from tabret.families import collapse_benchmark

        bench = collapse_benchmark(bench)
    if o.score_copies:
        from tabret.copies import copies_as_gold

        bench = copies_as_gold(bench)
    if o.copies == "collapse":
        from tabret.copies import collapse_copies
        from tabret.families import collapse_benchmark

        if bench.per_database:
            raise ValueError(
                f"--copies collapse: benchmark '{bench.name}' searches each question's own "
                "database, which holds no copies (a copy group's table lives in one database)"
            )
        bench = collapse_benchmark(bench, collapse_copies(bench.catalog), what="copies")
    if o.recorded_only:
        bench = _murre.recorded_only(bench, o.data_dir)
    if o.first is not None:
        if o.first < 1:
            raise ValueError(f"--first must be at least 1, not {o.first}")
        kept = bench.questions[: o.first]
        source = f"{bench.source}; first {len(kept)} questions"
        bench = replace(bench, questions=kept, source=source)
    if o.knowledge:
        bench = _with_knowledge(bench, o)
    if o.level == "column" and not bench.column_questions:
        raise ValueError(f"benchmark '{bench.name}' has no gold columns (use --level table)")
    return bench


def _with_knowledge(bench: Benchmark, o: EvalOptions) -> Benchmark:
    """--knowledge: the questions with their knowledge appended; refused where recorded LLM
    answers (keyed by the plain question) would be looked up."""
    from tabret.benchmarks import with_knowledge

    if o.llm.source == "recorded":
        stages = [METHODS[m] for m in o.methods]
        stages += [m for spec in o.pipelines for m in pipeline_stages(spec)]
        recorded = sorted({m.name for m in stages if {"llm", "decomposition"} & (m.needs | m.uses)})
        if recorded:
            raise ValueError(
                f"--knowledge changes the question text, and the recorded LLM answers of "
                f"{', '.join(recorded)} are keyed by the plain question: add --llm offline, "
                "--llm local or --llm-url"
            )
    return with_knowledge(bench)


def _embedder(o: EvalOptions) -> object:
    embedder = embedder_arg(o.embedder, o.quiet, o.embedding_cache)
    # Runs per k, per method, MURRE hops, adaptive windows and calibration embed the same
    # texts again.
    if o.cache_embeddings or any(m == "adaptive" or _murre.is_murre(m) for m in o.methods):
        embedder = memo(embedder)
    return embedder


def _generated(
    index: TableIndex, questions: str, llm: LLMLike | None, quiet: bool
) -> GeneratedQuestions:
    """Template questions, an LLM's (``llm``, for "llm" or by default), or questions saved by
    ``GeneratedQuestions.save`` (e.g. written once by an LLM) for this index."""
    from tabret.reverse import GeneratedQuestions

    if questions == "llm" or (not questions and llm is not None):
        if llm is None:
            raise ValueError("--generated-questions llm needs an LLM: --llm local or --llm-url")
        return GeneratedQuestions.build(index, llm, progress=not quiet)
    if questions in ("template", ""):
        return GeneratedQuestions.build(index, progress=not quiet)
    return GeneratedQuestions.load(questions, index)


def _inputs(
    method: Method[Any],
    o: EvalOptions,
    index: TableIndex,
    join: _eval_join.JoinSetup | None,
    llm: LLMLike | None,
) -> Inputs:
    """What ``method`` needs: --generated-questions, or the join graph and the
    decompositions."""
    questions = (
        _generated(index, o.generated, llm, o.quiet) if "questions" in method.needs else None
    )
    reranker = None if o.reranker is None else load_reranker(o.reranker)
    if join is None or "join-graph" not in method.needs:
        return Inputs(questions=questions, reranker=reranker)
    return Inputs(llm=join.llm, graph=join.graph, questions=questions, reranker=reranker)


def _options(method: Method[Any], o: EvalOptions, join: _eval_join.JoinSetup | None) -> object:
    default = method.options()
    if isinstance(default, GreedyJoinOptions):
        return o.join.greedy
    if isinstance(default, JarExactOptions) and join is not None:
        return o.join.jar_options(join.dataset)
    return default


def _retriever(
    name: str,
    o: EvalOptions,
    index: TableIndex,
    join: _eval_join.JoinSetup | None,
    llm: LLMLike | None,
) -> BaseRetriever:
    """A method without its own evaluation (not crush, adaptive or MURRE) over ``index``."""
    method = METHODS[name]
    return method.build(index, _inputs(method, o, index, join, llm), _options(method, o, join))


def _pipeline(
    spec: str,
    o: EvalOptions,
    index: TableIndex,
    join: _eval_join.JoinSetup | None,
    llm: LLMLike | None,
) -> BaseRetriever:
    """A --pipeline: each stage built like its --method (options and inputs), over the last."""

    def build(method: Method[Any], first: BaseRetriever | None) -> BaseRetriever:
        if method.name == "crush" or method.name == "adaptive" or _murre.is_murre(method.name):
            raise ValueError(
                f"--pipeline: {method.name} evaluates only alone (use --method {method.name})"
            )
        inputs = replace(_inputs(method, o, index, join, llm), first=first)
        return method.build(index, inputs, _options(method, o, join))

    return compose(spec, build)


def _stage_names(o: EvalOptions) -> list[str]:
    """The methods run, alone or as stages of a pipeline."""
    return o.methods + [m.name for spec in o.pipelines for m in pipeline_stages(spec)]


def _check_level(o: EvalOptions) -> None:
    ranking = [m.name for m in METHODS.values() if m.columns]
    if o.level == "column" and not all(METHODS[m].columns for m in _stage_names(o)):
        raise ValueError(
            f"--level column needs columns ranked: --method {', '.join(ranking[:-1])} or "
            f"{ranking[-1]}"
        )


def _runs(
    o: EvalOptions, index: TableIndex, bench: Benchmark, embedder: object, llm: LLMLike | None
) -> tuple[list[EvalResult], list[tuple[str, BaseRetriever, bool]]]:
    """CRUSH's results (it evaluates itself) and the (label, retriever, whether it has the
    prefix property) of every other method and pipeline."""
    other = None
    if "adaptive" in o.methods:
        other = _adaptive.calibration_bench(
            o.adaptive, o.benchmark, embedder, o.text, o.data_dir, o.quiet
        )
    offline = o.llm.source == "offline"
    join_options = replace(o.join, decompositions=False) if offline else o.join
    join = _eval_join.join_setup(
        _stage_names(o), join_options, bench, index, o.data_dir, llm, progress=not o.quiet
    )
    results: list[EvalResult] = []
    runs: list[tuple[str, BaseRetriever, bool]] = []
    for method in o.methods:
        if method == "crush":
            res = _crush.crush_eval(
                index,
                bench,
                o.crush,
                k=o.k,
                level=o.level,
                data_dir=o.data_dir,
                quiet=o.quiet,
                llm=llm,
                offline=offline,
            )
            res.command = o.command
            results.append(res)
        elif method == "adaptive":
            prefix = METHODS[method].prefix
            if o.reranker is not None:
                trained = _adaptive.with_reranker(o.adaptive, index, load_reranker(o.reranker))
                runs.append((*trained, prefix))
            runs += [
                (*_adaptive.adaptive(o.adaptive, index, r, other), prefix) for r in o.adaptive.rules
            ]
        elif _murre.is_murre(method):
            m = replace(o.murre, rewriter="lexical") if offline else o.murre
            murre, label = _murre.retriever(method, index, bench, m, o.data_dir, llm)
            runs.append((label, murre, METHODS[method].prefix))
        else:
            runs.append((method, _retriever(method, o, index, join, llm), METHODS[method].prefix))
    runs += [(spec, _pipeline(spec, o, index, join, llm), is_prefix(spec)) for spec in o.pipelines]
    return results, runs


def run(o: EvalOptions) -> int:
    from tabret.benchmarks import database_benchmarks
    from tabret.eval import merge_results
    from tabret.training import check_unseen

    _check_level(o)
    _check_values(o)
    if o.prompt_tokens and o.level != "table":
        raise ValueError("--prompt-tokens counts the tables' DDL: use --level table")
    counter = _token_counter(o)
    print(f"$ {o.command}\n", file=sys.stderr if o.json else sys.stdout, flush=True)
    bench = _benchmark(o)
    for model in (o.embedder, o.reranker):
        if model is not None:
            check_unseen(model, bench, within_database=o.within_database)
    embedder = _embedder(o)
    started = time.perf_counter()
    with _llm.open_llm(o.llm, quiet=o.quiet) as live:
        llm = live.llm if live else None
        if bench.per_database:
            # an index per database: each question ranks its own database's tables only
            parts = [
                _evaluate(o, part, embedder, llm, counter) for part in database_benchmarks(bench)
            ]
            results = [merge_results(rs, bench) for rs in zip(*parts, strict=True)]
        else:
            results = _evaluate(o, bench, embedder, llm, counter)
        _report(o, results, bench)
        if live is not None and live.client is not None:
            wall = time.perf_counter() - started
            line = live.usage_line(len(bench.questions), wall)
            print(line, file=sys.stderr if o.json else sys.stdout)
    return 0


def _token_counter(o: EvalOptions) -> TokenCounter | None:
    """The bundled Gemma 3 tokenizer for --prompt-tokens, counting each text once."""
    if not o.prompt_tokens:
        return None
    from tabret.tokens import gemma_token_counter

    return functools.lru_cache(maxsize=None)(gemma_token_counter())


def _evaluate(
    o: EvalOptions,
    bench: Benchmark,
    embedder: object,
    llm: LLMLike | None,
    counter: TokenCounter | None = None,
) -> list[EvalResult]:
    """Every method and pipeline over an index of ``bench``'s catalog, each run once per k
    unless it has the prefix property (:func:`tabret.methods.is_prefix`) and nothing adds
    tables to it (--join-closure), so that its result at k is what ``tabret query --k`` gives."""
    from tabret.eval import evaluate
    from tabret.index import TableIndex
    from tabret.murre import MurreRetriever
    from tabret.tokens import SchemaTokens

    tokens = SchemaTokens(bench.catalog, counter) if counter is not None else None

    column_level = o.level == "column"
    # Exact search: an evaluation measures the methods; an approximate index kind's own recall
    # against exact search is docs/benchmarks.md's.
    index = TableIndex.build(
        bench.catalog,
        embedder,  # type: ignore[arg-type]
        format=o.text,
        kind="exact",
        columns=column_level or any(METHODS[m].column_index for m in _stage_names(o)),
        progress=not o.quiet,
    )
    if o.values:
        index = index.with_values(_values(o, bench))
    results, runs = _runs(o, index, bench, embedder, llm)
    for (label, base, prefix), with_closure in [(r, c) for r in runs for c in o.join.closure]:
        retriever = _with_closure(base, o) if with_closure else base
        retrieve: RetrieveFn = _with_columns(retriever) if column_level else retriever.retrieve
        res = evaluate(
            retrieve,
            bench,
            o.k,
            method=label + ("+closure" if with_closure else ""),
            embedder=index.embedder_name,
            level=o.level,
            progress=not o.quiet,
            per_k=o.per_k or with_closure or not prefix,
            tokens=tokens,
        )
        res.command = o.command
        results.append(res)
        if isinstance(base, MurreRetriever):
            out = sys.stderr if o.json else sys.stdout
            _murre.report_cost(base, label, len(bench.questions), out)
    return results


def _values_source(o: EvalOptions) -> Literal["sqlite", "spider-db", "jar", "demo"] | None:
    """Where --values reads the cell values from (None: the data holds none)."""
    if o.questions is not None:
        if o.catalog_format == "sqlite":
            return "sqlite"
        return "spider-db" if o.catalog_format == "spider" else None
    if o.benchmark.startswith("spider-"):
        return "spider-db"
    if o.benchmark.startswith("bird"):
        return "jar"
    return "demo" if o.benchmark == "demo" else None


def _check_values(o: EvalOptions) -> None:
    """--values and the values stage: what cannot work is refused before anything is built."""
    if not o.values:
        if any("values" in METHODS[m].needs for m in _stage_names(o)):
            raise ValueError("the values stage needs the databases' cell values: add --values")
        if o.values_cache is not None:
            raise ValueError("--values-cache goes with --values")
        return
    if _values_source(o) is None:
        what = f"--catalog-format {o.catalog_format}" if o.questions else o.benchmark
        raise ValueError(
            f"--values: the data holds no cell values for {what} (they come from spider-db/ for "
            "Spider benchmarks and spider catalogs, JAR's samples for BIRD, the file for a "
            "sqlite --catalog, and the demo's own)"
        )
    if "collapse" in (o.families, o.copies):
        raise ValueError(
            "--values reads the databases' own tables: it cannot go with --families collapse "
            "or --copies collapse"
        )


def _values(o: EvalOptions, bench: Benchmark) -> ValueIndex:
    """--values: the cell values of ``bench``'s databases that the data holds."""
    from tabret.benchmarks import spider_values
    from tabret.datasets import demo_values
    from tabret.values import from_column_stats, read_values

    cat = bench.catalog
    out = sys.stderr if o.json else sys.stdout
    source = _values_source(o)
    if source == "sqlite":
        values = read_values(cat, str(o.catalog), progress=not o.quiet)
    elif source == "demo":
        values = demo_values(cat)
    elif source == "spider-db":
        cache = Path(o.values_cache) if o.values_cache else _cache_home() / "spider-db"
        values, missing = spider_values(cat, cache, o.data_dir, progress=not o.quiet)
        for db, why in sorted(missing.items()):
            print(f"values: {db}: {why}", file=out)
    else:
        from tabret.join import jar_column_stats

        values = from_column_stats(cat, jar_column_stats(cat, "bird", o.data_dir))
    print(
        f"values: {len(values):,} values in {values.columns_with_values:,} columns "
        f"({values.bytes:,} bytes; {values.skipped:,} skipped by the bounds or as no evidence)",
        file=out,
    )
    return values


def _cache_home() -> Path:
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "tabret"


def _with_closure(base: BaseRetriever, o: EvalOptions) -> BaseRetriever:
    closure = METHODS["closure"]
    return closure.build(base.index, Inputs(first=base), o.join.closure_options)


def _with_columns(retriever: BaseRetriever) -> RetrieveFn:
    """``retrieve(questions, k)`` that also asks for the top ``k`` columns."""
    return lambda questions, k: retriever.retrieve(questions, k, k_columns=k)


def _report(o: EvalOptions, results: list[EvalResult], bench: Benchmark) -> None:
    from tabret.eval import format_cut_table, format_table

    if o.json:
        print(json.dumps([r.to_json() | {"per_question": None} for r in results], indent=2))
    else:
        per_k = any(r.per_k for r in results)
        print(format_table(results, seconds=per_k, tables=True in o.join.closure))
        if any(r.cut is not None for r in results):
            print("\nAdaptive cut vs fixed top-k of the same lists at the same mean size:\n")
            print(format_cut_table(results))
        scored = f"{results[0].questions} scored at column level, " if o.level == "column" else ""
        print(f"\n{bench.source}; {len(bench.questions)} questions, {scored}{bench.catalog!r}")
    if o.output:
        text = json.dumps([r.to_json() for r in results], indent=1)
        _core.write_file_atomic(o.output, text.encode("utf-8"))  # the one single-file writer
