"""The Python reference shapes in bench/reference/ (timed against tabret by bench/algorithms.py)
must keep selecting what tabret selects: checked here on the demo catalog with toy recorded
decompositions, so the benchmark's reference code cannot rot. No timing here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench import algorithms  # noqa: E402
from tabret import _core, demo_catalog, demo_questions  # noqa: E402


@pytest.fixture(scope="module")
def setup() -> algorithms.Setup:
    cat = demo_catalog()
    questions = [q.question for q in demo_questions()][:12]
    source = _core.ReplaySource("toy", "decomposition")
    for q in questions:
        words = [w.strip("?,.").lower() for w in q.split() if len(w) > 4]
        items = [f"{a}:{b}" for a, b in zip(words[::2], words[1::2], strict=False)]
        source.add(q, items or [f"{words[0] if words else 'thing'}:name"])
    return algorithms.Setup("demo", cat, questions, "spider", source)


def test_single_hop_and_reverse_agree(setup: algorithms.Setup) -> None:
    for row in (algorithms.bench_dense(setup), algorithms.bench_reverse(setup)):
        assert row["questions"] == len(setup.questions)
        assert row["agreement"] == 100.0, row


@pytest.mark.parametrize("objective", ["paper", "round_robin"])
def test_crush_agrees(setup: algorithms.Setup, objective: str) -> None:
    row = algorithms.bench_crush(setup, budget=8, objective=objective)
    assert row["agreement"] == 100.0, row


def test_murre_agrees(setup: algorithms.Setup) -> None:
    assert algorithms.bench_murre(setup)["agreement"] == 100.0


def test_join_methods_agree(setup: algorithms.Setup) -> None:
    j = algorithms.JoinInputs(setup)
    assert algorithms.bench_greedy(setup, j, k=3)["agreement"] == 100.0
    assert algorithms.bench_jar(setup, j, k=2)["agreement"] == 100.0


def test_adaptive_agrees(setup: algorithms.Setup) -> None:
    # Top 20 of 69 tables: deeper, the first stage reaches tables with cosine ~0 whose order
    # is rounding noise (see docs/benchmarks.md).
    row = algorithms.bench_adaptive(setup, candidates=20, window=8, retain=5)
    assert row["agreement"] == 100.0
