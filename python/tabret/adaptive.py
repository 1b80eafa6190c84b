"""ATR: an adaptive number of tables per question (sliding-window re-ranking with a threshold).

``AdaptiveRetriever(first_stage, scorer)`` asks any retriever for ``candidates`` (N = 50)
tables, re-ranks them bottom-up in windows of ``window`` (W = 20) keeping ``retain`` (R = 15),
and cuts the list where the scorer's threshold logit lands. The result holds the whole re-ranked
list in ``tables`` and the cut in ``cut``; ``Retrieval.selected`` is ``tables[:cut]``. The exact
algorithm and every resolved ambiguity: ``include/tabret/retrieval/select/adaptive_reranker.hpp``.

Scorers:
- ``SimilarityScorer`` (training-free): logit = cosine of question and table with the index's
  embedder; the threshold from a rule over the question's own top catalog cosines ("fixed" τ,
  "relative" s0 - δ, "zscore" mean + z·std, "gap" the largest drop). The rule's one number can
  be fitted on another benchmark's labels with ``fit_threshold``.
- any callable ``(question, texts) -> (logits, threshold)`` (e.g. a cross-encoder), or with
  ``CallableScorer(fn, batched=True)`` one ``(questions, windows) -> [(logits, threshold)]`` call
  per step for the whole batch. Wrong shapes raise TypeError, wrong lengths and NaN ScoringError
  (a ValueError); an exception raised by the scorer reaches the caller unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tabret import _core
from tabret.index import BaseRetriever

if TYPE_CHECKING:
    from tabret.benchmarks import Benchmark

__all__ = [
    "AdaptiveRetriever",
    "Calibration",
    "CallableScorer",
    "SimilarityScorer",
    "ThresholdRule",
    "cut_metrics",
    "fit_threshold",
]

ThresholdRule = Literal["fixed", "relative", "zscore", "gap"]

WindowFn = Callable[[str, list[str]], tuple[Any, float]]
BatchWindowFn = Callable[[list[str], list[list[str]]], Sequence[tuple[Any, float]]]


@dataclass(frozen=True)
class SimilarityScorer:
    """Training-free window scorer: logit = cos(question, table); threshold by ``rule``:
    "fixed" (τ = value), "relative" (s0 - value), "zscore" (mean + value·std of the top ``depth``
    cosines), "gap" (middle of the largest drop among the top ``depth``; value unused). The
    threshold depends on the question only, never on the window."""

    rule: ThresholdRule = "relative"
    value: float = 0.1
    depth: int = 50

    def describe(self) -> str:
        symbol = {"fixed": "τ", "relative": "δ", "zscore": "z"}.get(self.rule)
        return f"{self.rule} {symbol}={self.value:g}" if symbol else f"{self.rule}@{self.depth}"


class CallableScorer:
    """A Python window scorer. ``fn(question, texts) -> (logits, threshold)`` per window, or
    with ``batched=True`` ``fn(questions, windows) -> [(logits, threshold), ...]`` per step."""

    def __init__(
        self, fn: WindowFn | BatchWindowFn, *, batched: bool = False, name: str | None = None
    ) -> None:
        if not callable(fn):
            raise TypeError(f"window scorer must be callable, got {type(fn).__name__}")
        self._fn = fn
        self._batched = batched
        self.name: str = name or str(getattr(fn, "__qualname__", type(fn).__name__))

    def __call__(self, questions: list[str], windows: list[list[str]]) -> Sequence[Any]:
        if self._batched:
            return self._fn(questions, windows)  # type: ignore[arg-type]
        fn: Any = self._fn
        return [fn(q, w) for q, w in zip(questions, windows, strict=True)]


Scorer = SimilarityScorer | CallableScorer | WindowFn


class AdaptiveRetriever(BaseRetriever):
    """ATR over any first stage (a tabret retriever): ``retrieve(questions)`` returns the whole
    re-ranked candidate list per question with ``cut`` set; ``k`` is not a length here (it only
    has to be positive). One first-stage call and one scorer call per window step per batch."""

    def __init__(
        self,
        first_stage: BaseRetriever,
        scorer: Scorer | None = None,
        *,
        candidates: int = 50,
        window: int = 20,
        retain: int = 15,
    ) -> None:
        self.first_stage = first_stage
        self.index = first_stage.index
        self.ranks_columns = first_stage.ranks_columns
        self.scorer: SimilarityScorer | CallableScorer = (
            SimilarityScorer()
            if scorer is None
            else scorer
            if isinstance(scorer, SimilarityScorer | CallableScorer)
            else CallableScorer(scorer)
        )
        sizes = {"candidates": candidates, "window": window, "retain": retain}
        if min(sizes.values()) <= 0 or retain >= window:
            raise ValueError(f"need positive sizes and retain < window, got {sizes}")
        if isinstance(self.scorer, SimilarityScorer):
            s = self.scorer
            self._core = _core.AdaptiveReranker.with_similarity(
                self.index.core,
                self.index._embed,
                self.index.embedder_name,
                rule=s.rule,
                value=s.value,
                depth=s.depth,
                **sizes,
            )
        else:
            self._core = _core.AdaptiveReranker.with_callable(
                self.index.core, self.scorer, self.scorer.name, **sizes
            )

    def rerank(self, questions: list[str], first: list[_core.Retrieval]) -> list[_core.Retrieval]:
        """The post-step alone, over first-stage results already computed."""
        return self._core.rerank(questions, first)

    def _raw(self, batch: list[str], k: int, k_columns: int) -> list[_core.Retrieval]:
        return self._core.retrieve(batch, self.first_stage._stage(), k_columns)

    def _stage(self) -> _core.FirstStageFn:
        return self._native_unless_overridden(
            AdaptiveRetriever, lambda: self._core.as_stage(self.first_stage._stage())
        )


def _recall(ranked: list[int], gold: list[int], k: int) -> float:
    """recall@k that also accepts k = 0 (nothing returned)."""
    if k > 0:
        return float(_core.recall_at(ranked, gold, k))
    return 1.0 if not gold else 0.0


@dataclass(frozen=True)
class CutMetrics:
    complete_recall: float  # percent of questions with every gold table before the cut
    recall: float  # mean percent of gold tables before the cut
    mean_tables: float  # mean cut


def cut_metrics(ranked: list[list[int]], golds: list[list[int]], cuts: list[int]) -> CutMetrics:
    """Scores each ranked list at its own cut (k may differ per question, and may be 0)."""
    n = max(len(ranked), 1)
    recalls = [_recall(rk, g, c) for rk, g, c in zip(ranked, golds, cuts, strict=True)]
    return CutMetrics(
        100 * sum(r == 1.0 for r in recalls) / n, 100 * sum(recalls) / n, sum(cuts) / n
    )


@dataclass(frozen=True)
class Calibration:
    """A threshold rule's value fitted on a labelled benchmark: the value with the fewest mean
    tables whose complete recall reaches ``target`` there (else the one with the highest)."""

    rule: ThresholdRule
    value: float
    benchmark: str
    target: float
    metrics: CutMetrics
    grid: list[tuple[float, CutMetrics]] = field(default_factory=list)


GRIDS: dict[str, list[float]] = {
    "fixed": [round(0.05 + 0.025 * i, 4) for i in range(37)],
    "relative": [round(0.0125 * i, 4) for i in range(41)],
    "zscore": [round(0.125 * i, 4) for i in range(41)],
}


def fit_threshold(
    first_stage: BaseRetriever,
    bench: Benchmark,
    rule: ThresholdRule,
    *,
    target_complete_recall: float = 90.0,
    values: Sequence[float] | None = None,
    depth: int = 50,
    candidates: int = 50,
    window: int = 20,
    retain: int = 15,
    batch_size: int = 256,
) -> Calibration:
    """Fits ``rule``'s value on ``bench`` (its gold tables): runs the first stage once, then
    the adaptive re-ranking for every value of the grid. Apply the result to *another*
    benchmark; fitting and reporting on the same one would read its test labels."""
    if rule == "gap":
        raise ValueError("the gap rule has no value to fit")
    grid = list(values) if values is not None else GRIDS[rule]
    questions = [q.question for q in bench.questions]
    golds = [list(q.gold_tables) for q in bench.questions]
    first: list[_core.Retrieval] = []
    for start in range(0, len(questions), batch_size):
        first.extend(first_stage._raw(questions[start : start + batch_size], candidates, 0))
    scored: list[tuple[float, CutMetrics]] = []
    for value in grid:
        retriever = AdaptiveRetriever(
            first_stage,
            SimilarityScorer(rule, value, depth),
            candidates=candidates,
            window=window,
            retain=retain,
        )
        out: list[_core.Retrieval] = []
        for start in range(0, len(questions), batch_size):
            stop = start + batch_size
            out.extend(retriever.rerank(questions[start:stop], first[start:stop]))
        ranked = [[t.table for t in r.tables] for r in out]
        scored.append((value, cut_metrics(ranked, golds, [r.cut or 0 for r in out])))
    reaching = [(v, m) for v, m in scored if m.complete_recall >= target_complete_recall]
    best = (
        min(reaching, key=lambda vm: vm[1].mean_tables)
        if reaching
        else max(scored, key=lambda vm: (vm[1].complete_recall, -vm[1].mean_tables))
    )
    return Calibration(rule, best[0], bench.name, target_complete_recall, best[1], scored)


def interpolate(values: dict[int, float], k: float) -> float:
    """Linear interpolation of a metric known at integer k (the expected value of answering
    with k = floor or ceil at random so that the mean size is k)."""
    lo, hi = math.floor(k), math.ceil(k)
    if lo == hi:
        return values[lo]
    return values[lo] + (k - lo) * (values[hi] - values[lo])
