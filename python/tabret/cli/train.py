"""``tabret train``: fine-tune the embedder (or train a cross-encoder) on questions with gold
tables (tabret.training)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, fields
from typing import get_args

from tabret.cli._common import LOADERS, positive_int
from tabret.index import TableFormat
from tabret.training import TrainingOptions

HELP = "fine-tune the embedding model on your questions with gold tables"
DESCRIPTION = (
    "Fine-tunes a sentence-transformers model (default: all-MiniLM-L6-v2) so that each question "
    "lands near the text of the tables its SQL needs (in-batch negatives plus hard negatives: "
    "a non-gold table of the same database and one of the untrained model's top tables), and "
    "writes the model to OUT_DIR: use it with `tabret index --embedder OUT_DIR`. "
    "`tabret eval --embedder OUT_DIR` refuses questions of the databases it was trained on "
    "unless --within-database is given. With --cross-encoder it trains a cross-encoder that "
    "scores (question, table) pairs instead: use it with `--reranker OUT_DIR` (the rerank "
    "stage, and ATR's window scorer)."
)

_DEFAULTS = TrainingOptions()


@dataclass(frozen=True)
class TrainOptions:
    out: str
    questions: str
    catalog: str
    catalog_format: str
    training: TrainingOptions
    cross_encoder: bool
    replace: bool
    quiet: bool


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", metavar="OUT_DIR", help="where the trained model is written")
    p.add_argument(
        "--questions",
        required=True,
        metavar="FILE.jsonl",
        help='questions with their gold tables, one JSON object a line: {"question": …, '
        '"gold_tables": ["db.table", …]} (the format of `tabret eval --questions`)',
    )
    p.add_argument("--catalog", required=True, metavar="SOURCE", help="the catalog they name")
    p.add_argument(
        "--catalog-format",
        default="json",
        choices=sorted(LOADERS),
        help="what --catalog is (default: json, tabret's catalog JSON)",
    )
    p.add_argument(
        "--base-model",
        default=_DEFAULTS.base_model,
        help="the sentence-transformers model to start from (default: %(default)s)",
    )
    p.add_argument(
        "--format",
        default=_DEFAULTS.format,
        choices=get_args(TableFormat),
        help="the table text trained on; index with the same (default: %(default)s)",
    )
    p.add_argument("--epochs", type=positive_int, default=_DEFAULTS.epochs, help="(default: 1)")
    p.add_argument(
        "--batch-size", type=positive_int, default=_DEFAULTS.batch_size, help="(default: 32)"
    )
    p.add_argument(
        "--learning-rate", type=float, default=_DEFAULTS.learning_rate, help="(default: 2e-5)"
    )
    p.add_argument(
        "--time-budget",
        type=float,
        metavar="SECONDS",
        help="stop training after this long and save the model so far (default: no limit)",
    )
    p.add_argument("--max-steps", type=positive_int, help="stop after this many steps")
    p.add_argument("--seed", type=int, default=_DEFAULTS.seed, help="(default: 0)")
    p.add_argument(
        "--cross-encoder",
        action="store_true",
        help="train a cross-encoder (a reranker) instead of the embedder",
    )
    p.add_argument(
        "--replace", action="store_true", help="replace a model tabret trained in OUT_DIR"
    )
    p.add_argument("--quiet", action="store_true", help="no progress")


def command(args: argparse.Namespace) -> int:
    given = {
        f.name: getattr(args, f.name) for f in fields(TrainingOptions) if hasattr(args, f.name)
    }
    return run(
        TrainOptions(
            out=args.out,
            questions=args.questions,
            catalog=args.catalog,
            catalog_format=args.catalog_format,
            training=TrainingOptions(**given),
            cross_encoder=args.cross_encoder,
            replace=args.replace,
            quiet=args.quiet,
        )
    )


def run(o: TrainOptions) -> int:
    from tabret.benchmarks import parse_questions_file, questions_benchmark
    from tabret.training import train_cross_encoder, train_embedder

    o.training.check()
    parse_questions_file(o.questions)  # a bad file fails before the catalog loads
    bench = questions_benchmark(o.questions, LOADERS[o.catalog_format](o.catalog))
    if not o.quiet:
        dbs = len({q.db for q in bench.questions})
        print(
            f"training {'a cross-encoder from ' if o.cross_encoder else ''}"
            f"{o.training.base_model} on {len(bench.questions)} questions over {dbs} "
            "databases",
            file=sys.stderr,
            flush=True,
        )
    try:
        train = train_cross_encoder if o.cross_encoder else train_embedder
        trained = train(bench, o.out, o.training, replace=o.replace, progress=not o.quiet)
    except KeyboardInterrupt:
        print(f"interrupted: {o.out} not written", file=sys.stderr)
        return 130
    print(
        f"{trained.path}: {trained.pairs} pairs, {trained.steps} steps in "
        f"{trained.seconds:.0f} s ({trained.stopped}); use "
        f"{'--reranker' if o.cross_encoder else '--embedder'} {trained.path}"
    )
    return 0
