"""tabret.pgvector against a real PostgreSQL server with the pgvector extension.

The server is a throwaway cluster (bench/postgres_cluster.py): Debian's with
postgresql-NN-pgvector where installed, else the PostgreSQL 16 + pgvector build of the PyPI
package ``pgserver`` (in the test extra). Missing both skips locally and fails under CI=true.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tabret
import tabret.pgvector
from tabret import DenseRetriever, TableIndex
from tabret.benchmarks import load_benchmark

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.postgres_cluster import pgvector_server_bin, throwaway_cluster

psycopg = pytest.importorskip("psycopg")
from tabret.pgvector import MARKER, PgVectorIndex, PgVectorRetriever, StoreError  # noqa: E402


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with pgvector_server_bin() as bindir:
        if bindir is None:
            if os.environ.get("CI") == "true":
                pytest.fail("no PostgreSQL server with pgvector under CI (pip install pgserver)")
            pytest.skip("no PostgreSQL server with pgvector (pip install pgserver)")
        with throwaway_cluster(bindir, prefix="tabret-pgvector-") as cluster:
            yield f"{cluster.url}/postgres"


@pytest.fixture(scope="module")
def demo_index() -> TableIndex:
    return TableIndex.build(tabret.demo_catalog(), "hashing", progress=False)


def _admin(url: str) -> Any:
    """A connection of our own, beside tabret's (autocommit; closed by ``with``)."""
    return psycopg.connect(url.replace("+psycopg", ""), autocommit=True)


class _Impostor:
    """Another model under the index's embedder name."""

    def __init__(self, name: str) -> None:
        self.name = name

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.random.default_rng(0).normal(size=(len(texts), 1024)).astype(np.float32)


def _exact(vectors: np.ndarray, q: np.ndarray, k: int) -> list[list[int]]:
    scores = q.astype(np.float64) @ vectors.astype(np.float64).T
    return [sorted(range(len(row)), key=lambda i: (-row[i], i))[:k] for row in scores]


def _same_up_to_ties(got: list[tuple[int, float]], want: list[int], scores: np.ndarray) -> None:
    """got is the exact top-k: its ids' true scores equal the true top-k's, position by position
    (near-ties may swap), and its scores are the true ones."""
    assert len(got) == len(want)
    for (i, s), w in zip(got, want, strict=True):
        assert s == pytest.approx(scores[i], abs=1e-5)
        assert scores[i] == pytest.approx(scores[w], abs=1e-5)


def test_publish_open_and_same_answers_as_the_in_process_index(
    url: str, demo_index: TableIndex
) -> None:
    store = PgVectorIndex.publish(demo_index, url, "demo")
    try:
        assert store.generation == 1
        assert store.size("t") == demo_index.catalog.num_tables
        assert store.size("c") == demo_index.catalog.num_columns
        assert store.catalog.num_tables == demo_index.catalog.num_tables
        assert "demo" in repr(store)
        assert "generation 1" in repr(store)
        np.testing.assert_array_equal(
            store.vectors([0, 5]), np.asarray(demo_index.core.table_vectors)[[0, 5]]
        )
    finally:
        store.close()

    with PgVectorIndex.open(url, "demo") as opened:
        retriever = PgVectorRetriever(opened)
        local = DenseRetriever(demo_index)
        questions = [q.question for q in tabret.demo_questions()]
        got = retriever.retrieve(questions, k=5, k_columns=5)
        want = local.retrieve(questions, k=5, k_columns=5)
        for g, w in zip(got, want, strict=True):
            assert [t.name for t in g.tables] == [t.name for t in w.tables]
            assert [t.score for t in g.tables] == pytest.approx([t.score for t in w.tables])
            assert [c.name for c in g.columns] == [c.name for c in w.columns]
        single = retriever.retrieve(questions[0], k=3)
        assert isinstance(single, tabret.Retrieval)
        assert len(single.tables) == 3

        vectors = np.asarray(demo_index.core.table_vectors)
        q = vectors[[3, 40]] * 0.5 + vectors[[7, 9]] * 0.5
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        within = [2, 3, 7, 7, 40, 60]
        hits = opened.search_within(q, within, 3)
        for row, h in zip(q.astype(np.float64) @ vectors.T.astype(np.float64), hits, strict=True):
            best = sorted(set(within), key=lambda i: (-row[i], i))[:3]
            _same_up_to_ties(h, best, row)


def test_spider_union_matches_exact_search(
    url: str, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tabret.pgvector, "COPY_ROWS", 1000)  # several chunks per COPY
    bench = load_benchmark("spider-union", data_dir)
    index = TableIndex.build(bench.catalog, "hashing", progress=False)
    store = PgVectorIndex.publish(index, url, "spider_union")
    try:
        vectors = np.asarray(index.core.table_vectors)
        rng = np.random.default_rng(7)
        q = vectors[rng.choice(len(vectors), 20, replace=False)] + rng.normal(
            0, 0.02, (20, vectors.shape[1])
        ).astype(np.float32)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        scores = q.astype(np.float64) @ vectors.T.astype(np.float64)
        for h, want, row in zip(store.search(q, 10), _exact(vectors, q, 10), scores, strict=True):
            _same_up_to_ties(h, want, row)
        # the columns (five COPY chunks) answer as exact search does
        columns = np.asarray(index.core.column_vectors)
        assert store.size("c") == len(columns) > 4000
        cq = columns[[0, 2500, len(columns) - 1]]
        cscores = cq.astype(np.float64) @ columns.T.astype(np.float64)
        for h, want, row in zip(
            store.search(cq, 5, kind="c"), _exact(columns, cq, 5), cscores, strict=True
        ):
            _same_up_to_ties(h, want, row)
        questions = [x.question for x in bench.questions[:40]]
        got = PgVectorRetriever(store).retrieve(questions, k=10)
        for g, w in zip(got, DenseRetriever(index).retrieve(questions, k=10), strict=True):
            assert [t.score for t in g.tables] == pytest.approx(
                [t.score for t in w.tables], abs=1e-5
            )
    finally:
        store.close()
        assert PgVectorIndex.drop(url, "spider_union")
    assert not PgVectorIndex.drop(url, "spider_union")


def test_hnsw_publish_answers_close_to_exact(url: str, demo_index: TableIndex) -> None:
    with PgVectorIndex.publish(demo_index, url, "demo_hnsw", hnsw=True) as store:
        assert store.hnsw
        vectors = np.asarray(demo_index.core.table_vectors)
        q = vectors[:10]
        approx = store.search(q, 5, ef_search=100)
        exact = store.search(q, 5, exact=True)
        found = sum(
            len({i for i, _ in a} & {i for i, _ in e}) for a, e in zip(approx, exact, strict=True)
        )
        assert found / 50 >= 0.9  # 69 tables: HNSW at ef 100 finds (nearly) all of them
        assert all(a[0][0] == i for i, a in enumerate(approx))  # each vector finds itself


def test_republish_replaces_and_an_open_reader_sees_old_or_error(
    url: str, demo_index: TableIndex
) -> None:
    PgVectorIndex.publish(demo_index, url, "swap").close()
    reader = PgVectorIndex.open(url, "swap")
    q = np.asarray(demo_index.core.table_vectors)[:2]
    before = reader.search(q, 3)
    smaller = TableIndex.build(tabret.demo_catalog(), "hashing", columns=False, progress=False)
    with PgVectorIndex.publish(smaller, url, "swap") as again:
        assert again.generation == 2
        assert again.size("c") == 0
        assert [[i for i, _ in h] for h in again.search(q, 3)] == [
            [i for i, _ in h] for h in before
        ]
    with pytest.raises(StoreError, match=r"published again or dropped.*open it again"):
        reader.search(q, 3)
    reader.close()
    with PgVectorIndex.open(url, "swap") as fresh:
        assert fresh.generation == 2
    with _admin(url) as conn:
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE tablename LIKE 'tabret_swap_%' ORDER BY 1"
        ).fetchall()
    assert [r[0] for r in tables] == ["tabret_swap_c2", "tabret_swap_t2"]


def test_concurrent_readers_see_whole_generations(url: str, demo_index: TableIndex) -> None:
    """Readers opening while publishes run get generation 1's or 2's answers, complete."""
    PgVectorIndex.publish(demo_index, url, "busy").close()
    q = np.asarray(demo_index.core.table_vectors)[:4]
    errors: list[BaseException] = []
    counts: list[int] = []

    def read() -> None:
        try:
            for _ in range(5):
                with PgVectorIndex.open(url, "busy") as r:
                    try:
                        hits = r.search(q, 4)
                    except StoreError:
                        continue  # republished between open and search: open again
                    counts.append(sum(len(h) for h in hits))
        except BaseException as err:
            errors.append(err)

    readers = [threading.Thread(target=read) for _ in range(3)]
    for t in readers:
        t.start()
    for _ in range(3):
        PgVectorIndex.publish(demo_index, url, "busy").close()
    for t in readers:
        t.join()
    assert not errors
    assert counts
    assert all(c == 16 for c in counts)


def test_never_touches_tables_it_did_not_write(url: str, demo_index: TableIndex) -> None:
    with _admin(url) as conn:
        _user_tables_stay(conn, url, demo_index)


def _user_tables_stay(conn: Any, url: str, demo_index: TableIndex) -> None:
    conn.execute("CREATE SCHEMA users_own")
    conn.execute("CREATE TABLE users_own.tabret_indexes (x int)")
    conn.execute("INSERT INTO users_own.tabret_indexes VALUES (42)")
    with pytest.raises(StoreError, match=r"users_own\.tabret_indexes exists but tabret did not"):
        PgVectorIndex.publish(demo_index, url, "mine", schema="users_own")
    with pytest.raises(StoreError, match="tabret did not write it"):
        PgVectorIndex.open(url, "mine", schema="users_own")
    assert conn.execute("SELECT x FROM users_own.tabret_indexes").fetchall() == [(42,)]

    # a user's table where the next generation would go
    PgVectorIndex.publish(demo_index, url, "clash").close()
    conn.execute("CREATE TABLE public.tabret_clash_t2 (keep text)")
    conn.execute("INSERT INTO public.tabret_clash_t2 VALUES ('mine')")
    with pytest.raises(StoreError, match="tabret_clash_t2 exists and the registry does not"):
        PgVectorIndex.publish(demo_index, url, "clash")
    assert conn.execute("SELECT keep FROM public.tabret_clash_t2").fetchall() == [("mine",)]
    with PgVectorIndex.open(url, "clash") as still:  # the failed publish changed nothing
        assert still.generation == 1
        assert still.search(np.asarray(demo_index.core.table_vectors)[:1], 1)[0][0][0] == 0
    assert (
        conn.execute("SELECT obj_description('public.tabret_clash_t1'::regclass)").fetchone()[0]
        == MARKER
    )


def test_bad_input_and_errors_name_what_is_wrong(url: str, demo_index: TableIndex) -> None:
    with pytest.raises(ValueError, match="index name"):
        PgVectorIndex.publish(demo_index, url, "Bad-Name")
    with pytest.raises(StoreError, match="no tabret index 'absent'"):
        PgVectorIndex.open(url, "absent")
    secret_url = url.replace("postgres@", "postgres:hunter2@").rsplit(":", 1)[0] + ":1/postgres"
    with pytest.raises(StoreError, match=r"cannot connect to PostgreSQL at 127\.0\.0\.1:1/") as e:
        PgVectorIndex.open(secret_url, "demo")
    assert "hunter2" not in str(e.value)
    with PgVectorIndex.publish(demo_index, url, "checks") as store:
        with pytest.raises(ValueError, match=r"queries must be \(n, 1024\)"):
            store.search(np.zeros((1, 3)), 3)
        with pytest.raises(ValueError, match="k must be positive"):
            store.search(np.zeros((1, 1024)), 0)
        with pytest.raises(ValueError, match="NaN"):
            store.search(np.full((1, 1024), np.nan), 3)
        with pytest.raises(ValueError, match="candidate id 999 out of range"):
            store.search_within(np.zeros((1, 1024)), [1, 999], 3)
        with pytest.raises(ValueError, match="built with embedder"):
            PgVectorRetriever(store, lambda texts: np.ones((len(texts), 1024)))
        with pytest.raises(ValueError, match="does not reproduce"):
            PgVectorRetriever(store, _Impostor(store.embedder_name))
    with _admin(url) as conn:
        conn.execute("UPDATE tabret_indexes SET catalog = catalog || ' ' WHERE name = 'checks'")
    with pytest.raises(StoreError, match="does not match its checksum"):
        PgVectorIndex.open(url, "checks")
