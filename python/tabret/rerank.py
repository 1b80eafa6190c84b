"""Re-ranking with a pair scorer: a cross-encoder reads (question, table text) and gives a logit.

- :class:`CrossEncoderScorer` loads a sentence-transformers cross-encoder (one ``tabret train
  --cross-encoder`` wrote, or any local one) offline; called with (question, text) pairs it
  returns their logits. Any callable ``pairs -> logits`` is a pair scorer too.
- :class:`RerankRetriever` (the ``rerank`` pipeline stage) asks the stage before it for
  ``candidates`` tables and returns the ``k`` with the highest logits: ``... > rerank``.
- :func:`window_scorer` makes a pair scorer ATR's window scorer
  (:class:`tabret.AdaptiveRetriever`): each table's logit, and the threshold logit 0, where a
  cross-encoder trained with binary cross-entropy gives probability 0.5. The paper's model reads
  the whole window at once with a learned threshold token (listwise); this is its pointwise
  variant, which a MiniLM-sized model's 512 tokens can hold.

The ``rerank`` stage shows a scorer the table text it was trained on (the model's training
manifest), else the index's; ATR's windows and Reverse Engineering's candidates carry the
index's table text, whatever the scorer was trained on. A scorer that raises reaches the caller
unchanged; one that returns the wrong number of scores, or a score that is not a finite number,
raises :class:`tabret.ScoringError` naming it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from tabret import _core
from tabret.adaptive import CallableScorer
from tabret.index import BaseRetriever, TableFormat

__all__ = [
    "CrossEncoderScorer",
    "PairScorer",
    "RerankRetriever",
    "reverse_reranker",
    "scores",
    "window_scorer",
]

#: Scores (question, table text) pairs: one number per pair, higher is more relevant.
PairScorer = Callable[[list[tuple[str, str]]], Any]


class CrossEncoderScorer:
    """A sentence-transformers cross-encoder as a pair scorer (raw logits), loaded offline
    from a local directory. A directory ``tabret train`` wrote must hold a cross-encoder (its
    manifest says so): a trained embedder is refused with :class:`ValueError`. Needs
    ``pip install 'tabret[models]'``."""

    def __init__(
        self, model: str | os.PathLike[str], *, batch_size: int = 64, device: str = "cpu"
    ) -> None:
        from tabret.training import read_manifest

        path = Path(model)
        if not path.is_dir():
            raise _core.FileError(f"{path}: not a model directory (a cross-encoder is a folder)")
        manifest = read_manifest(path)
        if manifest is not None and manifest.get("kind") != "cross-encoder":
            raise ValueError(
                f"{path}: tabret trained a {manifest.get('kind')} there, not a cross-encoder "
                "(tabret train --cross-encoder writes one)"
            )
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            import torch
            from sentence_transformers import CrossEncoder
        except ImportError as err:
            raise ImportError(
                "CrossEncoderScorer needs sentence-transformers: "
                "pip install torch==2.13.0 'tabret[models]'"
            ) from err
        self.name = str(path.resolve())
        #: The table text it was trained on (None: not trained by tabret; the index's is used).
        self.format: TableFormat | None = (
            None if manifest is None else cast(TableFormat, manifest["options"]["format"])
        )
        self._model = CrossEncoder(str(path), device=device)
        self._identity = torch.nn.Identity()
        self._batch_size = batch_size

    def __call__(self, pairs: list[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        logits = self._model.predict(
            pairs,
            batch_size=self._batch_size,
            activation_fn=self._identity,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return [float(x) for x in np.asarray(logits, dtype=np.float64).reshape(-1)]

    def __repr__(self) -> str:
        return f"CrossEncoderScorer({self.name!r})"


def scorer_name(scorer: PairScorer) -> str:
    return str(getattr(scorer, "name", getattr(scorer, "__qualname__", type(scorer).__name__)))


def scores(scorer: PairScorer, pairs: list[tuple[str, str]]) -> list[float]:
    """``scorer(pairs)``, checked: one finite number per pair, else :class:`tabret.ScoringError`."""
    got = scorer(pairs)
    name = scorer_name(scorer)
    try:
        values = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        raise _core.ScoringError(
            f"reranker {name} returned {type(got).__name__}, not a sequence of numbers"
        ) from None
    if values.shape != (len(pairs),):
        raise _core.ScoringError(
            f"reranker {name} returned {values.size} scores (shape {values.shape}) for "
            f"{len(pairs)} pairs"
        )
    if not np.isfinite(values).all():
        raise _core.ScoringError(f"reranker {name} returned a score that is not finite")
    return [float(v) for v in values]


def _format(scorer: PairScorer, index_format: str) -> TableFormat:
    trained = getattr(scorer, "format", None)
    return cast(TableFormat, trained if trained is not None else index_format)


class RerankRetriever(BaseRetriever):
    """The stage before it (``first``) asked for ``max(k, candidates)`` tables, re-ranked by
    ``scorer``'s logit for (question, table text); the best ``k`` are returned with their logits
    as scores. Columns are the stage before's. Trace: a ``rerank`` entry per returned table,
    then the stage before's entries for it."""

    def __init__(self, first: BaseRetriever, scorer: PairScorer, *, candidates: int = 20) -> None:
        if not callable(scorer):
            raise TypeError(f"reranker must be callable, got {type(scorer).__name__}")
        if candidates < 1:
            raise ValueError(f"candidates must be at least 1, not {candidates}")
        self.first, self.index, self.scorer = first, first.index, scorer
        self.ranks_columns = first.ranks_columns
        self.candidates = candidates
        self._format = _format(scorer, self.index.core.format)

    def _text(self, table: int) -> str:
        if self._format == self.index.core.format:
            return self.index.table_text(table)  # the text the index embedded
        return self.index.catalog.serialize_table(table, self._format)

    def _raw(self, batch: list[str], k: int, k_columns: int) -> list[_core.Retrieval]:
        if k < 1:
            raise ValueError("k must be positive")
        before = self.first._raw(batch, max(k, self.candidates), k_columns)
        pairs = [
            (q, self._text(t.table)) for q, r in zip(batch, before, strict=True) for t in r.tables
        ]
        logits = scores(self.scorer, pairs)
        out, start = [], 0
        for question, r in zip(batch, before, strict=True):
            mine = logits[start : start + len(r.tables)]
            start += len(r.tables)
            order = sorted(range(len(mine)), key=lambda j: -mine[j])[:k]
            tables = [_core.ScoredTable(r.tables[j].table, mine[j]) for j in order]
            kept = {t.table for t in tables}
            trace = [_core.TraceEntry(t.table, "rerank", question, t.score) for t in tables]
            trace += [e for e in r.trace if e.table in kept]
            out.append(_core.Retrieval(tables, r.columns, None, trace))
        return out


def window_scorer(scorer: PairScorer, threshold: float = 0.0) -> CallableScorer:
    """``scorer`` as ATR's window scorer: every window of a step scored in one call, each table
    its logit, the threshold ``threshold`` (0: probability 0.5 for a binary cross-entropy
    model)."""

    def windows(questions: list[str], texts: list[list[str]]) -> Sequence[tuple[Any, float]]:
        pairs = [(q, t) for q, w in zip(questions, texts, strict=True) for t in w]
        logits = scores(scorer, pairs)
        out, start = [], 0
        for w in texts:
            out.append((logits[start : start + len(w)], threshold))
            start += len(w)
        return out

    return CallableScorer(
        windows, batched=True, name=f"{scorer_name(scorer)} (threshold {threshold:g})"
    )


def reverse_reranker(scorer: PairScorer) -> Callable[[list[tuple[str, str, str]]], list[float]]:
    """``scorer`` as Reverse Engineering's re-ranker (:class:`tabret.ReverseRetriever`): each
    (question, schema text, generated question) triple scored as the pair (question, schema
    text). The paper's re-ranker reads ``q [SEP] schema [SEP] q_o``; a scorer trained on
    (question, table text) pairs, as ``tabret train --cross-encoder``'s are, reads what it was
    trained on, so the generated question is left out (a variant, named so in the docs)."""

    def rerank(triples: list[tuple[str, str, str]]) -> list[float]:
        return scores(scorer, [(q, schema) for q, schema, _ in triples])

    return rerank
