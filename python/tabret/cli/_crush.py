"""``tabret eval --method crush``: the probe source and the CRUSH options."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tabret.cli._common import add_choice, add_number, add_switch
from tabret.methods import METHODS, CrushOptions, Inputs

if TYPE_CHECKING:
    from tabret.benchmarks import Benchmark
    from tabret.eval import EvalResult, RetrieveFn
    from tabret.index import TableIndex
    from tabret.rewriting import LLMLike, QueryRewriter

ProbeSource = Literal["auto", "crush", "jar"]


@dataclass(frozen=True)
class CrushEval:
    """The options of ``tabret eval --method crush``."""

    probes: ProbeSource
    options: CrushOptions
    table_budget: int | None


def add_arguments(p: argparse.ArgumentParser) -> None:
    default = CrushOptions()
    g = p.add_argument_group("crush", "options of --method crush")
    add_choice(
        g,
        "--crush-probes",
        ["auto", "crush", "jar"],
        "auto",
        "probe source: crush = CRUSH's recorded hallucinated schemas (BIRD only); jar = "
        "JAR's recorded decompositions (concept:attribute); auto: crush on BIRD, jar on Spider",
    )
    add_choice(
        g,
        "--crush-objective",
        ["paper", "round-robin"],
        _objective_flag(default.objective),
        "paper: coverage + connectivity, greedy (default); round-robin: reference greedy",
    )
    add_choice(
        g,
        "--crush-candidates",
        ["union", "global"],
        default.candidates,
        "union of each probe's top N (paper, default) or global top N (reference)",
    )
    add_number(g, "--crush-depth", int, default.candidate_depth, "N")
    add_choice(
        g,
        "--crush-probe-text",
        ["question", "alone"],
        default.probe,
        "embed a probe in the question's context, 'x t.c' (paper, default), or alone",
    )
    add_switch(g, "--crush-no-entropy", "ablation: s = P(d|k)")
    add_switch(g, "--crush-no-connectivity", "ablation: lambda = 0")
    g.add_argument(
        "--crush-table-budget",
        type=int,
        metavar="B",
        help="table level: rank tables from one selection of B columns (first k tables) "
        "instead of the tables of a k-column selection per k",
    )


def _objective_flag(objective: str) -> str:
    return objective.replace("_", "-")


def options(args: argparse.Namespace) -> CrushEval:
    return CrushEval(
        probes=args.crush_probes,
        options=CrushOptions(
            probe=args.crush_probe_text,
            candidates=args.crush_candidates,
            candidate_depth=args.crush_depth,
            objective="round_robin" if args.crush_objective == "round-robin" else "paper",
            entropy=not args.crush_no_entropy,
            connectivity=not args.crush_no_connectivity,
        ),
        table_budget=args.crush_table_budget,
    )


def _probe_source(bench: Benchmark, choice: ProbeSource, llm: LLMLike | None, offline: bool) -> str:
    if llm is not None:
        from tabret.llms import _name_of

        return _name_of(llm)
    if offline:
        return "question"
    if choice != "auto":
        return choice
    if bench.name.startswith("bird"):
        return "crush"
    if bench.name.startswith("spider"):
        return "jar"
    raise ValueError(f"no recorded probes for benchmark '{bench.name}'")


def _rewriter(
    bench: Benchmark, source: str, data_dir: Path | None, llm: LLMLike | None
) -> QueryRewriter:
    from tabret.join import NO_DECOMPOSITION
    from tabret.llms import ReplayLLM
    from tabret.rewriting import CrushRewriter, DecompositionRewriter

    if llm is not None:  # a live model hallucinates the schema
        bird = bench.name.startswith("bird")
        return CrushRewriter(llm, template="crush_bird" if bird else "crush_spider")
    if source == "question":  # offline: the question is the only probe
        return DecompositionRewriter(NO_DECOMPOSITION)
    if source == "crush":
        if not bench.name.startswith("bird"):
            raise ValueError("CRUSH's recorded hallucinations cover BIRD questions only")
        return CrushRewriter(ReplayLLM.crush(data_dir), template="crush_bird")
    if bench.name.startswith("bird"):
        return DecompositionRewriter(ReplayLLM.jar("bird", data_dir))
    return DecompositionRewriter(ReplayLLM.jar("spider", data_dir))


def _label(source: str, c: CrushEval, level: str) -> str:
    o, default = c.options, CrushOptions()
    parts = [f"{source} probes"]
    if o.objective != default.objective:
        parts.append(_objective_flag(o.objective))
    if o.candidates != default.candidates:
        parts.append(f"{o.candidates} top {o.candidate_depth}")
    elif o.candidate_depth != default.candidate_depth:
        parts.append(f"N={o.candidate_depth}")
    if o.probe != default.probe:
        parts.append("probe alone")
    if not o.entropy:
        parts.append("no entropy")
    if not o.connectivity:
        parts.append("no connectivity")
    if c.table_budget and level == "table":
        parts.append(f"tables of B={c.table_budget}")
    return f"crush ({', '.join(parts)})"


def crush_eval(
    index: TableIndex,
    bench: Benchmark,
    c: CrushEval,
    *,
    k: list[int],
    level: str,
    data_dir: Path | None,
    quiet: bool,
    llm: LLMLike | None = None,
    offline: bool = False,
) -> EvalResult:
    """Runs CRUSH as ``tabret eval`` asks: column level scores prefixes of one run (the
    selection is prefix-consistent); table level runs once per budget unless
    ``--crush-table-budget`` is given. The probes come from ``llm`` (a live model's
    hallucinated schema) when given, else from the question alone when ``offline``, else from
    the recordings ``--crush-probes`` names."""
    from tabret.crush import CrushRetriever, evaluate_per_budget
    from tabret.eval import evaluate

    source = _probe_source(bench, c.probes, llm, offline)
    rewriter = _rewriter(bench, source, data_dir, llm)
    retriever = METHODS["crush"].build(index, Inputs(rewriter=lambda _: rewriter), c.options)
    assert isinstance(retriever, CrushRetriever)
    options: dict[str, Any] = {
        "method": _label(source, c, level),
        "embedder": index.embedder_name,
        "level": level,
        "progress": not quiet,
    }
    if level == "column":
        columns: RetrieveFn = lambda qs, k: retriever.retrieve(qs, k, k_columns=k)  # noqa: E731
        return evaluate(columns, bench, k, **options)
    if c.table_budget:
        budget = c.table_budget
        deep: RetrieveFn = lambda qs, k: retriever.retrieve(qs, k, k_columns=budget)  # noqa: E731
        return evaluate(deep, bench, k, **options)
    return evaluate_per_budget(retriever, bench, k, **options)
