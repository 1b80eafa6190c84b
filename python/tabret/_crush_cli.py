"""``tabret eval --method crush``: the probe source and the CRUSH options (private)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tabret.benchmarks import Benchmark
from tabret.crush import CrushRetriever, evaluate_per_budget
from tabret.eval import EvalResult, RetrieveFn, evaluate
from tabret.index import TableIndex
from tabret.llms import ReplayLLM
from tabret.rewriting import CrushRewriter, DecompositionRewriter, QueryRewriter

__all__ = ["add_crush_arguments", "crush_eval"]


def add_crush_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("crush", "options of --method crush")
    g.add_argument(
        "--crush-probes",
        default="auto",
        choices=["auto", "crush", "jar"],
        help="probe source: crush = CRUSH's recorded hallucinated schemas (BIRD only); jar = "
        "JAR's recorded decompositions (concept:attribute); auto: crush on BIRD, jar on Spider",
    )
    g.add_argument(
        "--crush-objective",
        default="paper",
        choices=["paper", "round-robin"],
        help="paper: coverage + connectivity, greedy (default); round-robin: reference greedy",
    )
    g.add_argument(
        "--crush-candidates",
        default="union",
        choices=["union", "global"],
        help="union of each probe's top N (paper, default) or global top N (reference)",
    )
    g.add_argument("--crush-depth", type=int, default=100, help="N (default: 100)")
    g.add_argument(
        "--crush-probe-text",
        default="question",
        choices=["question", "alone"],
        help="embed a probe in the question's context, 'x t.c' (paper, default), or alone",
    )
    g.add_argument("--crush-no-entropy", action="store_true", help="ablation: s = P(d|k)")
    g.add_argument("--crush-no-connectivity", action="store_true", help="ablation: lambda = 0")
    g.add_argument(
        "--crush-table-budget",
        type=int,
        metavar="B",
        help="table level: rank tables from one selection of B columns (first k tables) "
        "instead of the tables of a k-column selection per k",
    )


def _probe_source(bench: Benchmark, choice: str) -> str:
    if choice != "auto":
        return choice
    if bench.name.startswith("bird"):
        return "crush"
    if bench.name.startswith("spider"):
        return "jar"
    raise ValueError(f"no recorded probes for benchmark '{bench.name}'")


def _rewriter(bench: Benchmark, source: str, data_dir: Path | None) -> QueryRewriter:
    if source == "crush":
        if not bench.name.startswith("bird"):
            raise ValueError("CRUSH's recorded hallucinations cover BIRD questions only")
        return CrushRewriter(ReplayLLM.crush(data_dir), template="crush_bird")
    if bench.name.startswith("bird"):
        return DecompositionRewriter(ReplayLLM.jar("bird", data_dir))
    return DecompositionRewriter(ReplayLLM.jar("spider", data_dir))


def _label(source: str, args: argparse.Namespace) -> str:
    parts = [f"{source} probes"]
    if args.crush_objective != "paper":
        parts.append(args.crush_objective)
    if args.crush_candidates != "union":
        parts.append(f"{args.crush_candidates} top {args.crush_depth}")
    elif args.crush_depth != 100:
        parts.append(f"N={args.crush_depth}")
    if args.crush_probe_text != "question":
        parts.append("probe alone")
    if args.crush_no_entropy:
        parts.append("no entropy")
    if args.crush_no_connectivity:
        parts.append("no connectivity")
    if args.crush_table_budget and args.level == "table":
        parts.append(f"tables of B={args.crush_table_budget}")
    return f"crush ({', '.join(parts)})"


def crush_eval(index: TableIndex, bench: Benchmark, args: argparse.Namespace) -> EvalResult:
    """Runs CRUSH as ``tabret eval`` asks: column level scores prefixes of one run (the
    selection is prefix-consistent); table level runs once per budget unless
    ``--crush-table-budget`` is given."""
    source = _probe_source(bench, args.crush_probes)
    data_dir = Path(args.data_dir) if args.data_dir else None
    retriever = CrushRetriever(
        index,
        _rewriter(bench, source, data_dir),
        probe=args.crush_probe_text,
        candidates=args.crush_candidates,
        candidate_depth=args.crush_depth,
        objective="round_robin" if args.crush_objective == "round-robin" else "paper",
        entropy=not args.crush_no_entropy,
        connectivity=not args.crush_no_connectivity,
    )
    options = {
        "method": _label(source, args),
        "embedder": index.embedder_name,
        "level": args.level,
        "progress": not args.quiet,
    }
    if args.level == "column":
        columns: RetrieveFn = lambda qs, k: retriever.retrieve(qs, k, k_columns=k)  # noqa: E731
        return evaluate(columns, bench, args.k, **options)
    if args.crush_table_budget:
        budget = args.crush_table_budget
        deep: RetrieveFn = lambda qs, k: retriever.retrieve(qs, k, k_columns=budget)  # noqa: E731
        return evaluate(deep, bench, args.k, **options)
    return evaluate_per_budget(retriever, bench, args.k, **options)
