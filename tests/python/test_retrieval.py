from __future__ import annotations

import concurrent.futures
import itertools
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tabret
from tabret.benchmarks import load_benchmark
from tabret.embedders import CallableEmbedder, HashingEmbedder
from tabret.eval import evaluate
from tabret.index import DenseRetriever, TableIndex

HASHING = HashingEmbedder()


@pytest.fixture(scope="module")
def demo_index() -> TableIndex:
    return TableIndex.build(tabret.demo_catalog(), HASHING, progress=False)


def test_retrieve_shapes_and_names(demo_index: TableIndex) -> None:
    r = DenseRetriever(demo_index).retrieve("How many beds does each ward have?", 4, k_columns=2)
    assert r.table_names[0] == "hospital.ward"
    assert len(r.tables) == 4
    assert [t.score for t in r.tables] == sorted((t.score for t in r.tables), reverse=True)
    assert len(r.columns) == 2
    assert r.trace[0].step == "dense"
    batch = DenseRetriever(demo_index).retrieve(["a", "b", "c"], 2)
    assert [len(x.tables) for x in batch] == [2, 2, 2]


@pytest.mark.parametrize("k", [0, -3])
def test_non_positive_k_is_an_error(demo_index: TableIndex, k: int) -> None:
    with pytest.raises(ValueError, match="k must be positive"):
        DenseRetriever(demo_index).retrieve("x", k)


def test_empty_catalog_is_an_error() -> None:
    with pytest.raises(tabret.Error, match="no tables"):
        TableIndex.build(tabret.Catalog(), HASHING, progress=False)


def test_batch_costs_one_embedder_call(demo_index: TableIndex) -> None:
    calls: list[int] = []

    def embed(texts: list[str]) -> Any:
        calls.append(len(texts))
        return HASHING.embed(texts)

    index = TableIndex.build(
        tabret.demo_catalog(),
        CallableEmbedder(embed, HASHING.name),
        columns=False,
        batch_size=1000,
        progress=False,
    )
    assert calls == [69]
    DenseRetriever(index).retrieve([f"question {i}" for i in range(50)], 5)
    assert calls == [69, 50]


class Boom(RuntimeError):
    pass


def _raise(texts: list[str]) -> Any:
    raise Boom("model crashed")


@pytest.mark.parametrize(
    ("embed", "error", "message"),
    [
        (_raise, Boom, "model crashed"),
        (lambda texts: np.zeros((len(texts) + 1, 8)), tabret.EmbeddingError, "rows for"),
        (lambda texts: np.full((len(texts), 8), np.nan), tabret.EmbeddingError, "NaN"),
        (lambda texts: "not an array", TypeError, "2-D array"),
        (lambda texts: np.zeros(len(texts)), TypeError, "1 dimensions"),
    ],
)
def test_bad_embedders_raise_clear_errors(embed: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        TableIndex.build(tabret.demo_catalog(), CallableEmbedder(embed, "bad"), progress=False)


def test_query_embedder_failure_keeps_type(demo_index: TableIndex) -> None:
    failing = {"on": False}

    def embed(texts: list[str]) -> Any:
        if failing["on"]:
            raise Boom("query time")
        return HASHING.embed(texts)

    index = TableIndex.build(
        tabret.demo_catalog(), CallableEmbedder(embed, "flaky"), progress=False
    )
    failing["on"] = True
    with pytest.raises(Boom, match="query time"):
        DenseRetriever(index).retrieve("anything", 3)


def test_save_load_round_trip(demo_index: TableIndex, tmp_path: Path) -> None:
    demo_index.save(tmp_path / "idx")
    loaded = TableIndex.load(tmp_path / "idx", HASHING)
    qs = ["songs in a playlist", "patients admitted to cardiology", "overdue loans"]
    a = DenseRetriever(demo_index).retrieve(qs, 10, k_columns=5)
    b = DenseRetriever(loaded).retrieve(qs, 10, k_columns=5)
    assert a == b
    with pytest.raises(ValueError, match="built with embedder"):
        TableIndex.load(tmp_path / "idx", HashingEmbedder(dim=64))


def test_corrupt_index_file_is_a_file_error(demo_index: TableIndex, tmp_path: Path) -> None:
    demo_index.save(tmp_path / "idx")
    vectors = tmp_path / "idx" / "columns.f32"
    data = bytearray(vectors.read_bytes())
    data[17] ^= 0xFF
    vectors.write_bytes(bytes(data))
    with pytest.raises(tabret.FileError, match=r"columns\.f32: checksum mismatch"):
        TableIndex.load(tmp_path / "idx", HASHING)


def test_hnsw_agrees_with_exact(tmp_path: Path) -> None:
    bench = load_benchmark("demo")
    exact = TableIndex.build(bench.catalog, HASHING, progress=False)
    hnsw = TableIndex.build(bench.catalog, HASHING, kind="hnsw", progress=False)
    qs = [q.question for q in bench.questions]
    a = [r.table_names for r in DenseRetriever(exact).retrieve(qs, 10)]
    b = [r.table_names for r in DenseRetriever(hnsw).retrieve(qs, 10)]
    overlap = sum(len(set(x) & set(y)) for x, y in zip(a, b, strict=True)) / (10 * len(qs))
    assert overlap >= 0.99
    hnsw.save(tmp_path / "h")
    c = [
        r.table_names
        for r in DenseRetriever(TableIndex.load(tmp_path / "h", HASHING)).retrieve(qs, 10)
    ]
    assert c == b


def test_threads_agree_with_serial(demo_index: TableIndex) -> None:
    retriever = DenseRetriever(demo_index)
    qs = [q.question for q in tabret.demo_questions()] * 20
    serial = retriever.retrieve(qs, 5)
    chunks = [qs[i : i + 90] for i in range(0, len(qs), 90)]

    def run(chunk: list[str]) -> list[tabret.Retrieval]:
        return retriever.retrieve(chunk, 5)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        parallel = [r for part in pool.map(run, chunks) for r in part]
    assert parallel == serial


def test_retrieve_releases_the_gil(demo_index: TableIndex) -> None:
    """While one thread is inside a long native retrieve, Python code keeps running in another:
    the largest pause the main thread sees is a small part of the call (with the GIL held
    through the call it would be all of it)."""
    retriever = DenseRetriever(demo_index)
    qs = [q.question * 8 for q in tabret.demo_questions()] * 150
    span: list[float] = []

    def work() -> None:
        start = time.perf_counter()
        retriever.retrieve(qs, 5)
        span.append(time.perf_counter() - start)

    thread = threading.Thread(target=work)
    ticks = [time.perf_counter()]
    thread.start()
    while thread.is_alive():
        ticks.append(time.perf_counter())
    thread.join()
    longest_pause = max(b - a for a, b in itertools.pairwise(ticks))
    assert span[0] > 0.2, "the call is too short to tell"
    assert longest_pause < span[0] / 2


def test_demo_quality_with_hashing() -> None:
    """Regression floor for the built-in embedder on the demo (measured 2026-11-22: r@5 = 59.5)."""
    bench = load_benchmark("demo")
    index = TableIndex.build(bench.catalog, HASHING, columns=False, progress=False)
    result = evaluate(DenseRetriever(index).retrieve, bench, (5,), progress=False)
    assert result.recall[5] >= 57.0
