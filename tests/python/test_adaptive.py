from __future__ import annotations

import concurrent.futures
import math
from typing import Any

import numpy as np
import pytest

import tabret
from tabret.adaptive import (
    AdaptiveRetriever,
    CallableScorer,
    SimilarityScorer,
    cut_metrics,
    fit_threshold,
)
from tabret.benchmarks import load_benchmark
from tabret.cli import main
from tabret.embedders import HashingEmbedder
from tabret.eval import evaluate, format_cut_table
from tabret.index import DenseRetriever, TableIndex

HASHING = HashingEmbedder()
QUESTION = "How many beds does each ward have?"
# A logit per first-stage position (the C++ replay test uses the same script).
LOGITS = [0.5, 0.9, 0.1, 0.7, 0.2, 0.3, 0.8, 0.05, 0.6, 0.4]


@pytest.fixture(scope="module")
def demo_index() -> TableIndex:
    return TableIndex.build(tabret.demo_catalog(), HASHING, progress=False)


class Scripted:
    """Logits by first-stage position, a threshold per call; records the windows (positions)."""

    def __init__(self, index: TableIndex, first: list[int], thresholds: list[float]) -> None:
        self.pos = {index.table_text(t): p for p, t in enumerate(first)}
        self.thresholds = thresholds
        self.windows: list[list[int]] = []

    def __call__(self, question: str, texts: list[str]) -> tuple[list[float], float]:
        assert question == QUESTION
        self.windows.append([self.pos[t] for t in texts])
        return [LOGITS[self.pos[t]] for t in texts], self.thresholds[len(self.windows) - 1]


def test_algorithm_1_replayed_on_scripted_logits(demo_index: TableIndex) -> None:
    dense = DenseRetriever(demo_index)
    first = [t.id for t in dense.retrieve(QUESTION, 10).tables]
    scorer = Scripted(demo_index, first, [0.7, 0.25, 0.95, 0.95])
    atr = AdaptiveRetriever(dense, scorer, candidates=10, window=4, retain=2)
    r = atr.retrieve(QUESTION)
    # Bottom-up windows of positions; kept tables (6, 8 after window 1) are sent again.
    assert scorer.windows == [[6, 7, 8, 9], [4, 5, 6, 8], [2, 3, 6, 8], [0, 1, 6, 3]]
    assert [first.index(t.id) for t in r.tables] == [1, 6, 3, 0, 8, 2, 5, 4, 9, 7]
    assert r.cut == 7  # fixed in window 2 (start 4, three tables beat 0.25 ≥ R = 2)
    assert [t.id for t in r.selected] == [t.id for t in r.tables[:7]]
    assert r.trace[0].step == "dense"
    assert r.trace[-1].step == "atr window 1"


def test_batched_scorer_gets_one_call_per_step(demo_index: TableIndex) -> None:
    calls: list[int] = []

    def batched(questions: list[str], windows: list[list[str]]) -> list[tuple[Any, float]]:
        calls.append(len(windows))
        return [(np.arange(len(w), dtype=np.float64), 100.0) for w in windows]

    atr = AdaptiveRetriever(
        DenseRetriever(demo_index),
        CallableScorer(batched, batched=True),
        candidates=10,
        window=4,
        retain=2,
    )
    out = atr.retrieve(["a", "b", "c"])
    assert calls == [3, 3, 3, 3]
    assert all(r.cut == 0 and len(r.tables) == 10 for r in out)


def _nan(q: str, texts: list[str]) -> tuple[list[float], float]:
    return [math.nan] * len(texts), 0.0


def _short(q: str, texts: list[str]) -> tuple[list[float], float]:
    return [1.0], 0.0


def _raises(q: str, texts: list[str]) -> tuple[list[float], float]:
    raise KeyError("scorer failed")


@pytest.mark.parametrize(
    ("scorer", "error", "message"),
    [
        (_nan, tabret.ScoringError, "NaN or infinite"),
        (_short, tabret.ScoringError, "returned 1 logits for window 0 of 10 tables"),
        (lambda q, t: "no", TypeError, "must answer \\(logits, threshold\\)"),
        (lambda q, t: (np.zeros((2, 2)), 0.0), TypeError, "1-D sequence of floats"),
        (lambda q, t: ([0.0] * len(t), "x"), TypeError, "threshold of window 0 must be a float"),
        (_raises, KeyError, "scorer failed"),
    ],
)
def test_bad_scorers_raise_clear_errors(
    demo_index: TableIndex, scorer: Any, error: type[Exception], message: str
) -> None:
    atr = AdaptiveRetriever(DenseRetriever(demo_index), scorer, candidates=10)
    with pytest.raises(error, match=message):
        atr.retrieve(QUESTION)


def test_scoring_error_is_a_value_error() -> None:
    assert issubclass(tabret.ScoringError, ValueError)
    assert issubclass(tabret.ScoringError, tabret.Error)


def test_bad_options(demo_index: TableIndex) -> None:
    dense = DenseRetriever(demo_index)
    with pytest.raises(ValueError, match="retain < window"):
        AdaptiveRetriever(dense, window=5, retain=5)
    with pytest.raises(TypeError, match="must be callable"):
        AdaptiveRetriever(dense, CallableScorer(3))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threshold rule must be"):
        AdaptiveRetriever(dense, SimilarityScorer("median"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k must be positive"):
        AdaptiveRetriever(dense).retrieve(QUESTION, 0)


def test_similarity_scorer_keeps_dense_order(demo_index: TableIndex) -> None:
    dense = DenseRetriever(demo_index)
    plain = dense.retrieve(QUESTION, 30)
    everything = AdaptiveRetriever(dense, SimilarityScorer("fixed", -2.0), candidates=30)
    r = everything.retrieve(QUESTION)
    assert [t.id for t in r.tables] == [t.id for t in plain.tables]
    assert r.cut == 30
    top = AdaptiveRetriever(dense, SimilarityScorer("relative", 1e-4), candidates=30)
    assert [t.id for t in top.retrieve(QUESTION).selected] == [plain.tables[0].id]


def test_threads_agree_with_serial(demo_index: TableIndex) -> None:
    atr = AdaptiveRetriever(DenseRetriever(demo_index), SimilarityScorer("zscore", 1.0))
    questions = [q.question for q in tabret.demo_questions()] * 4
    serial = atr.retrieve(questions)
    chunks = [questions[i : i + 36] for i in range(0, len(questions), 36)]

    def run(chunk: list[str]) -> list[tabret.Retrieval]:
        return atr.retrieve(chunk)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        parallel = [r for part in pool.map(run, chunks) for r in part]
    assert parallel == serial
    assert len({r.cut for r in serial}) > 1  # the cut adapts to the question


def test_evaluate_scores_the_cut_and_matches_fixed_k() -> None:
    bench = load_benchmark("demo")
    index = TableIndex.build(bench.catalog, HASHING, progress=False)
    dense = DenseRetriever(index)
    atr = AdaptiveRetriever(dense, SimilarityScorer("relative", 0.1))
    res = evaluate(atr.retrieve, bench, (1, 2, 3), progress=False)
    assert res.cut is not None
    cuts = [row["cut"] for row in res.per_question]
    assert res.cut.mean_tables == pytest.approx(sum(cuts) / len(cuts))
    lo, hi = math.floor(res.cut.mean_tables), math.ceil(res.cut.mean_tables)
    assert set(res.cut.fixed) == {lo, hi}
    if lo >= 1:  # the fixed-k numbers are the ordinary metrics of the same lists
        assert res.cut.fixed[lo][1] == pytest.approx(
            evaluate(atr.retrieve, bench, (lo,), progress=False).recall[lo]
        )
    low, high = sorted((res.cut.fixed[lo][1], res.cut.fixed[hi][1]))
    assert low <= res.cut.fixed_at_mean[1] <= high
    assert "| demo |" in format_cut_table([res])
    plain = evaluate(dense.retrieve, bench, (1, 2), progress=False)
    assert plain.cut is None
    assert "cut" not in plain.per_question[0]


def test_cut_metrics_accept_zero() -> None:
    m = cut_metrics([[1, 2], [3, 4]], [[1], [4]], [0, 2])
    assert (m.complete_recall, m.recall, m.mean_tables) == (50.0, 50.0, 1.0)


def test_fit_threshold_picks_the_cheapest_value_reaching_the_target() -> None:
    bench = load_benchmark("demo")
    dense = DenseRetriever(TableIndex.build(bench.catalog, HASHING, progress=False))
    grid = [0.0, 0.05, 0.1, 0.2]
    cal = fit_threshold(dense, bench, "relative", target_complete_recall=0.0, values=grid)
    assert [v for v, _ in cal.grid] == grid
    assert cal.metrics.mean_tables == min(m.mean_tables for _, m in cal.grid)
    impossible = fit_threshold(dense, bench, "relative", target_complete_recall=101, values=grid)
    best = max(m.complete_recall for _, m in impossible.grid)
    assert impossible.metrics.complete_recall == best
    with pytest.raises(ValueError, match="no value to fit"):
        fit_threshold(dense, bench, "gap")


def test_cli_adaptive_on_demo(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", "--benchmark", "demo", "--method", "single-hop", "adaptive"]
    argv += ["--embedder", "hashing", "--k", "1", "3", "--quiet", "--threshold-rule", "gap"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "adaptive (single-hop; gap@50)" in out
    assert "Adaptive cut vs fixed top-k" in out
    bad = ["eval", "--benchmark", "demo", "--method", "adaptive", "--embedder", "hashing"]
    assert main([*bad, "--calibrate-on", "demo", "--quiet"]) == 1
    assert "another benchmark" in capsys.readouterr().err
