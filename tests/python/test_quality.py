"""Quality floors with all-MiniLM-L6-v2 (measured 2026-11-22; a drop below floor = regression).

Floors are the measured values minus a small margin (2 points), so that a real regression fails
while the test stays deterministic on the same model and data.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tabret.benchmarks import load_benchmark
from tabret.eval import evaluate
from tabret.index import DenseRetriever, TableIndex

pytest.importorskip("sentence_transformers")


@pytest.fixture(scope="module")
def minilm() -> object:
    from tabret.embedders import default_embedder

    return default_embedder()


def test_demo_floor(minilm: object) -> None:
    bench = load_benchmark("demo")
    index = TableIndex.build(bench.catalog, minilm, columns=False, progress=False)  # type: ignore[arg-type]
    result = evaluate(DenseRetriever(index).retrieve, bench, (5, 10), progress=False)
    assert result.recall[5] >= 78.5  # measured 80.6
    assert result.complete_recall[10] >= 81.3  # measured 83.3


def test_spider_union_first_100_floor(minilm: object, data_dir: Path) -> None:
    bench = load_benchmark("spider-union", data_dir)
    subset = dataclasses.replace(bench, questions=bench.questions[:100])
    index = TableIndex.build(bench.catalog, minilm, columns=False, progress=False)  # type: ignore[arg-type]
    result = evaluate(DenseRetriever(index).retrieve, subset, (5, 10), progress=False)
    assert result.recall[5] >= 89.4  # measured 91.4
    assert result.complete_recall[10] >= 93.0  # measured 95.0
