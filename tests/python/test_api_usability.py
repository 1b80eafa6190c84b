"""What a user meets at the Python prompt: readable reprs, the LLM-free join-aware selectors,
and the top-level exports (issue 20, item 4)."""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING

import numpy as np
import pytest

import tabret
from tabret import GreedyJoinRetriever, HashingEmbedder, JarExactRetriever, JoinGraph, TableIndex

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="module")
def index() -> TableIndex:
    return TableIndex.build(tabret.demo_catalog(), HashingEmbedder(), progress=False)


def test_reprs_say_what_the_object_is(index: TableIndex) -> None:
    name = index.embedder_name
    assert repr(index) == f"TableIndex(6 databases, 69 tables, 340 columns, embedder '{name}')"
    assert repr(tabret.DenseRetriever(index)) == f"DenseRetriever(over {index!r})"
    ward = index.catalog.table(index.catalog.find_table("hospital", "ward") or 0)
    assert repr(ward) == (
        "Table(name='ward', nl_name='hospital ward', "
        "description='An inpatient ward of the hospital.')"
    )
    cat = tabret.Catalog()
    db = cat.add_database("d")
    t = cat.add_table(db, "t", "t", "x" * 100)
    assert repr(cat.table(t)) == f"Table(name='t', description='{'x' * 60}…')"
    assert repr(cat.database(db)) == "Database(name='d')"
    # A long description of multi-byte characters is cut between characters, never inside one.
    for pad in range(3):
        u = cat.add_table(db, f"u{pad}", f"u{pad}", "x" * pad + "é" * 40)
        shown = repr(cat.table(u)).split("description='")[1]
        assert shown.endswith("…')")
        assert shown == "x" * pad + "é" * ((60 - pad) // 2) + "…')"


def test_join_aware_selectors_run_without_an_llm(index: TableIndex) -> None:
    """No decompositions given: each question is its own only sub-query (the documented
    default), the same as an LLM that answers nothing."""
    graph = JoinGraph.build(index)
    question = "Which patients were admitted to which ward?"
    silent = tabret.llms.CallableLLM(lambda prompts: [""] * len(prompts), "silent")
    for cls in (GreedyJoinRetriever, JarExactRetriever):
        got = cls(index, graph).retrieve(question, 3)
        assert got.table_names == cls(index, graph, silent).retrieve(question, 3).table_names
        assert "hospital.patient" in got.table_names


def test_top_level_exports() -> None:
    from tabret.join import column_stats_from_database

    assert tabret.column_stats_from_database is column_stats_from_database
    assert "column_stats_from_database" in tabret.__all__


def test_load_uses_the_saved_embedder(tmp_path: Path) -> None:
    """TableIndex.load(dir) with no embedder loads the one the index was built with, the
    hashing parameters included; a callable's name cannot be loaded and says so."""
    from tabret.embedders import saved_embedder

    emb = HashingEmbedder(dim=256, char_ngram=4, bigram_weight=0.5, stopwords=False)
    built = TableIndex.build(tabret.demo_catalog(), emb, progress=False)
    built.save(tmp_path / "idx")
    loaded = TableIndex.load(tmp_path / "idx")
    assert loaded.embedder_name == emb.name
    q = "Which wards have the most beds?"
    want = tabret.DenseRetriever(built).retrieve(q, 5)
    assert tabret.DenseRetriever(loaded).retrieve(q, 5).table_names == want.table_names
    assert isinstance(saved_embedder(HashingEmbedder().name), HashingEmbedder)

    def my_model(texts: list[str]) -> object:
        return emb.embed(texts)

    TableIndex.build(tabret.demo_catalog(), my_model, progress=False).save(tmp_path / "mine")
    with pytest.raises(ValueError, match=r"pass the same embedder to TableIndex\.load"):
        TableIndex.load(tmp_path / "mine")
    assert TableIndex.load(tmp_path / "mine", my_model).embedder_name.endswith(".my_model")

    # Another function under the same name is caught by re-embedding stored tables' texts.
    def other(texts: list[str]) -> object:
        return emb.embed([t.upper()[::-1] for t in texts])

    other.__qualname__ = my_model.__qualname__
    other.__name__ = my_model.__name__
    with pytest.raises(ValueError, match=r"does not reproduce the index's vectors \(cosine"):
        TableIndex.load(tmp_path / "mine", other)

    def wider(texts: list[str]) -> object:
        return np.hstack([emb.embed(texts), emb.embed(texts)])

    wider.__qualname__ = my_model.__qualname__
    with pytest.raises(ValueError, match=r"returns vectors of shape \(512,\)"):
        TableIndex.load(tmp_path / "mine", wider)
    with pytest.raises(ValueError, match="cannot read the hashing parameters"):
        saved_embedder("hashing(dim=x)")


def test_missing_data_directory_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tabret.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TABRET_DATA_DIR", raising=False)
    assert main(["eval", "--benchmark", "spider-union", "--embedder", "hashing", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"not found: {tmp_path.parent.resolve() / 'shared/data'}" in err
    assert "the default ../shared/data" in err
    assert "set TABRET_DATA_DIR or pass --data-dir" in err


def test_join_graph_and_generated_questions_report_progress(index: TableIndex) -> None:
    from tabret.reverse import GeneratedQuestions

    seen: list[tuple[str, int, int]] = []
    JoinGraph.build(index, progress=lambda *report: seen.append(report))
    GeneratedQuestions.build(index, batch_size=32, progress=lambda *report: seen.append(report))
    columns = [r for r in seen if r[0] == "join graph columns"]
    questions = [r for r in seen if r[0] == "generated questions"]
    assert columns[-1] == ("join graph columns", 340, 340)
    assert [done for _, done, _ in questions] == [32, 64, 69]
    assert {total for _, _, total in questions} == {69}

    def stop(stage: str, done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        JoinGraph.build(index, progress=stop)


def test_documented_names_are_exported() -> None:
    """`tabret.load_saved` (named in the docs) and `tabret.DiskCachedEmbedder` (issue 47,
    items 15 and 19)."""
    from tabret.embedding_cache import DiskCachedEmbedder
    from tabret.index import load_saved

    assert tabret.load_saved is load_saved
    assert tabret.DiskCachedEmbedder is DiskCachedEmbedder
    assert {"load_saved", "DiskCachedEmbedder"} <= set(tabret.__all__)


def test_greedy_join_stage_defaults_to_no_decompositions(index: TableIndex) -> None:
    """`GreedyJoin(graph)`, as docs/choosing-a-method.md writes it: each question is its own
    only sub-query, the same as the retriever without decompositions (issue 47, item 15)."""
    from tabret.pipeline import GreedyJoin, JarExact, Pipeline

    graph = JoinGraph.build(index)
    question = "Which patients were admitted to which ward?"
    first = tabret.DenseRetriever(index)
    for stage, cls in ((GreedyJoin, GreedyJoinRetriever), (JarExact, JarExactRetriever)):
        got = Pipeline(first, stage(graph)).retrieve(question, 3)
        assert got.table_names == cls(index, graph).retrieve(question, 3).table_names


def test_empty_questions_are_refused(index: TableIndex) -> None:
    """An empty or whitespace-only question has nothing to rank by: a ValueError from every
    retriever, not k tables at score 0 (issue 47, item 5)."""
    from tabret.pipeline import GreedyJoin, Pipeline

    retrievers = [
        tabret.DenseRetriever(index),
        tabret.LexicalRetriever(index),
        Pipeline(tabret.DenseRetriever(index), GreedyJoin(JoinGraph.build(index))),
    ]
    for retriever in retrievers:
        with pytest.raises(ValueError, match=r"^question is empty: there is nothing to"):
            retriever.retrieve("", 3)
        with pytest.raises(ValueError, match=r"^question 2 of 3 is empty \(whitespace only\)"):
            retriever.retrieve(["ward", " \t\n", "patient"], 3)
        assert len(retriever.retrieve(["ward"], 3)) == 1


def _mib(text: str) -> int:
    """The N of the one "exact … up to N MiB" in ``text``."""
    (found,) = re.findall(r"exact\W+(?:search )?up to (\d+) MiB", " ".join(text.split()))
    return int(found)


def test_automatic_kind_threshold_is_the_documented_one() -> None:
    """`TableIndex.build`'s docstring and `tabret index --help` give the size up to which
    kind='auto' searches exactly; both must be what it does (issue 47, item 15)."""
    from tabret.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    mib = _mib(tabret.TableIndex.build.__doc__ or "")
    assert _mib(sub.choices["index"].format_help()) == mib
    dim = 1 << 16  # a table's float32 row: 256 KiB
    rows = (mib << 20) // (4 * dim)
    for n, kind in ((rows, "exact"), (rows + 1, "sparse")):
        cat = tabret.Catalog()
        cat.add_ddl_text("".join(f"CREATE TABLE t{i} (c INT);" for i in range(n)), "db")
        built = TableIndex.build(cat, HashingEmbedder(dim=dim), columns=False, progress=False)
        assert built.search_kinds == {"tables": kind}
