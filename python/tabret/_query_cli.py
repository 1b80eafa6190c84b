"""``tabret index`` extras (join graph, generated questions) and ``tabret query --method``: every
method over a saved index, with an OpenAI-compatible LLM when ``--llm-url`` is given and the
offline path otherwise."""

from __future__ import annotations

import argparse
import os
import sys
import urllib.parse
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tabret import _core
    from tabret._core import ColumnStats
    from tabret.catalog import Catalog
    from tabret.index import TableIndex, _Retriever
    from tabret.join import JoinGraph
    from tabret.reverse import GeneratedQuestions
    from tabret.rewriting import LLMLike


@dataclass(frozen=True)
class SavedParts:
    """What ``tabret query`` read from the index directory besides the index (one read)."""

    path: str
    graph: _core.JoinGraph | None
    questions: _core.QuestionIndex | None


METHODS = (
    "single-hop",
    "hybrid",
    "bm25",
    "reverse",
    "murre",
    "crush",
    "greedy-join",
    "jar-exact",
    "adaptive",
)
METHODS_HELP = (
    "single-hop: dense cosine (default); hybrid: dense fused with BM25; bm25: lexical; "
    "reverse: fused with the questions generated at index time (`tabret index --questions`); "
    "murre: multi-hop beam search (removal by --llm-url, else offline lexical removal); "
    "crush: collective selection from a hallucinated schema (needs --llm-url); "
    "greedy-join / jar-exact: join-aware selection over the join graph (`tabret index "
    "--join-graph`; sub-queries from --llm-url, else the question is its only sub-query); "
    "adaptive: ATR over single-hop, cut where the window scores fall below the threshold"
)


def add_index_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("saved beside the index (for `tabret query --method …`)")
    g.add_argument(
        "--join-graph",
        action="store_true",
        help="also build and save the join graph (greedy-join, jar-exact, --closure)",
    )
    g.add_argument(
        "--column-stats",
        action="store_true",
        help="with --join-graph and a sqlite or sqlalchemy SOURCE: read each column's "
        "uniqueness and sample values from the database for join inference",
    )
    g.add_argument(
        "--questions",
        action="store_true",
        help="also generate one template question per table and save them (reverse)",
    )


def check_index_arguments(args: argparse.Namespace) -> None:
    """Rejects option combinations that cannot work, before anything is built."""
    if args.column_stats and not args.join_graph:
        raise ValueError("--column-stats only feeds --join-graph: add --join-graph")
    if args.column_stats and args.format not in ("sqlite", "sqlalchemy"):
        raise ValueError(
            f"--column-stats needs a live database (sqlite or sqlalchemy), not {args.format}"
        )


def build_extras(
    args: argparse.Namespace, cat: Catalog, index: TableIndex
) -> tuple[JoinGraph | None, GeneratedQuestions | None]:
    """The join graph and the generated questions ``tabret index`` asked for, saved with it."""
    graph = questions = None
    if args.join_graph:
        from tabret.join import JoinGraph

        stats = None
        if args.column_stats:
            stats = _live_column_stats(args, cat)
            print(f"column statistics: {stats.known:,} of {len(stats):,} columns have values")
        graph = JoinGraph.build(index, stats)
    if args.questions:
        from tabret.reverse import GeneratedQuestions

        questions = GeneratedQuestions.build(index)
    return graph, questions


def _live_column_stats(args: argparse.Namespace, cat: Catalog) -> ColumnStats:
    """--column-stats: a sqlalchemy SOURCE is the user's URL; a sqlite SOURCE is exactly the
    named file, opened read-only (never a ``sqlite:///`` URL built from the name)."""
    from tabret.join import column_stats_from_database

    if args.format == "sqlalchemy":
        return column_stats_from_database(cat, args.source, cat.databases[0].name)
    from tabret._sqlalchemy import sqlite_engine

    engine = sqlite_engine(args.source)
    try:
        return column_stats_from_database(cat, engine, cat.databases[0].name)
    finally:
        engine.dispose()


def add_query_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--method", default="single-hop", choices=METHODS, help=METHODS_HELP)
    p.add_argument(
        "--closure",
        action="store_true",
        help="add the bridge tables on foreign-key paths between the tables found (needs the "
        "join graph)",
    )
    g = p.add_argument_group("LLM (crush; optional for murre, greedy-join, jar-exact)")
    g.add_argument("--llm-url", help="an OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    g.add_argument("--llm-model", default="gpt-4o-mini", help="model name (default: gpt-4o-mini)")
    g = p.add_argument_group("adaptive")
    g.add_argument(
        "--threshold-rule",
        default="zscore",
        choices=["fixed", "relative", "zscore", "gap"],
        help="how the cut threshold follows the question's cosines (default: zscore)",
    )
    g.add_argument(
        "--threshold",
        type=float,
        default=1.25,
        help="the rule's value (default: z = 1.25, fitted on SpiderUnion for 80%% complete "
        "recall; see docs/results.md)",
    )


def _llm(args: argparse.Namespace) -> LLMLike | None:
    if not args.llm_url:
        return None
    from tabret.llms import OpenAICompatibleLLM

    # Credentials in the URL (http://user:KEY@host/v1) are the ones meant: no key from the
    # environment then (the client refuses both at once).
    in_url = "@" in urllib.parse.urlsplit(args.llm_url).netloc
    key = os.environ.get("TABRET_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY")
    return OpenAICompatibleLLM(args.llm_url, args.llm_model, None if in_url else key)


def _no_llm_note(method: str, what: str) -> None:
    print(f"note: {method} without --llm-url: {what}", file=sys.stderr)


def make_retriever(args: argparse.Namespace, index: TableIndex, saved: SavedParts) -> _Retriever:
    """The retriever ``--method`` names over a loaded index (``--closure`` wraps it)."""
    base = _method(args, index, saved)
    if not args.closure:
        return base
    from tabret.join import JoinClosure

    return JoinClosure(base)


def _method(args: argparse.Namespace, index: TableIndex, saved: SavedParts) -> _Retriever:
    from tabret.index import DenseRetriever, LexicalRetriever

    method, llm = args.method, _llm(args)
    if method == "bm25":
        return LexicalRetriever(index)
    if method in ("single-hop", "hybrid"):
        return DenseRetriever(index, hybrid=method == "hybrid")
    if method == "reverse":
        return _reverse(index, saved)
    if method == "murre":
        return _murre(index, llm)
    if method == "crush":
        from tabret.crush import CrushRetriever

        if llm is None:
            raise ValueError("crush hallucinates a schema with an LLM: give --llm-url")
        return CrushRetriever(index, llm=llm)
    if method in ("greedy-join", "jar-exact"):
        return _join(args, index, saved, llm)
    from tabret.adaptive import AdaptiveRetriever, SimilarityScorer

    scorer = SimilarityScorer(args.threshold_rule, args.threshold)
    return AdaptiveRetriever(DenseRetriever(index), scorer)


def reverse_retriever(index: TableIndex, questions: str) -> _Retriever:
    """Reverse Engineering over template questions, or questions saved by
    ``GeneratedQuestions.save`` (e.g. written once by an LLM) for this index."""
    from tabret.reverse import GeneratedQuestions, ReverseRetriever

    generated = (
        GeneratedQuestions.build(index)
        if questions == "template"
        else GeneratedQuestions.load(questions, index)
    )
    return ReverseRetriever(index, generated)


def _reverse(index: TableIndex, saved: SavedParts) -> _Retriever:
    from tabret.reverse import GeneratedQuestions, ReverseRetriever

    if saved.questions is None:
        raise ValueError(
            f"{saved.path} has no generated questions: build it with `tabret index --questions`"
        )
    return ReverseRetriever(index, GeneratedQuestions(saved.questions, index))


def _murre(index: TableIndex, llm: LLMLike | None) -> _Retriever:
    from tabret.murre import MurreRetriever
    from tabret.rewriting import LexicalRemovalRewriter, MurreRewriter

    if llm is None:
        _no_llm_note("murre", "offline lexical removal rewrites each hop's question")
        return MurreRetriever(index, LexicalRemovalRewriter(index.catalog))
    return MurreRetriever(index, MurreRewriter(index.catalog, llm))


def _graph(index: TableIndex, saved: SavedParts) -> JoinGraph:
    from tabret.join import JoinGraph

    if saved.graph is None:
        raise ValueError(
            f"{saved.path} has no join graph: build it with `tabret index --join-graph`"
        )
    return JoinGraph(saved.graph, index)


def _join(
    args: argparse.Namespace, index: TableIndex, saved: SavedParts, llm: LLMLike | None
) -> _Retriever:
    from tabret.join import GreedyJoinRetriever, JarExactRetriever
    from tabret.llms import CallableLLM

    graph = _graph(index, saved)
    if llm is None:
        _no_llm_note(args.method, "each question is its own only sub-query")
        llm = CallableLLM(lambda prompts: [""] * len(prompts), "no LLM")
    if args.method == "greedy-join":
        return GreedyJoinRetriever(index, graph, llm)
    return JarExactRetriever(index, graph, llm)
