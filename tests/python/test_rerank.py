"""tabret.rerank: the ``rerank`` stage, a pair scorer as ATR's window scorer and as Reverse
Engineering's re-ranker, and ``_core.Retrieval`` made in Python. The scorers here are plain
Python callables (the cross-encoder itself is trained in test_training.py)."""

from __future__ import annotations

import math

import pytest

import tabret
from tabret import _core
from tabret.embedders import HashingEmbedder
from tabret.index import TableFormat
from tabret.methods import Inputs, build_pipeline
from tabret.pipeline import Pipeline, Rerank
from tabret.rerank import RerankRetriever, reverse_reranker, window_scorer
from tabret.reverse import GeneratedQuestions

QUESTION = "How many beds are there in the maternity ward?"
FORMAT: TableFormat = "related"  # the index's table text, which the stages serialise


@pytest.fixture(scope="module")
def index() -> tabret.TableIndex:
    built = tabret.TableIndex.build(tabret.demo_catalog(), HashingEmbedder(), progress=False)
    assert built.core.format == FORMAT
    return built


def shortest(pairs: list[tuple[str, str]]) -> list[float]:
    """Prefers short table texts: an order no embedder gives."""
    return [-float(len(text)) for _, text in pairs]


def test_a_retrieval_is_made_in_python_and_checks_its_cut() -> None:
    tables = [_core.ScoredTable(3, 0.5), _core.ScoredTable(1, 0.25)]
    trace = [_core.TraceEntry(3, "mine", "q", 0.5)]
    made = _core.Retrieval(tables, cut=1, trace=trace)
    assert [(t.table, t.score) for t in made.tables] == [(3, 0.5), (1, 0.25)]
    assert made.cut == 1
    assert [(e.table, e.step) for e in made.trace] == [(3, "mine")]
    with pytest.raises(ValueError, match="cut 3 is past the 2 tables"):
        _core.Retrieval(tables, cut=3)


def test_rerank_orders_the_candidates_by_the_scorer(index: tabret.TableIndex) -> None:
    first = tabret.DenseRetriever(index)
    candidates = first.retrieve(QUESTION, k=10).tables
    texts = {t.id: index.catalog.serialize_table(t.id, FORMAT) for t in candidates}
    got = RerankRetriever(first, shortest, candidates=10).retrieve(QUESTION, k=4)
    want = sorted(texts, key=lambda t: len(texts[t]))[:4]
    assert [t.id for t in got.tables] == want
    assert [t.score for t in got.tables] == [-float(len(texts[t])) for t in want]
    steps = [(e.table, e.step) for e in got.trace]
    names = [index.catalog.qualified_name(t) for t in want]
    assert steps[:4] == [(n, "rerank") for n in names]
    assert {s for _, s in steps[4:]} == {"dense"}  # the stage before's reasons are kept
    assert {t for t, _ in steps[4:]} == set(names)


def test_rerank_is_a_pipeline_stage_that_needs_a_reranker(index: tabret.TableIndex) -> None:
    pipeline = build_pipeline("single-hop > rerank", index, Inputs(reranker=shortest))
    direct = RerankRetriever(tabret.DenseRetriever(index), shortest)
    assert pipeline.retrieve(QUESTION, k=5).tables == direct.retrieve(QUESTION, k=5).tables
    staged = Pipeline(tabret.DenseRetriever(index), post=[Rerank(shortest, candidates=20)])
    assert staged.retrieve(QUESTION, k=5).tables == direct.retrieve(QUESTION, k=5).tables
    with pytest.raises(ValueError, match="reranker"):
        build_pipeline("single-hop > rerank", index, Inputs())


@pytest.mark.parametrize(
    ("scorer", "message"),
    [
        (lambda pairs: [0.0] * (len(pairs) - 1), "scores"),
        (lambda pairs: [[0.0]] * len(pairs), "scores"),
        (lambda pairs: [math.nan] * len(pairs), "not finite"),
        (lambda pairs: "no", "not a sequence of numbers"),
    ],
)
def test_a_scorer_of_the_wrong_shape_is_a_scoring_error(
    index: tabret.TableIndex, scorer: object, message: str
) -> None:
    rerank = RerankRetriever(tabret.DenseRetriever(index), scorer)  # type: ignore[arg-type]
    with pytest.raises(tabret.ScoringError, match=message):
        rerank.retrieve(QUESTION, k=3)


def test_a_scorer_that_raises_reaches_the_caller(index: tabret.TableIndex) -> None:
    class Broken(RuntimeError):
        pass

    def broken(pairs: list[tuple[str, str]]) -> list[float]:
        raise Broken("model offline")

    with pytest.raises(Broken, match="model offline"):
        RerankRetriever(tabret.DenseRetriever(index), broken).retrieve(QUESTION, k=3)
    with pytest.raises(TypeError, match="callable"):
        RerankRetriever(tabret.DenseRetriever(index), 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="candidates"):
        RerankRetriever(tabret.DenseRetriever(index), broken, candidates=0)


def test_the_reranker_is_adaptives_window_scorer(index: tabret.TableIndex) -> None:
    seen: list[int] = []

    def counted(pairs: list[tuple[str, str]]) -> list[float]:
        seen.append(len(pairs))
        return [1.0 if "ward" in text else -1.0 for _, text in pairs]  # threshold logit 0

    adaptive = build_pipeline("single-hop > adaptive", index, Inputs(reranker=counted))
    got = adaptive.retrieve(QUESTION, k=20)
    assert seen  # the scorer, not the similarity rule, scored the windows
    assert got.cut is not None
    kept = [t.id for t in got.tables[: got.cut]]
    assert kept
    assert all("ward" in index.catalog.serialize_table(t, FORMAT) for t in kept)
    scorer = window_scorer(counted, threshold=0.5)
    assert "threshold 0.5" in scorer.name
    got_windows = scorer(["q", "r"], [["the ward", "a bed"], ["ward"]])
    assert [(list(s), t) for s, t in got_windows] == [([1.0, -1.0], 0.5), ([1.0], 0.5)]


def test_the_reranker_re_scores_reverse_engineerings_candidates(
    index: tabret.TableIndex,
) -> None:
    questions = GeneratedQuestions.build(index, progress=False)
    inputs = Inputs(questions=questions, reranker=shortest)
    got = build_pipeline("reverse", index, inputs).retrieve(QUESTION, k=3)
    assert "rerank" in {e.step for e in got.trace}
    lengths = [-t.score for t in got.tables]
    assert lengths == sorted(lengths)
    assert reverse_reranker(shortest)([("q", "ab", "generated"), ("q", "a", "x")]) == [-2.0, -1.0]
