"""Join-aware retrieval from Python: join graph, greedy and exact selection, join closure, the
dev-DB benchmarks and per-k evaluation."""

from __future__ import annotations

from pathlib import Path

import pytest

import tabret
from tabret import (
    Catalog,
    DenseRetriever,
    GreedyJoinRetriever,
    JarExactRetriever,
    JoinClosure,
    JoinGraph,
    TableIndex,
)
from tabret.benchmarks import Benchmark, BenchmarkQuestion, load_benchmark, sql_tables
from tabret.cli import main
from tabret.eval import evaluate, format_table
from tabret.join import jar_column_stats, lenient_replay
from tabret.llms import ReplaySource
from tabret.results import Retrieval, ScoredTable
from tabret.rewriting import DecompositionRewriter

SCHOOL = """
CREATE TABLE students (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE courses (id INTEGER PRIMARY KEY, title TEXT);
CREATE TABLE enrollments (
  student_id INTEGER REFERENCES students(id),
  course_id INTEGER REFERENCES courses(id),
  grade REAL
);
"""
SHOP = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id));
"""


@pytest.fixture(scope="module")
def index() -> TableIndex:
    cat = Catalog()
    cat.add_ddl_text(SCHOOL, "school")
    cat.add_ddl_text(SHOP, "shop")
    # the signature alone: with the related text the junction table names both of its ends and
    # the dense stage finds it, leaving the closure test nothing to bridge
    return TableIndex.build(cat, "hashing", format="signature", progress=False)


@pytest.fixture(scope="module")
def graph(index: TableIndex) -> JoinGraph:
    return JoinGraph.build(index)


def _decompose(prompts: list[str]) -> list[str]:
    return ["students:name\ncourses:title"] * len(prompts)


def _table(index: TableIndex, name: str) -> int:
    db, table = name.split(".")
    t = index.catalog.find_table(db, table)
    assert t is not None
    return t


def test_graph_declared_and_inferred_edges(index: TableIndex, graph: JoinGraph) -> None:
    students, enrollments = _table(index, "school.students"), _table(index, "school.enrollments")
    assert graph.weight(students, enrollments) == 1.0
    assert graph.weight(students, _table(index, "shop.customers")) == 0.0
    cat = index.catalog
    for e in graph.edges:
        assert cat.table(e.a).database == cat.table(e.b).database
        assert 0 < e.weight <= 1
    assert any(e.declared for e in graph.edges)
    assert len(graph) == len(graph.edges)


def test_graph_save_load_and_corruption(
    index: TableIndex, graph: JoinGraph, tmp_path: Path
) -> None:
    index.save(tmp_path / "idx")
    graph.save(tmp_path / "idx")  # into the index directory
    loaded = JoinGraph.load(tmp_path / "idx", TableIndex.load(tmp_path / "idx", "hashing"))
    assert [(e.a, e.b, e.weight) for e in loaded.edges] == [
        (e.a, e.b, e.weight) for e in graph.edges
    ]
    path = tmp_path / "idx" / "join_graph.tjg"
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(tabret.FileError, match="checksum"):
        JoinGraph.load(path, index)


def test_greedy_and_exact_retrieve(index: TableIndex, graph: JoinGraph) -> None:
    rewriter = DecompositionRewriter(_decompose)
    greedy = GreedyJoinRetriever(index, graph, rewriter, candidates=5)
    exact = JarExactRetriever(index, graph, _decompose, candidates=5, connectivity="strict")
    q = "names of students and titles of their courses"
    for retriever, step in ((greedy, "greedy-join"), (exact, "jar-exact")):
        res = retriever.retrieve(q, 3, k_columns=2)
        assert isinstance(res, Retrieval)
        assert len(res.tables) == 3
        assert len(res.columns) == 2
        # the selector's entries, then the (dense) first stage's for the same tables
        assert [s.step for s in res.trace] == [step] * 3 + ["dense"] * 3
        assert {s.query for s in res.trace[:3]} <= {"students:name", "courses:title"}
    # strict connectivity keeps the three tables in the one database that has three
    assert {t.name.split(".")[0] for t in exact.retrieve(q, 3).tables} == {"school"}
    with pytest.raises(ValueError, match="k must be positive"):
        greedy.retrieve(q, 0)
    with pytest.raises(ValueError, match="five numbers"):
        JarExactRetriever(index, graph, _decompose, weights=[1, 2])
    with pytest.raises(ValueError, match="greedy weights"):
        GreedyJoinRetriever(index, graph, _decompose, weights=[1.0])


def test_closure_adds_the_junction_table(index: TableIndex) -> None:
    dense = DenseRetriever(index)
    closed = JoinClosure(dense, budget=2)
    q = "student name course title"
    base = dense.retrieve(q, 2)
    assert set(base.table_names) == {"school.students", "school.courses"}
    res = closed.retrieve(q, 2)
    assert res.table_names[:2] == base.table_names
    assert res.table_names[2:] == ["school.enrollments"]
    assert res.trace[-1].step == "bridge"
    within = JoinClosure(dense, mode="within_k").retrieve(q, 2)
    assert len(within.tables) == 2


def test_lenient_replay_falls_back_to_the_question() -> None:
    source = ReplaySource("test", "decomposition")
    source.add("How many singers?", ["singers:count"])
    rewriter = DecompositionRewriter(lenient_replay(source))
    known, unknown = rewriter.rewrite(["How many singers?", "Unknown question?"])
    assert known.queries == ["singers:count"]
    assert unknown.queries == ["Unknown question?"]


def test_per_k_evaluation_scores_each_run() -> None:
    cat = Catalog()
    cat.add_ddl_text(SCHOOL, "school")
    bench = Benchmark("t", cat, [BenchmarkQuestion("1", "school", "q", (0, 2))], "test")

    def retrieve(questions: list[str], k: int) -> list[Retrieval]:
        ids = [0, 1] if k == 2 else [2, 0, 1, 1][:k]  # the k=2 answer is not a prefix
        return [
            Retrieval(q, [ScoredTable(t, cat.qualified_name(t), 1.0) for t in ids])
            for q in questions
        ]

    prefix = evaluate(retrieve, bench, (2, 3), progress=False, per_k=False)
    per_k = evaluate(retrieve, bench, (2, 3), progress=False)  # the default: a run per k
    assert prefix.recall == {2: 100.0, 3: 100.0}  # prefixes of the k=3 run
    assert not prefix.per_k
    assert per_k.recall == {2: 50.0, 3: 100.0}
    assert per_k.per_k
    assert per_k.per_question[0]["answers"] == {2: [0, 1], 3: [2, 0, 1]}
    assert set(per_k.seconds) == {2, 3}
    table = format_table([per_k], seconds=True, tables=True)
    assert "s@2" in table
    assert "n@3" in table


def test_a_result_that_returns_more_than_k_shows_its_size() -> None:
    """A method that returns every table reads 100.0 at every k: never without n@k beside."""
    cat = Catalog()
    cat.add_ddl_text(SCHOOL, "school")
    bench = Benchmark("t", cat, [BenchmarkQuestion("1", "school", "q", (0, 2))], "test")
    every = [ScoredTable(t, cat.qualified_name(t), 1.0) for t in range(cat.num_tables)]

    def everything(questions: list[str], k: int) -> list[Retrieval]:
        return [Retrieval(q, every) for q in questions]

    res = evaluate(everything, bench, (1, 2), progress=False)
    assert res.complete_recall == {1: 100.0, 2: 100.0}
    assert res.mean_tables == {1: cat.num_tables, 2: cat.num_tables}
    table = format_table([res])  # n@ shown although tables=False
    assert "| n@1 | n@2 |" in table
    assert f"| {cat.num_tables:.2f} |" in table

    def first_k(questions: list[str], k: int) -> list[Retrieval]:
        return [Retrieval(q, every[:k]) for q in questions]

    assert "n@" not in format_table([evaluate(first_k, bench, (1, 2), progress=False)])


def test_sql_tables_includes_nested_queries() -> None:
    inner = {
        "select": [False, []],
        "from": {"table_units": [["table_unit", 3]], "conds": []},
        "where": [],
        "having": [],
    }
    sql = {
        "select": [False, []],
        "from": {"table_units": [["table_unit", 1], ["table_unit", 2]], "conds": []},
        "where": [[False, 8, [0, [0, 1, False], None], inner, None]],
        "having": [],
        "union": {**inner, "from": {"table_units": [["table_unit", 1]], "conds": []}},
    }
    assert sql_tables(sql) == (1, 2, 3)


def test_dev_db_benchmarks(data_dir: Path) -> None:
    spider = load_benchmark("spider-dev-multi", data_dir)
    bird = load_benchmark("bird-dev-multi", data_dir)
    assert (spider.catalog.num_databases, spider.catalog.num_tables) == (20, 81)
    assert (bird.catalog.num_databases, bird.catalog.num_tables) == (11, 75)
    assert len(spider.questions) == 459
    assert len(bird.questions) == 1171
    assert all(len(q.gold_tables) >= 2 for q in spider.questions + bird.questions)
    assert len(load_benchmark("spider-dev", data_dir).questions) == 1034
    stats = jar_column_stats(spider.catalog, "spider", data_dir)
    assert stats.known == spider.catalog.num_columns  # every dev column has statistics
    assert jar_column_stats(bird.catalog, "bird", data_dir).known == bird.catalog.num_columns


def test_cli_join_methods(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "--benchmark", "spider-dev-multi", "--embedder", "hashing", "--quiet"]
    args += ["--data-dir", str(data_dir), "--format", "words", "--k", "2", "3"]
    assert main([*args, "--method", "single-hop", "greedy-join", "jar-exact"]) == 0
    out, err = capsys.readouterr()
    assert "459 questions recorded, 0 without" in err  # a note, not part of the results
    assert main([*args, "--method", "greedy-join", "--llm", "offline"]) == 0
    offline_err = capsys.readouterr().err
    assert "no decompositions: each question is its own only sub-query" in offline_err
    assert "questions recorded" not in offline_err
    rows = [line for line in out.splitlines() if line.startswith("| spider-dev-multi")]
    assert [row.split(" | ")[2] for row in rows] == ["single-hop", "greedy-join", "jar-exact"]
    assert main([*args, "--method", "single-hop", "--join-closure", "both"]) == 0
    out = capsys.readouterr().out
    assert "single-hop+closure" in out
    assert "n@2" in out
    demo = ["eval", "--benchmark", "demo", "--embedder", "hashing", "--quiet"]
    assert main([*demo, "--method", "greedy-join"]) == 0  # no recordings: said, as query does
    assert "no recorded JAR decompositions for 'demo'" in capsys.readouterr().err


def test_column_stats_without_sqlalchemy_fails_before_embedding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3
    import sys

    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT)")
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)  # `import sqlalchemy` now fails

    def build(*args: object, **kwargs: object) -> None:
        raise AssertionError("embedded before the missing SQLAlchemy was said")

    monkeypatch.setattr(tabret.TableIndex, "build", build)
    out = tmp_path / "shop.idx"
    argv = ["index", "sqlite", str(db), str(out), "--embedder", "hashing", "--quiet"]
    assert main([*argv, "--join-graph", "--column-stats"]) == 1
    assert "SQLAlchemy, which is not installed" in capsys.readouterr().err
    assert not out.exists()


def test_eval_greedy_join_on_own_questions_falls_back_as_query_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    catalog = tmp_path / "demo.json"
    tabret.demo_catalog().save_json(catalog)
    questions = tmp_path / "mine.jsonl"
    line = {"question": "Which doctors work in which ward?", "gold_tables": ["hospital.ward"]}
    questions.write_text(json.dumps(line) + "\n", encoding="utf-8")
    argv = ["eval", "--questions", str(questions), "--catalog", str(catalog), "--k", "3"]
    assert main([*argv, "--embedder", "hashing", "--quiet", "--method", "greedy-join"]) == 0
    captured = capsys.readouterr()
    assert "no recorded JAR decompositions for 'mine'" in captured.err
    assert "each question is its own only sub-query" in captured.err
    assert "| greedy-join |" in captured.out


def test_jar_exact_search_is_bounded_and_says_so() -> None:
    """Issue 47 item 10: 40 candidates could need 2^40 search nodes a question; max_nodes stops
    the search with the best set found, traced jar-exact:bounded; the default covers 20."""
    from tabret.join import JarExactRetriever, JoinGraph

    index = tabret.TableIndex.build(tabret.demo_catalog(), tabret.HashingEmbedder(), progress=False)
    graph = JoinGraph.build(index, progress=False)
    question = "Which doctors treated patients in wards with more than ten beds?"
    wide = JarExactRetriever(index, graph, candidates=40, max_nodes=500).retrieve(question, 10)
    assert len(wide.tables) == 10
    steps = [e.step for e in wide.trace]
    assert steps.count("jar-exact:bounded") == 10
    exact = JarExactRetriever(index, graph).retrieve(question, 10)  # 20 candidates: searched out
    assert "jar-exact:bounded" not in [e.step for e in exact.trace]
    with pytest.raises(tabret.Error, match="max_nodes must be positive"):
        JarExactRetriever(index, graph, max_nodes=0)
