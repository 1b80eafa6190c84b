"""``tabret tune``: the pipeline and its knobs chosen by cross-validation on the user's own
questions, saved in the index directory so that ``tabret query`` and ``tabret serve`` run it
(:mod:`tabret.tuning`)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass

from tabret.cli._common import positive_int

HELP = "choose the pipeline for an index from your own questions and save the choice in it"
DESCRIPTION = (
    "Scores every pipeline the index can run (single-hop or hybrid, fused with reverse and "
    "values where the index holds them, alone or followed by greedy-join with 20, 50 or 100 "
    "candidates) on your questions with gold tables, and saves the best in INDEX_DIR: "
    "`tabret query` and `tabret serve` then run it when no --method or --pipeline is given. "
    "The default is kept unless choosing, estimated by cross-validation, beats it. The "
    "pipelines run offline (no LLM)."
)


@dataclass(frozen=True)
class TuneOptions:
    index: str
    questions: str
    k: int
    folds: int
    seed: int
    dry_run: bool
    json: bool
    embedder: str | None
    quiet: bool


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("index", metavar="INDEX_DIR", help="a directory written by `tabret index`")
    p.add_argument(
        "--questions",
        required=True,
        metavar="FILE.jsonl",
        help='your questions with their gold tables, one JSON object a line: {"question": …, '
        '"gold_tables": ["db.table", …]} (the format of `tabret eval --questions`; at least 10)',
    )
    p.add_argument(
        "--k",
        type=positive_int,
        default=5,
        help="the tables per question the choice is made for (default: 5, `tabret query`'s)",
    )
    p.add_argument(
        "--folds", type=positive_int, default=5, help="cross-validation folds (default: 5)"
    )
    p.add_argument(
        "--seed", type=int, default=0, help="how questions are shuffled into folds (default: 0)"
    )
    p.add_argument(
        "--dry-run", action="store_true", help="report what would be chosen; save nothing"
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--embedder",
        help="the embedder the index was built with (default: the name saved in the index)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress")


def command(args: argparse.Namespace) -> int:
    return run(
        TuneOptions(
            index=args.index,
            questions=args.questions,
            k=args.k,
            folds=args.folds,
            seed=args.seed,
            dry_run=args.dry_run,
            json=args.json,
            embedder=args.embedder,
            quiet=args.quiet,
        )
    )


def run(o: TuneOptions) -> int:
    from tabret.benchmarks import parse_questions_file, questions_benchmark
    from tabret.cli.query import load_directory
    from tabret.join import JoinGraph
    from tabret.methods import Inputs
    from tabret.reverse import GeneratedQuestions
    from tabret.tuning import MIN_QUESTIONS, save, tune

    if o.folds < 2:
        raise ValueError(f"--folds must be at least 2, not {o.folds}")
    given = len(parse_questions_file(o.questions))  # a bad file fails before the index loads
    if given < MIN_QUESTIONS:
        raise ValueError(
            f"{o.questions}: {given} questions; tune needs at least {MIN_QUESTIONS} with gold "
            "tables"
        )
    index, saved = load_directory(o.index, o.embedder, o.quiet)
    bench = questions_benchmark(o.questions, index.catalog)
    inputs = Inputs(
        graph=JoinGraph(saved.graph, index) if saved.graph is not None else None,
        questions=GeneratedQuestions(saved.questions, index)
        if saved.questions is not None
        else None,
    )

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    report = tune(
        index,
        bench,
        inputs,
        k=o.k,
        folds=min(o.folds, len(bench.questions)),
        seed=o.seed,
        progress=None if o.quiet else progress,
    )
    if not o.dry_run:
        save(o.index, index, report)
    if o.json:
        print(json.dumps({**report.to_json(), "saved": not o.dry_run}, indent=2))
    else:
        print(report.format())
        print("(dry run: nothing saved)" if o.dry_run else f"saved in {o.index}")
    return 0
