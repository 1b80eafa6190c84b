"""``tabret eval --method adaptive``: ATR with the similarity scorer over --first-stage, its
threshold fitted on another benchmark when --calibrate-on names one."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from tabret.cli._common import add_choice, add_number, add_threshold_rule
from tabret.index import TableFormat
from tabret.methods import METHODS, AdaptiveOptions, Inputs, NoOptions

if TYPE_CHECKING:
    from tabret.adaptive import ThresholdRule
    from tabret.benchmarks import Benchmark
    from tabret.index import BaseRetriever, TableIndex
    from tabret.rerank import PairScorer


@dataclass(frozen=True)
class AdaptiveEval:
    """The options of ``tabret eval --method adaptive``."""

    first_stage: str
    rules: list[ThresholdRule]
    options: AdaptiveOptions
    calibrate_on: str | None
    target_complete_recall: float


def first_stages() -> list[str]:
    """The methods that rank the index with the index alone (ATR's --first-stage)."""
    return [
        m.name
        for m in METHODS.values()
        if m.kind == "first" and not m.needs and not m.uses and m.options is NoOptions
    ]


def add_arguments(p: argparse.ArgumentParser) -> None:
    default = AdaptiveOptions()
    a = p.add_argument_group("adaptive (ATR) options")
    add_choice(
        a,
        "--first-stage",
        first_stages(),
        "single-hop",
        "where the adaptive re-ranker's candidates come from (default: single-hop)",
    )
    add_number(a, "--candidates", int, default.candidates, "N candidates")
    add_number(a, "--window", int, default.window, "W tables per window")
    add_number(a, "--retain", int, default.retain, "R tables kept")
    add_threshold_rule(
        a,
        default.rule,
        several=True,
        help="similarity scorer threshold, one adaptive row per rule: fixed cosine τ, "
        "relative (best - δ), zscore (mean + z·std of the top --threshold-depth cosines), "
        "gap (largest drop; no value)",
    )
    add_number(a, "--threshold-value", float, default.value, "τ, δ or z")
    add_number(a, "--threshold-depth", int, default.depth, "top cosines for zscore/gap")
    add_choice(
        a,
        "--calibrate-on",
        ["spider-union", "bird-union", "demo"],
        None,
        "fit --threshold-value (per rule; gap has none) on this other benchmark's gold "
        "tables, never the evaluated one's: the fewest mean tables reaching "
        "--target-complete-recall there",
    )
    a.add_argument(
        "--target-complete-recall",
        type=float,
        default=90.0,
        help="complete recall (percent) the calibration aims for (default: 90)",
    )


def options(args: argparse.Namespace) -> AdaptiveEval:
    return AdaptiveEval(
        first_stage=args.first_stage,
        rules=list(args.threshold_rule),
        options=AdaptiveOptions(
            value=args.threshold_value,
            depth=args.threshold_depth,
            candidates=args.candidates,
            window=args.window,
            retain=args.retain,
        ),
        calibrate_on=args.calibrate_on,
        target_complete_recall=args.target_complete_recall,
    )


def _first(a: AdaptiveEval, index: TableIndex) -> BaseRetriever:
    method = METHODS[a.first_stage]
    return method.build(index, Inputs(), method.options())


def adaptive(
    a: AdaptiveEval,
    index: TableIndex,
    rule: ThresholdRule,
    other: tuple[Benchmark, TableIndex] | None,
) -> tuple[str, BaseRetriever]:
    """ATR with the similarity scorer (threshold ``rule``) over --first-stage; the rule's value
    is fitted on ``other`` (--calibrate-on: another benchmark and its index) when given."""
    from tabret.adaptive import fit_threshold

    o, fitted = replace(a.options, rule=rule), ""
    if other is not None and rule != "gap":
        bench, other_index = other
        cal = fit_threshold(
            _first(a, other_index),
            bench,
            rule,
            target_complete_recall=a.target_complete_recall,
            depth=o.depth,
            candidates=o.candidates,
            window=o.window,
            retain=o.retain,
        )
        o, fitted = replace(o, value=cal.value), f", fitted on {bench.name}"
        print(
            f"calibrated {rule} = {cal.value:g} on {bench.name}: complete recall "
            f"{cal.metrics.complete_recall:.1f}, recall {cal.metrics.recall:.1f}, "
            f"{cal.metrics.mean_tables:.2f} tables (target k= {a.target_complete_recall:g})",
            flush=True,
        )
    retriever = METHODS["adaptive"].build(index, Inputs(first=_first(a, index)), o)
    return f"adaptive ({a.first_stage}; {o.scorer().describe()}{fitted})", retriever


def with_reranker(
    a: AdaptiveEval, index: TableIndex, reranker: PairScorer
) -> tuple[str, BaseRetriever]:
    """ATR with a cross-encoder as the window scorer (threshold logit 0) over --first-stage."""
    from tabret.rerank import scorer_name

    inputs = Inputs(first=_first(a, index), reranker=reranker)
    retriever = METHODS["adaptive"].build(index, inputs, a.options)
    return (
        f"adaptive ({a.first_stage}; {Path(scorer_name(reranker)).name}, threshold logit 0)",
        retriever,
    )


def calibration_bench(
    a: AdaptiveEval,
    benchmark: str,
    embedder: object,
    text: TableFormat,
    data_dir: Path | None,
    quiet: bool,
) -> tuple[Benchmark, TableIndex] | None:
    """--calibrate-on: the other benchmark and its index (same embedder and format)."""
    from tabret.benchmarks import load_benchmark
    from tabret.index import TableIndex

    if not a.calibrate_on:
        return None
    if a.calibrate_on == benchmark:
        raise ValueError("--calibrate-on must name another benchmark than --benchmark")
    other = load_benchmark(a.calibrate_on, data_dir)
    index = TableIndex.build(
        other.catalog,
        embedder,  # type: ignore[arg-type]
        format=text,
        columns=False,
        progress=not quiet,
    )
    return other, index
