from __future__ import annotations

import concurrent.futures
import functools
import sys
import threading
import weakref
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
    exact = TableIndex.build(bench.catalog, HASHING, kind="exact", progress=False)
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


def _exact_on_union(data_dir: Path) -> tuple[tabret.Catalog, list[str], list[Any]]:
    """SpiderUnion's catalog, 20 of its questions and their exact retrievals with every table
    and column scored (hashing vectors)."""
    bench = load_benchmark("spider-union", data_dir)
    cat = bench.catalog
    qs = [q.question for q in bench.questions[:20]]
    exact = DenseRetriever(TableIndex.build(cat, HASHING, kind="exact", progress=False))
    return cat, qs, exact.retrieve(qs, cat.num_tables, k_columns=cat.num_columns)


def _missed(index: TableIndex, qs: list[str], want: list[Any]) -> int:
    """How many of the exact top 10 tables and columns the index's searches miss; every score
    it returns is the exact one (up to float rounding: `want` came from one batch)."""
    missed = 0
    for g, w in zip(DenseRetriever(index).retrieve(qs, 10, k_columns=10), want, strict=True):
        tables, columns = {t.id: t.score for t in w.tables}, {c.id: c.score for c in w.columns}
        got_tables = [tables[t.id] for t in g.tables]
        assert [t.score for t in g.tables] == pytest.approx(got_tables, abs=1e-6)
        got_columns = [columns[c.id] for c in g.columns]
        assert [c.score for c in g.columns] == pytest.approx(got_columns, abs=1e-6)
        missed += len({t.id for t in w.tables[:10]} - {t.id for t in g.tables})
        missed += len({c.id for c in w.columns[:10]} - {c.id for c in g.columns})
    return missed


def _saves_and_loads(index: TableIndex, path: Path, qs: list[str]) -> None:
    index.save(path)
    loaded = TableIndex.load(path, HASHING)
    assert loaded.core.kind == index.core.kind
    assert DenseRetriever(loaded).retrieve(qs, 10, k_columns=10) == DenseRetriever(index).retrieve(
        qs, 10, k_columns=10
    )


def test_sparse_budget_rescores_exactly_and_is_saved(tmp_path: Path, data_dir: Path) -> None:
    cat, qs, want = _exact_on_union(data_dir)

    def budgeted(max_postings: int, rescore: int) -> TableIndex:
        return TableIndex.build(
            cat,
            HASHING,
            kind="sparse",
            sparse_max_postings=max_postings,
            sparse_rescore=rescore,
            progress=False,
        )

    # a question's postings over 876 tables (~28 % non-zero) run to tens of thousands: a budget
    # of one dimension misses much; 5,000 postings and 100 re-scored miss under 5 %
    assert _missed(budgeted(1, 50), qs, want) > 100
    index = budgeted(5000, 100)
    assert _missed(index, qs, want) <= 20
    _saves_and_loads(index, tmp_path / "b", qs)
    with pytest.raises(tabret.Error, match="rescore must be at least 1"):
        TableIndex.build(cat, HASHING, kind="sparse", sparse_rescore=0, progress=False)


def test_pca_index_rescores_exactly_and_is_saved(tmp_path: Path, data_dir: Path) -> None:
    cat, qs, want = _exact_on_union(data_dir)

    def pca(dims: int, rescore: int, shortlist: int = 20_000) -> TableIndex:
        return TableIndex.build(
            cat,
            HASHING,
            kind="pca",
            pca_dims=dims,
            pca_shortlist=shortlist,
            pca_rescore=rescore,
            progress=False,
        )

    # 20 questions, 400 of the exact top 10s: one component and 20 rows re-scored miss most
    # (392 when written); 128 components and 200 re-scored of 876 tables and 4,503 columns miss
    # under 2 % (none when written)
    assert _missed(pca(1, 20), qs, want) > 200
    index = pca(128, 200)
    assert _missed(index, qs, want) <= 8
    # 2-bit codes of 128 components scanned, a shortlist of 400 scored on 4-bit codes of 256,
    # 100 re-scored
    assert _missed(pca(256, 100, shortlist=400), qs, want) <= 8
    _saves_and_loads(index, tmp_path / "p", qs)
    with pytest.raises(tabret.Error, match="rescore must be at least 1"):
        TableIndex.build(cat, HASHING, kind="pca", pca_rescore=0, progress=False)


def test_sparse_index_answers_as_exact(tmp_path: Path, data_dir: Path) -> None:
    bench = load_benchmark("spider-union", data_dir)
    exact = TableIndex.build(bench.catalog, HASHING, kind="exact", progress=False)
    sparse = TableIndex.build(bench.catalog, HASHING, kind="sparse", progress=False)
    assert sparse.core.kind == "sparse"
    qs = [q.question for q in bench.questions[:60]]
    for a, b in zip(
        DenseRetriever(exact).retrieve(qs, 10, k_columns=10),
        DenseRetriever(sparse).retrieve(qs, 10, k_columns=10),
        strict=True,
    ):
        assert [t.score for t in b.tables] == pytest.approx([t.score for t in a.tables], abs=1e-5)
        assert [c.score for c in b.columns] == pytest.approx([c.score for c in a.columns], abs=1e-5)
    sparse.save(tmp_path / "s")
    loaded = TableIndex.load(tmp_path / "s", HASHING)
    assert loaded.core.kind == "sparse"
    assert DenseRetriever(loaded).retrieve(qs[:5], 10) == DenseRetriever(sparse).retrieve(
        qs[:5], 10
    )
    with pytest.raises(tabret.Error, match="non-zero; use the exact or hnsw index"):
        TableIndex.build(
            bench.catalog, lambda t: np.ones((len(t), 8)), kind="sparse", progress=False
        )


@functools.cache
def _rotation() -> np.ndarray:
    """One fixed random 1024-d rotation, made once."""
    q = np.linalg.qr(np.random.default_rng(7).standard_normal((1024, 1024)))[0]
    return q.astype(np.float32)


def _rotated(texts: list[str]) -> np.ndarray:
    """The hashing vectors turned by the fixed rotation: dense, same inner products."""
    rotated: np.ndarray = np.asarray(HASHING.embed(texts), dtype=np.float32) @ _rotation()
    return rotated


def test_the_default_kind_picks_exact_sparse_or_pca_by_size(data_dir: Path) -> None:
    """``auto``: the demo's vectors and SpiderUnion's 876 table vectors (3.6 MB of hashing
    vectors) are scanned exactly; its 4,503 column vectors (18 MB, over the 8 MiB threshold)
    get the sparse index as hashing vectors and the pca index when the same vectors are rotated
    to dense ones, and both find the exact top 10 columns of every question."""
    demo = TableIndex.build(tabret.demo_catalog(), HASHING, progress=False)
    assert demo.core.kind == "auto"
    assert demo.search_kinds == {"tables": "exact", "columns": "exact"}
    bench = load_benchmark("spider-union", data_dir)
    qs = [q.question for q in bench.questions[:40]]
    for embedder, picked in ((HASHING, "sparse"), (CallableEmbedder(_rotated, "rotated"), "pca")):
        auto = TableIndex.build(bench.catalog, embedder, progress=False)
        assert auto.search_kinds == {"tables": "exact", "columns": picked}
        exact = TableIndex.build(bench.catalog, embedder, kind="exact", progress=False)
        assert exact.search_kinds == {"tables": "exact", "columns": "exact"}
        got = DenseRetriever(auto).retrieve(qs, 10, k_columns=10)
        want = DenseRetriever(exact).retrieve(qs, 10, k_columns=10)
        assert [r.tables for r in got] == [r.tables for r in want]  # exact either way
        tenth = [r.columns[-1].score for r in want]
        missed = sum(c.score < w - 1e-5 for r, w in zip(got, tenth, strict=True) for c in r.columns)
        assert missed <= 2, picked  # none when written, either kind


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


class _Questions(list[str]):
    """A question list that can be weakly referenced: alive exactly while the native call
    that was handed the only reference has not returned."""


class _Probe:
    """The embedder of the GIL test: HASHING, plus a flag set once the question batch is
    embedded (the callback is the last Python the native retrieve runs before scoring)."""

    def __init__(self) -> None:
        self.embedded = False

    def embed(self, texts: list[str]) -> Any:
        out = np.ascontiguousarray(HASHING.embed(texts), dtype=np.float32)  # no conversion later
        self.embedded = True
        return out


def _python_ran_while_native(retrieve: Any, probe: _Probe, questions: list[str]) -> bool:
    """Runs ``retrieve(questions, 5)`` (one native call whose embedder is ``probe.embed``) in a
    thread A while this thread B watches A, and says whether B executed Python while A was
    provably inside the native code after the embedder callback.

    B counts a sighting when, read in this order, (1) ``probe.embedded`` is set, (2) A's
    innermost Python frame is ``call`` (not the callback: its frame is gone), and (3) the
    question list is still alive. The list's only strong reference is A's argument: CPython
    drops it when the call returns, before A can run another bytecode or give the GIL away, so
    (3) means the call had not returned at (3), hence not at (2); (1) means the callback had
    finished its flag by (1). So at (2) A was running native code after the callback and B was
    running Python, which needs the GIL: the native code had released it. If retrieve held the
    GIL instead, A would give it up only inside a Python frame (the callback, whose frame would
    be innermost: no sighting) or after the call returned (the list dead: no sighting), so no
    sighting can ever happen. No clock is read: the loop ends when A does."""
    box = [_Questions(questions)]
    alive = weakref.ref(box[0])
    out: list[Any] = []

    def call() -> None:
        out.append(retrieve(box.pop(), 5))

    thread = threading.Thread(target=call)
    probe.embedded = False
    seen = 0
    thread.start()
    ident = thread.ident
    while thread.is_alive():
        embedded = probe.embedded  # (1)
        frame = sys._current_frames().get(ident or -1)  # (2)
        in_call = frame is not None and frame.f_code is call.__code__
        del frame
        if embedded and in_call and alive() is not None:  # (3)
            seen += 1
    thread.join()
    assert len(out) == 1
    assert len(out[0]) == len(questions)
    return seen > 0


def test_retrieve_releases_the_gil() -> None:
    """While thread A is inside a native ``retrieve`` (scoring 500 questions against 2,000
    tables after its embedder callback), thread B executes Python: proved by what B sees of A,
    not by timing (see ``_python_ran_while_native``). A call too short for B to be scheduled
    in it is retried (at most 10 calls); with the GIL held no call can pass."""
    catalog = tabret.Catalog()
    catalog.add_ddl_text(
        "".join(f"CREATE TABLE t{i} (id INTEGER, name_{i % 97} TEXT);" for i in range(2000)),
        "big",
    )
    probe = _Probe()
    index = TableIndex.build(
        catalog, CallableEmbedder(probe.embed, HASHING.name), columns=False, progress=False
    )
    native = DenseRetriever(index)._core  # DenseRetriever.retrieve is this one native call
    questions = [f"which table holds name {i % 97} of row {i}?" for i in range(500)]
    assert any(_python_ran_while_native(native.retrieve, probe, questions) for _ in range(10)), (
        "no Python ran in another thread while retrieve was in native code: the GIL is held"
    )


def test_demo_quality_with_hashing() -> None:
    """Regression floor for the built-in embedder on the demo (measured 2026-11-22: r@5 = 59.5)."""
    bench = load_benchmark("demo")
    index = TableIndex.build(bench.catalog, HASHING, columns=False, progress=False)
    result = evaluate(DenseRetriever(index).retrieve, bench, (5,), progress=False)
    assert result.recall[5] >= 57.0


def test_column_max_scores_each_table_by_its_best_column(demo_index: TableIndex) -> None:
    """column-max (the example method of docs/write-your-own-method.md): a table's score is the
    best of its own cosine and its columns' cosines, checked against every table and column
    cosine that single-hop reports."""
    from dataclasses import replace

    from tabret.methods import METHODS, Inputs

    method = METHODS["column-max"]
    cat = demo_index.catalog
    n_tables, n_columns = len(cat.tables), len(cat.columns)
    options = replace(method.options(), depth=n_columns)
    column_max = method.build(demo_index, Inputs(), options)
    question = "Which courses have a credit value above four?"
    every = DenseRetriever(demo_index).retrieve(question, n_tables, k_columns=n_columns)
    best = {t.name: t.score for t in every.tables}
    for c in every.columns:
        table = c.name.rsplit(".", 1)[0]
        best[table] = max(best[table], c.score)
    want = sorted(best.items(), key=lambda kv: -kv[1])[:5]
    got = column_max.retrieve(question, 5)
    assert [t.score for t in got.tables] == pytest.approx([s for _, s in want], abs=1e-6)
    assert set(got.table_names) <= {name for name, s in best.items() if s >= want[-1][1] - 1e-6}
    assert got.table_names != DenseRetriever(demo_index).retrieve(question, 5).table_names
