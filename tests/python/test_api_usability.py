"""What a user meets at the Python prompt: readable reprs, the LLM-free join-aware selectors,
and the top-level exports (issue 20, item 4)."""

from __future__ import annotations

import pytest

import tabret
from tabret import GreedyJoinRetriever, HashingEmbedder, JarExactRetriever, JoinGraph, TableIndex


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
