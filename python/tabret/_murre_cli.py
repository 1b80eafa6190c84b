"""``tabret eval --method murre…``: MURRE with an offline rewriter over recorded data."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal, TextIO

from tabret.benchmarks import Benchmark
from tabret.index import TableIndex
from tabret.llms import ReplaySource, jar_decompositions
from tabret.murre import FallbackRewriter, MurreRetriever
from tabret.rewriting import (
    CoverageRemovalRewriter,
    LexicalRemovalRewriter,
    QueryRewriter,
    RewriteRequest,
    RewriteResult,
)

#: The MURRE methods of ``tabret eval``: the paper's form, its ablations, the reference form.
METHODS = {
    "murre": "MURRE",
    "murre-no-removal": "MURRE w/o removal",
    "murre-no-tabulation": "MURRE w/o tabulation",
    "murre-no-early-stop": "MURRE w/o early stop",
    "murre-reference": "MURRE (reference-code options)",
}
METHODS_HELP = (
    "murre: MURRE beam search (B=5, H=3) with the --rewriter; murre-no-removal / "
    "murre-no-tabulation / murre-no-early-stop: its ablations; murre-reference: the reference "
    "code's options"
)
_JAR = {"spider-union": "spider", "bird-union": "bird"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("MURRE (--method murre…)")
    g.add_argument(
        "--rewriter",
        default="coverage",
        choices=["coverage", "lexical"],
        help="coverage: coverage removal over JAR's recorded decompositions (a question without "
        "one falls back to lexical removal, and the method label says how many did); "
        "lexical: lexical removal of the question's words (default: coverage)",
    )
    g.add_argument("--beam", type=int, default=5, help="beam size B (default: 5)")
    g.add_argument("--hops", type=int, default=3, help="hops H (default: 3)")
    g.add_argument(
        "--per-beam",
        type=int,
        default=0,
        help="tables each beam adds per hop (default: 0 = every table, the paper's form; "
        "murre-reference always uses 3B)",
    )
    g.add_argument(
        "--recorded-only",
        action="store_true",
        help="score only the questions that have a recorded JAR decomposition (every method)",
    )


class CountingRewriter:
    """Counts the requests (and calls) a rewriter gets: the LLM budget it would cost."""

    def __init__(self, inner: QueryRewriter) -> None:
        self.inner = inner
        self.calls = 0
        self.requests = 0

    def rewrite(self, requests: Sequence[RewriteRequest | str]) -> list[RewriteResult]:
        self.calls += 1
        self.requests += len(requests)
        return self.inner.rewrite(requests)


def _recordings(bench: Benchmark, data_dir: str | None) -> ReplaySource:
    if bench.name not in _JAR:
        raise ValueError(f"no recorded decompositions for benchmark '{bench.name}'")
    dataset: Literal["spider", "bird"] = "spider" if _JAR[bench.name] == "spider" else "bird"
    return jar_decompositions(dataset, Path(data_dir) if data_dir else None)


def recorded_only(bench: Benchmark, data_dir: str | None) -> Benchmark:
    """The benchmark restricted to the questions with a recorded JAR decomposition."""
    source = _recordings(bench, data_dir)
    kept = [q for q in bench.questions if q.question in source]
    return replace(bench, questions=kept, source=f"{bench.source}; recorded decompositions only")


def retriever(
    method: str, index: TableIndex, bench: Benchmark, args: argparse.Namespace
) -> tuple[MurreRetriever, str]:
    """The MURRE retriever for ``method`` and its label for the results table. Its rewriter is
    a :class:`CountingRewriter` (``retriever.rewriter``)."""
    tabulated = method != "murre-no-tabulation"
    output: Literal["tabulated", "terms"] = "tabulated" if tabulated else "terms"
    cat = index.catalog
    lexical = LexicalRemovalRewriter(cat, output)
    rewriter: QueryRewriter = lexical
    name = "lexical removal"
    if args.rewriter == "coverage":
        source = _recordings(bench, args.data_dir)
        coverage = CoverageRemovalRewriter(cat, source, output)
        missing = sum(1 for q in bench.questions if q.question not in source)
        rewriter = coverage
        name = "coverage removal"
        if missing:
            rewriter = FallbackRewriter(coverage, lexical, lambda q: q in source)
            name += f"; lexical for {missing} unrecorded"
    label = f"{METHODS[method]} [{name}]"
    if args.per_beam and method != "murre-reference":
        label += f" top {args.per_beam} per beam"
    counted = CountingRewriter(rewriter)
    if method == "murre-reference":
        return MurreRetriever.reference(index, counted, beam=args.beam, hops=args.hops), label
    return MurreRetriever(
        index,
        counted,
        beam=args.beam,
        hops=args.hops,
        per_beam=args.per_beam,
        removal=method != "murre-no-removal",
        early_stop=method != "murre-no-early-stop",
    ), label


def report_cost(r: MurreRetriever, label: str, questions: int, file: TextIO) -> None:
    """Prints the rewrite requests (the LLM prompts a live LLM would get) per question."""
    if isinstance(r.rewriter, CountingRewriter):
        c = r.rewriter
        print(
            f"{label}: {c.requests} rewrite requests in {c.calls} calls, "
            f"{c.requests / max(questions, 1):.2f} per question "
            f"(at most {r.beam * (r.hops - 1)})",
            file=file,
            flush=True,
        )
