"""Gold columns of the benchmarks and column-level evaluation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tabret.benchmarks import (
    Benchmark,
    BenchmarkQuestion,
    bird_dev,
    bird_union,
    demo,
    spider_union,
    sql_columns,
)
from tabret.eval import evaluate, format_table
from tabret.results import Retrieval, ScoredColumn


def _sql(**parts: Any) -> dict[str, Any]:
    """A parsed Spider SQL with empty clauses, overridden by ``parts``."""
    sql: dict[str, Any] = {
        "select": [False, []],
        "from": {"table_units": [], "conds": []},
        "where": [],
        "groupBy": [],
        "orderBy": [],
        "having": [],
        "limit": None,
        "intersect": None,
        "union": None,
        "except": None,
    }
    sql.update(parts)
    return sql


def _col(c: int) -> list[Any]:
    return [0, c, False]


def _val(c: int, c2: int | None = None) -> list[Any]:
    return [0, _col(c), None if c2 is None else _col(c2)]


def test_sql_columns_walks_every_clause_and_nested_queries() -> None:
    # SELECT T1.c1, count(*) FROM (SELECT c9 FROM t WHERE c10 > 1) JOIN t2 ON c2 = c3
    # WHERE c4 IN (SELECT c5 FROM t3 WHERE c6 = 'x') AND c7 - c8 > 3
    # GROUP BY c1 HAVING count(c11) > 2 ORDER BY c12 DESC
    # EXCEPT SELECT c13 FROM t4
    in_from = _sql(
        select=[False, [[0, _val(9)]]],
        where=[[False, 3, _val(10), 1.0, None]],
    )
    in_where = _sql(
        select=[False, [[0, _val(5)]]],
        where=[[False, 2, _val(6), '"x"', None]],
    )
    sql = _sql(
        select=[False, [[0, _val(1)], [3, _val(0)]]],
        **{
            "from": {
                "table_units": [["sql", in_from], ["table_unit", 2]],
                "conds": [[False, 2, _val(2), _col(3), None]],
            },
            "where": [[False, 8, _val(4), in_where, None], "and", [False, 3, _val(7, 8), 3, None]],
            "groupBy": [_col(1)],
            "having": [[False, 3, [0, [3, 11, False], None], 2.0, None]],
            "orderBy": ["desc", [_val(12)]],
            "except": _sql(select=[False, [[0, _val(13)]]]),
        },
    )
    assert sql_columns(sql) == (1, 9, 10, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13)


def test_sql_columns_skips_star_and_literals() -> None:
    sql = _sql(
        select=[False, [[3, _val(0)]]],
        where=[[False, 1, _val(4), 1, 10]],  # BETWEEN 1 AND 10
    )
    assert sql_columns(sql) == (4,)


def test_spider_union_gold_columns(data_dir: Path) -> None:
    bench = spider_union(data_dir)
    assert len(bench.questions) == 658
    assert bench.column_questions == 658
    cat = bench.catalog
    first = bench.questions[0]  # Show name, country, age for all singers ordered by age ...
    assert [cat.qualified_column_name(c) for c in first.gold_columns] == [
        "concert_singer.singer.Name",
        "concert_singer.singer.Country",
        "concert_singer.singer.Age",
    ]
    for q in bench.questions:  # gold columns lie in the gold tables
        assert {cat.column(c).table for c in q.gold_columns} <= set(q.gold_tables)


def test_bird_union_gold_columns(data_dir: Path) -> None:
    bench = bird_union(data_dir)
    assert len(bench.questions) == 1534
    assert bench.column_questions == 1446
    assert "(75 not in that revision, 13 with an unresolvable gold element)" in bench.source
    cat = bench.catalog
    assert [cat.qualified_column_name(c) for c in bench.questions[0].gold_columns] == [
        "california_schools.frpm.County Name",
        "california_schools.frpm.Enrollment (K-12)",
        "california_schools.frpm.FRPM Count (K-12)",
    ]


def test_bird_evidence_is_the_questions_knowledge(data_dir: Path) -> None:
    # BirdUnion (MURRE's revision) has no evidence: it is matched by database and question text
    # in JAR's newest revision; a revised question text keeps none
    union = bird_union(data_dir)
    assert "evidence (external knowledge) from jar/data/bird/dev.json for 1286 questions" in (
        union.source
    )
    assert sum(1 for q in union.questions if q.knowledge) == 1286
    first = "Eligible free rate for K-12 = `Free Meal Count (K-12)` / `Enrollment (K-12)`"
    assert union.questions[0].knowledge == first
    dev = bird_dev(data_dir)
    assert dev.questions[0].knowledge == first
    assert sum(1 for q in dev.questions if not q.knowledge) == 148  # empty in the file


def test_demo_has_no_gold_columns() -> None:
    bench = demo()
    assert bench.column_questions == 0
    with pytest.raises(ValueError, match="no gold columns"):
        evaluate(lambda qs, k: [], bench, level="column", progress=False)


def test_column_level_eval_by_hand() -> None:
    cat = demo().catalog
    questions = [
        BenchmarkQuestion("a", "db", "question a", (0,), gold_columns=(1, 2)),
        BenchmarkQuestion("b", "db", "question b", (0,), gold_columns=(5,)),
        BenchmarkQuestion("c", "db", "question c", (0,)),  # no gold columns: not scored
    ]
    bench = Benchmark("hand", cat, questions, "hand-made")
    ranked = {"question a": [1, 7, 2, 9], "question b": [8, 9, 10, 5]}
    calls: list[tuple[list[str], int]] = []

    def retrieve(qs: list[str], k: int) -> list[Retrieval]:
        calls.append((qs, k))
        return [
            Retrieval(q, [], [ScoredColumn(c, f"col{c}", 1.0) for c in ranked.get(q, [])[:k]])
            for q in qs
        ]

    res = evaluate(retrieve, bench, (1, 3, 4), level="column", progress=False)
    assert calls == [(["question a", "question b"], k) for k in (1, 3, 4)]  # a run per k
    sliced = evaluate(retrieve, bench, (1, 3, 4), level="column", progress=False, per_k=False)
    assert calls[3:] == [(["question a", "question b"], 4)]  # one run, sliced at each k
    assert (sliced.recall, sliced.complete_recall) == (res.recall, res.complete_recall)
    assert res.level == "column"
    assert res.questions == 2
    # k=1: a has 1 of 2, b 0 of 1; k=3: a complete, b not; k=4: both complete.
    assert res.recall == {1: 25.0, 3: 50.0, 4: 100.0}
    assert res.complete_recall == {1: 0.0, 3: 50.0, 4: 100.0}
    assert res.mean_tables == {1: 1.0, 3: 3.0, 4: 4.0}
    assert "| hand | column |" in format_table([res])
    table_level = evaluate(retrieve, bench, (1,), progress=False)  # every question, tables
    assert (table_level.level, table_level.questions) == ("table", 3)
    assert "level" not in format_table([table_level])
