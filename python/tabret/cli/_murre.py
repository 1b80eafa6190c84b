"""``tabret eval --method murre…``: MURRE with an offline rewriter over recorded data."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

from tabret.cli._common import add_choice, add_number, add_switch
from tabret.methods import METHODS, Inputs, MurreOptions

if TYPE_CHECKING:
    from tabret.benchmarks import Benchmark
    from tabret.index import TableIndex
    from tabret.llms import ReplaySource
    from tabret.murre import MurreRetriever
    from tabret.rewriting import (
        LLMLike,
        QueryRewriter,
        RemovalOutput,
        RewriteRequest,
        RewriteResult,
    )

_JAR = {"spider-union": "spider", "bird-union": "bird"}


@dataclass(frozen=True)
class MurreEval:
    """The options of ``tabret eval --method murre…``."""

    rewriter: Literal["coverage", "lexical"]
    beam: int
    hops: int
    per_beam: int


def add_arguments(p: argparse.ArgumentParser) -> None:
    default = MurreOptions()
    g = p.add_argument_group("MURRE (--method murre…)")
    add_choice(
        g,
        "--rewriter",
        ["coverage", "lexical"],
        "coverage",
        "coverage: coverage removal over JAR's recorded decompositions (a question without "
        "one falls back to lexical removal, and the method label says how many did); "
        "lexical: lexical removal of the question's words (default: coverage)",
    )
    add_number(g, "--beam", int, default.beam, "beam size B")
    add_number(g, "--hops", int, default.hops, "hops H")
    g.add_argument(
        "--per-beam",
        type=int,
        default=default.per_beam,
        help="tables each beam adds per hop (default: 0 = every table, the paper's form; "
        "murre-reference always uses 3B)",
    )
    add_switch(
        g,
        "--recorded-only",
        "score only the questions that have a recorded JAR decomposition (every method)",
    )


def options(args: argparse.Namespace) -> MurreEval:
    return MurreEval(args.rewriter, args.beam, args.hops, args.per_beam)


def is_murre(method: str) -> bool:
    return isinstance(METHODS[method].options(), MurreOptions)


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


def _recordings(bench: Benchmark, data_dir: Path | None) -> ReplaySource:
    from tabret.llms import jar_decompositions

    if bench.name not in _JAR:
        raise ValueError(
            f"no recorded JAR decompositions for benchmark '{bench.name}' (coverage removal "
            "and --recorded-only read them): use --rewriter lexical, or --llm to write them"
        )
    dataset: Literal["spider", "bird"] = "spider" if _JAR[bench.name] == "spider" else "bird"
    return jar_decompositions(dataset, data_dir)


def recorded_only(bench: Benchmark, data_dir: Path | None) -> Benchmark:
    """The benchmark restricted to the questions with a recorded JAR decomposition."""
    source = _recordings(bench, data_dir)
    kept = [q for q in bench.questions if q.question in source]
    return replace(bench, questions=kept, source=f"{bench.source}; recorded decompositions only")


def _rewriter(
    index: TableIndex,
    bench: Benchmark,
    m: MurreEval,
    data_dir: Path | None,
    output: RemovalOutput,
    llm: LLMLike | None,
) -> tuple[QueryRewriter, str]:
    """The rewriter (writing ``output``) and its name in the label: ``llm``'s table
    completions when given, else the offline rewriter --rewriter names."""
    from tabret.llms import _name_of
    from tabret.murre import FallbackRewriter
    from tabret.rewriting import CoverageRemovalRewriter, LexicalRemovalRewriter, MurreRewriter

    if llm is not None:
        if output != "tabulated":
            raise ValueError("an LLM rewriter writes tabulated queries only")
        return MurreRewriter(index.catalog, llm), f"{_name_of(llm)} completions"
    lexical = LexicalRemovalRewriter(index.catalog, output)
    if m.rewriter != "coverage":
        return lexical, "lexical removal"
    source = _recordings(bench, data_dir)
    coverage = CoverageRemovalRewriter(index.catalog, source, output)
    missing = sum(1 for q in bench.questions if q.question not in source)
    if not missing:
        return coverage, "coverage removal"
    fallback = FallbackRewriter(coverage, lexical, lambda q: q in source)
    return fallback, f"coverage removal; lexical for {missing} unrecorded"


def retriever(
    method: str,
    index: TableIndex,
    bench: Benchmark,
    m: MurreEval,
    data_dir: Path | None,
    llm: LLMLike | None = None,
) -> tuple[MurreRetriever, str]:
    """The MURRE retriever for ``method`` and its label for the results table. Its rewriter is
    a :class:`CountingRewriter` (``retriever.rewriter``)."""
    from tabret.murre import MurreRetriever

    entry = METHODS[method]
    options = replace(entry.options(), beam=m.beam, hops=m.hops, per_beam=m.per_beam)
    rewriter, name = _rewriter(index, bench, m, data_dir, options.output, llm)
    label = f"{entry.display} [{name}]"
    if m.per_beam and not options.reference:
        label += f" top {m.per_beam} per beam"
    built = entry.build(index, Inputs(rewriter=lambda _: CountingRewriter(rewriter)), options)
    assert isinstance(built, MurreRetriever)
    return built, label


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
