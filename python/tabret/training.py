"""Fine-tuning the embedder, or training a cross-encoder, on questions with gold tables
(``tabret train``).

From a ``--questions`` file (each question with its gold tables, :func:`tabret.benchmarks.
questions_benchmark`) over a catalog, :func:`train_embedder` fine-tunes a sentence-transformers
bi-encoder so that a question lands near the texts of the tables its SQL needs: the text the
index embeds (``format``, default ``related``), with sentence-transformers' own trainer and
MultipleNegativesRankingLoss (in-batch negatives, no duplicate text in a batch) plus, per
(question, gold table) pair, one hard negative: a table of the same database that is not gold
for half the pairs, one of the untrained model's top ``mine_k`` tables that is not gold for the
other half. Negatives are drawn only
from the databases the questions are asked on, so a table of a database with no training
question is never seen in training.

The result is a model directory that ``TableIndex.build(catalog, embedder=PATH)`` and
``--embedder PATH`` load offline, holding :data:`MANIFEST` (what it was trained on: the
databases, a digest of each question, the options, how training ended). Evaluating a trained
model on questions of a database it was trained on is refused (:func:`check_unseen`) unless
the caller says the split is within-database, and then each evaluated question must not be a
training question.

:func:`train_cross_encoder` trains a re-ranker on the same rows instead: a cross-encoder (one
logit) that reads a (question, table text) pair, with sentence-transformers'
``CrossEncoderTrainer`` and binary cross-entropy (label 1 for the gold pair, 0 for its hard
negative); :class:`tabret.rerank.CrossEncoderScorer` loads it. Its manifest says
``"kind": "cross-encoder"`` (the embedder's ``"bi-encoder"``).

Needs ``pip install 'tabret[train]'`` (sentence-transformers with its trainer: datasets,
accelerate).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tempfile
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from tabret import _core
from tabret.benchmarks import Benchmark
from tabret.embedders import DEFAULT_MODEL, _model_path
from tabret.index import DEFAULT_TABLE_FORMAT, TableFormat

__all__ = [
    "MANIFEST",
    "TrainedModel",
    "TrainingOptions",
    "check_unseen",
    "read_manifest",
    "train_cross_encoder",
    "train_embedder",
]

#: The file in a model directory that says tabret trained it, and on what.
MANIFEST = "tabret-training.json"
_VERSION = 1


@dataclass(frozen=True)
class TrainingOptions:
    """How :func:`train_embedder` trains. ``time_budget``: seconds of training after which it
    stops at the next step and saves what it has (``None``: no limit); ``max_steps``: at most
    this many optimiser steps (``None``: ``epochs`` full passes)."""

    base_model: str = DEFAULT_MODEL
    format: TableFormat = DEFAULT_TABLE_FORMAT
    epochs: int = 1
    batch_size: int = 32
    learning_rate: float = 2e-5
    warmup: float = 0.1  # the share of the steps the learning rate warms up over
    mine_k: int = 10
    max_seq_length: int = 128
    seed: int = 0
    time_budget: float | None = None
    max_steps: int | None = None

    def check(self) -> None:
        for name in ("epochs", "batch_size", "mine_k", "max_seq_length"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.batch_size < 2:
            raise ValueError("batch_size must be at least 2 (in-batch negatives)")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be positive, not {self.learning_rate}")
        if self.time_budget is not None and not self.time_budget > 0:
            raise ValueError(f"time_budget must be positive seconds, not {self.time_budget}")
        if self.max_steps is not None and self.max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, not {self.max_steps}")


@dataclass(frozen=True)
class TrainedModel:
    """What :func:`train_embedder` wrote: the model directory and how training went."""

    path: Path
    pairs: int  # (question, gold table) training examples
    steps: int
    seconds: float
    stopped: str  # "completed", "time budget" or "max steps"


def question_digest(text: str) -> str:
    """A question's identity for the within-database check: its normalised text, hashed (the
    manifest holds no question text)."""
    norm = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return hashlib.sha256(norm.encode()).hexdigest()[:16]


def _databases(bench: Benchmark) -> list[str]:
    return sorted({q.db for q in bench.questions})


def _pool(bench: Benchmark) -> list[int]:
    """The tables negatives come from: every table of a database a question is asked on."""
    cat = bench.catalog
    dbs = {cat.find_database(db) for db in _databases(bench)}
    return [t for t in range(cat.num_tables) if cat.table(t).database in dbs]


def _texts(bench: Benchmark, tables: Sequence[int], format: TableFormat) -> dict[int, str]:
    cat = bench.catalog
    return {t: cat.serialize_table(t, format) for t in tables}


def training_rows(
    bench: Benchmark,
    texts: dict[int, str],
    ranked: Callable[[int], Sequence[int]],
    seed: int,
) -> list[dict[str, str]]:
    """One row per (question, gold table): ``anchor`` (the question), ``positive`` (the table's
    text) and ``negative``, a hard negative: for every other pair a non-gold table of the same
    database, for the rest (and where the database has no other table) a non-gold table among
    ``ranked(i)``, the untrained model's best tables for question ``i``. One negative a pair,
    not two: on two cores each text a step costs about 70 ms (MiniLM, forward and backward)."""
    rng = random.Random(seed)
    cat = bench.catalog
    by_db: dict[int, list[int]] = {}
    for t in texts:
        by_db.setdefault(cat.table(t).database, []).append(t)
    rows: list[dict[str, str]] = []
    for i, q in enumerate(bench.questions):
        gold = set(q.gold_tables)
        mined = [t for t in ranked(i) if t not in gold]
        db = cat.find_database(q.db)
        same = [t for t in by_db.get(-1 if db is None else db, []) if t not in gold]
        for t in q.gold_tables:
            pool = same if same and len(rows) % 2 == 0 else mined
            if pool:
                rows.append(
                    {
                        "anchor": q.question,
                        "positive": texts[t],
                        "negative": texts[rng.choice(pool)],
                    }
                )
    return rows


def _mined(model: Any, bench: Benchmark, pool: list[int], texts: dict[int, str], k: int) -> Any:
    """The untrained model's top ``k`` pool tables per question (pool positions to table ids)."""
    encode = dict(convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)
    tables = np.asarray(model.encode([texts[t] for t in pool], **encode))
    questions = np.asarray(model.encode([q.question for q in bench.questions], **encode))
    scores = questions @ tables.T
    top = np.argsort(-scores, axis=1, kind="stable")[:, : k + 8]  # room for the gold tables
    ids = np.asarray(pool)

    def ranked(i: int) -> list[int]:
        gold = set(bench.questions[i].gold_tables)
        return [int(t) for t in ids[top[i]] if int(t) not in gold][:k]

    return ranked


def _check_out(out: Path, replace: bool) -> None:
    """``out`` must be missing, or (with ``replace``) a model directory tabret trained."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise _core.FileError(f"{out}: exists and is not a directory; not touched")
    if out.exists():
        if not (out / MANIFEST).is_file():
            raise _core.FileError(
                f"{out}: exists and is not a model tabret trained (no {MANIFEST}); not touched"
            )
        if not replace:
            raise _core.FileError(f"{out}: a trained model is there; pass replace=True")


def _install(tmp: Path, out: Path) -> None:
    """Moves the finished ``tmp`` to ``out``; an old model there is removed only after."""
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.replace(out, old / out.name)
    os.replace(tmp, out)
    if old is not None:
        shutil.rmtree(old)


Kind = Literal["bi-encoder", "cross-encoder"]


def train_embedder(
    bench: Benchmark,
    out: str | os.PathLike[str],
    options: TrainingOptions = TrainingOptions(),
    *,
    replace: bool = False,
    progress: bool = True,
) -> TrainedModel:
    """Fine-tunes ``options.base_model`` on ``bench``'s questions and gold tables and saves it
    in ``out`` with :data:`MANIFEST`. ``out`` must be missing, or a model tabret trained and
    ``replace=True``; anything else raises :class:`tabret.FileError` before training. The
    model is written to a temporary directory beside ``out`` and moved there when complete: an
    interruption (Ctrl-C) leaves ``out`` as it was."""
    return _train("bi-encoder", bench, Path(out), options, replace, progress)


def train_cross_encoder(
    bench: Benchmark,
    out: str | os.PathLike[str],
    options: TrainingOptions = TrainingOptions(),
    *,
    replace: bool = False,
    progress: bool = True,
) -> TrainedModel:
    """Trains a cross-encoder from ``options.base_model`` (a fresh one-logit head on its
    encoder) that scores a (question, table text) pair: binary cross-entropy, label 1 for each
    (question, gold table) pair and 0 for its hard negative (the same negatives as
    :func:`train_embedder`). What it writes, where, and when it refuses: as
    :func:`train_embedder`; :class:`tabret.rerank.CrossEncoderScorer` loads it."""
    return _train("cross-encoder", bench, Path(out), options, replace, progress)


def _train(
    kind: Kind,
    bench: Benchmark,
    out: Path,
    options: TrainingOptions,
    replace: bool,
    progress: bool,
) -> TrainedModel:
    options.check()
    _check_out(out, replace)
    _check_trainer()
    out.parent.mkdir(parents=True, exist_ok=True)
    from sentence_transformers import SentenceTransformer
    from transformers import set_seed

    set_seed(options.seed)
    encoder = SentenceTransformer(_model_path(options.base_model), device="cpu")
    pool = _pool(bench)
    texts = _texts(bench, pool, options.format)
    rows = training_rows(
        bench, texts, _mined(encoder, bench, pool, texts, options.mine_k), options.seed
    )
    if not rows:
        raise ValueError(f"{bench.name}: no training pairs (every table of its databases is gold)")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        model_dir = tmp / "model"
        if kind == "bi-encoder":
            stopped, steps, seconds = _fit_embedder(encoder, rows, options, tmp, progress)
        else:
            del encoder
            stopped, steps, seconds = _fit_cross_encoder(rows, options, tmp, progress)
        manifest = {
            "tabret_training": _VERSION,
            "kind": kind,
            "options": asdict(options),
            "catalog": repr(bench.catalog),
            "databases": _databases(bench),
            "questions": sorted({question_digest(q.question) for q in bench.questions}),
            "pairs": len(rows),
            "steps": steps,
            "seconds": round(seconds, 1),
            "stopped": stopped,
        }
        (model_dir / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        _install(model_dir, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return TrainedModel(out, len(rows), steps, seconds, stopped)


def _fit_embedder(
    model: Any, rows: list[dict[str, str]], options: TrainingOptions, work: Path, progress: bool
) -> tuple[str, int, float]:
    """MultipleNegativesRankingLoss over the rows (no duplicate text in a batch); saves the
    model in ``work / "model"``."""
    from sentence_transformers import (
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.base.sampler import BatchSamplers
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    served_length = model.max_seq_length
    model.max_seq_length = options.max_seq_length
    args = SentenceTransformerTrainingArguments(
        **_arguments(options, work, progress), batch_sampler=BatchSamplers.NO_DUPLICATES
    )
    result = _run(
        SentenceTransformerTrainer, model, args, rows, MultipleNegativesRankingLoss(model), options
    )
    model.max_seq_length = served_length
    model.save(str(work / "model"))
    return result


def _fit_cross_encoder(
    rows: list[dict[str, str]], options: TrainingOptions, work: Path, progress: bool
) -> tuple[str, int, float]:
    """BinaryCrossEntropyLoss over (question, text, label) pairs, two a row; saves the model in
    ``work / "model"``."""
    from sentence_transformers.cross_encoder import (
        CrossEncoder,
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    model = CrossEncoder(
        _model_path(options.base_model),
        num_labels=1,
        max_length=options.max_seq_length,
        device="cpu",
    )
    pairs = [
        {"question": r["anchor"], "text": r[side], "label": float(side == "positive")}
        for r in rows
        for side in ("positive", "negative")
    ]
    args = CrossEncoderTrainingArguments(**_arguments(options, work, progress))
    result = _run(CrossEncoderTrainer, model, args, pairs, BinaryCrossEntropyLoss(model), options)
    model.save(str(work / "model"))
    return result


def _arguments(options: TrainingOptions, work: Path, progress: bool) -> dict[str, Any]:
    """The trainer arguments both kinds share."""
    return dict(
        output_dir=str(work / "checkpoints"),
        num_train_epochs=options.epochs,
        max_steps=options.max_steps if options.max_steps is not None else -1,
        per_device_train_batch_size=options.batch_size,
        learning_rate=options.learning_rate,
        warmup_steps=options.warmup,
        seed=options.seed,
        data_seed=options.seed,
        save_strategy="no",
        logging_steps=50,
        report_to="none",
        disable_tqdm=not progress,
        use_cpu=True,
    )


def _run(
    trainer_cls: Any,
    model: Any,
    args: Any,
    rows: list[dict[str, Any]],
    loss: Any,
    options: TrainingOptions,
) -> tuple[str, int, float]:
    """``trainer_cls`` over ``rows`` with a time-budget stop; (how it stopped, steps, seconds)."""
    from datasets import Dataset  # type: ignore[import-untyped]
    from transformers import TrainerCallback

    started = time.monotonic()
    budget = options.time_budget

    class Budget(TrainerCallback):
        """Stops training at the first step end past the time budget."""

        hit = False

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if budget is not None and time.monotonic() - started > budget:
                self.hit = True
                control.should_training_stop = True
            return control

    stop = Budget()
    trainer = trainer_cls(
        model=model,
        args=args,
        train_dataset=Dataset.from_list(rows),
        loss=loss,
        callbacks=[stop],
    )
    trainer.train()
    steps = int(trainer.state.global_step)
    if stop.hit:
        stopped = "time budget"
    elif options.max_steps is not None and steps >= options.max_steps:
        stopped = "max steps"
    else:
        stopped = "completed"
    return stopped, steps, time.monotonic() - started


def _check_trainer() -> None:
    """sentence-transformers' trainer (version 6 and later: the ``train`` extra), or a clear
    ImportError before any work."""
    try:
        import datasets  # noqa: F401
        from sentence_transformers.base.sampler import BatchSamplers  # noqa: F401
        from sentence_transformers.cross_encoder import CrossEncoderTrainer  # noqa: F401
    except ImportError as err:
        raise ImportError(
            "tabret train needs sentence-transformers' trainer: "
            "pip install torch==2.13.0 'tabret[train]'"
        ) from err


def read_manifest(model: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The :data:`MANIFEST` of a model directory tabret trained; ``None`` for any other model
    (a name, or a directory without one). :class:`tabret.ParseError` for a manifest that is not
    JSON."""
    path = Path(model) / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as err:
        raise _core.ParseError(f"{path}: not a training manifest ({err})") from None
    if not isinstance(manifest, dict) or manifest.get("tabret_training") != _VERSION:
        raise _core.ParseError(f"{path}: not a version-{_VERSION} training manifest")
    return manifest


def check_unseen(model: str | os.PathLike[str], bench: Benchmark, *, within_database: bool) -> None:
    """Refuses (:class:`ValueError`) to evaluate a model tabret trained on questions of a
    database it was trained on; with ``within_database``, the databases may be shared but no
    evaluated question may be a training question. Models tabret did not train pass."""
    manifest = read_manifest(model)
    if manifest is None:
        return
    if within_database:
        seen = set(manifest["questions"])
        overlap = [q.id for q in bench.questions if question_digest(q.question) in seen]
        if overlap:
            raise ValueError(
                f"{len(overlap)} of the {len(bench.questions)} questions of '{bench.name}' were "
                f"training questions of {model} (first: {overlap[0]})"
            )
        return
    trained = set(manifest["databases"])
    shared = sorted({q.db for q in bench.questions} & trained)
    if shared:
        raise ValueError(
            f"{model} was trained on questions of {len(shared)} of the databases '{bench.name}' "
            f"asks about ({', '.join(shared[:5])}{', …' if len(shared) > 5 else ''}): evaluate "
            "on databases it has not seen, or say the split is within-database"
        )
