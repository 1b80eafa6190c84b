"""``tabret eval`` with join-aware methods: the join graph over JAR's recordings and the
options of greedy-join, jar-exact and --join-closure."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from tabret.cli._common import add_choice, add_number, add_switch
from tabret.methods import METHODS, ClosureOptions, GreedyJoinOptions, JarExactOptions

if TYPE_CHECKING:
    from tabret.benchmarks import Benchmark
    from tabret.index import TableIndex
    from tabret.join import JoinGraph
    from tabret.rewriting import LLMLike


class JoinSetup(NamedTuple):
    dataset: Literal["spider", "bird"] | None  # whose JAR recordings; None: a benchmark without
    graph: JoinGraph
    llm: LLMLike | None  # None: no decompositions (each question its own sub-query)


@dataclass(frozen=True)
class JoinEval:
    """The join-aware options of ``tabret eval``."""

    closure: list[bool]
    closure_options: ClosureOptions
    greedy: GreedyJoinOptions
    jar: JarExactOptions
    jar_weights_auto: bool
    value_stats: bool
    decompositions: bool = True
    graph: Literal["compatibility", "keys"] = "compatibility"

    def jar_options(self, dataset: Literal["spider", "bird"] | None) -> JarExactOptions:
        """jar-exact's options, with the benchmark's weights for --jar-weights auto (the
        default weights for a benchmark without JAR recordings)."""
        if self.jar_weights_auto and dataset is not None:
            return replace(self.jar, weights=dataset)
        return self.jar


def add_arguments(p: argparse.ArgumentParser) -> None:
    closure, greedy, jar = ClosureOptions(), GreedyJoinOptions(), JarExactOptions()
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
    add_number(j, "--closure-budget", int, closure.budget, "bridge tables per question")
    add_choice(
        j,
        "--closure-mode",
        ["append", "within_k"],
        closure.mode,
        "append: bridges after the k tables (up to k + budget returned); within_k: keep k",
    )
    add_number(
        j,
        "--join-candidates",
        int,
        greedy.candidates,
        "first-stage tables re-ranked by greedy-join / jar-exact",
    )
    add_choice(
        j,
        "--greedy-weights",
        ["paper", "reference"],
        greedy.weights,
        "greedy λ_coarse: paper 4 (default) or the reference code's 3",
    )
    add_choice(
        j,
        "--jar-weights",
        ["auto", "spider", "bird"],
        "auto",
        "JAR weights [w1..w5]: spider [2,8,1,10,1], bird [3,8,1,3,1]; auto: by benchmark",
    )
    add_choice(
        j,
        "--jar-connectivity",
        ["soft", "strict"],
        jar.connectivity,
        "jar-exact: soft (zero-weight edges may complete the join tree; default) or "
        "strict (JAR's hard connectivity over compatible tables, greedy fill where infeasible)",
    )
    add_choice(
        j,
        "--join-graph",
        ["compatibility", "keys"],
        "compatibility",
        "compatibility: foreign keys (ω = 1) plus ω inferred for column pairs of any two tables "
        "(default); keys: the foreign keys only, a sparse graph (with --keys inferred: the "
        "inferred key graph)",
    )
    add_switch(
        j,
        "--no-value-stats",
        "build the join graph without JAR's recorded uniqueness and sample values",
    )
    add_switch(
        j,
        "--no-decompositions",
        "greedy-join and jar-exact without JAR's recorded decompositions: each question is "
        "its own only sub-query (what they do without an LLM)",
    )


def options(args: argparse.Namespace) -> JoinEval:
    auto = args.jar_weights == "auto"
    jar = JarExactOptions(candidates=args.join_candidates, connectivity=args.jar_connectivity)
    return JoinEval(
        closure={"off": [False], "on": [True], "both": [False, True]}[args.join_closure],
        closure_options=ClosureOptions(budget=args.closure_budget, mode=args.closure_mode),
        greedy=GreedyJoinOptions(candidates=args.join_candidates, weights=args.greedy_weights),
        jar=jar if auto else replace(jar, weights=args.jar_weights),
        jar_weights_auto=auto,
        value_stats=not args.no_value_stats,
        decompositions=not args.no_decompositions,
        graph=args.join_graph,
    )


def needs_graph(methods: list[str]) -> bool:
    return any("join-graph" in METHODS[m].needs for m in methods)


def _jar_dataset(bench: str) -> Literal["spider", "bird"] | None:
    """Which JAR recordings (decompositions, value statistics) a benchmark's questions use."""
    if bench.startswith("spider2"):
        return None
    if bench.startswith("spider"):
        return "spider"
    if bench.startswith("bird"):
        return "bird"
    return None


def join_setup(
    methods: list[str],
    j: JoinEval,
    bench: Benchmark,
    index: TableIndex,
    data: Path | None,
    llm: LLMLike | None = None,
    progress: bool = True,
) -> JoinSetup | None:
    """The join graph and the decompositions, when a join-aware method runs: ``llm``'s when
    given (a live model writes them), else JAR's recorded ones (or none)."""
    if not needs_graph(methods):
        return None
    from tabret.join import JoinGraph, jar_column_stats, lenient_replay
    from tabret.llms import _name_of, jar_decompositions

    dataset = _jar_dataset(bench.name)
    stats = jar_column_stats(bench.catalog, dataset, data) if j.value_stats and dataset else None
    graph = JoinGraph.build(
        index, stats, progress=progress, infer_compatibility=j.graph == "compatibility"
    )
    if llm is not None:
        print(f"decompositions: {_name_of(llm)} writes them\n", file=sys.stderr, flush=True)
        return JoinSetup(dataset, graph, llm)
    if not j.decompositions:
        print("no decompositions: each question is its own only sub-query\n", file=sys.stderr)
        return JoinSetup(dataset, graph, None)
    if dataset is None:  # as `tabret query` without an LLM: said, not refused
        print(
            f"note: no recorded JAR decompositions for '{bench.name}': each question is its "
            "own only sub-query (--llm writes decompositions)\n",
            file=sys.stderr,
        )
        return JoinSetup(dataset, graph, None)
    source = jar_decompositions(dataset, data)
    missing = sum(1 for q in bench.questions if q.question not in source)
    print(
        f"JAR {dataset} decompositions: {len(bench.questions) - missing} questions recorded, "
        f"{missing} without a recording (their sub-query is the question itself)\n",
        file=sys.stderr,
        flush=True,
    )
    return JoinSetup(dataset, graph, lenient_replay(source))
