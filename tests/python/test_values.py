"""Issue 49 item 1: cell values as retrieval evidence (tabret.values, the values stage):
read from SQLite natively and through SQLAlchemy within bounds, saved in the index directory,
matched in questions, fused with the other first stages, refused clearly where missing."""

from __future__ import annotations

import dataclasses
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import tabret
from tabret.catalog import Catalog
from tabret.embedders import HashingEmbedder
from tabret.index import TableIndex, load_saved
from tabret.join import JoinGraph
from tabret.methods import Inputs, build_pipeline
from tabret.pipeline import GreedyJoin, Pipeline
from tabret.values import ValueIndex, normalise_value, read_values

HASHING = HashingEmbedder(dim=256)


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A shop whose tables a question can only find by a value: 'DHL' is a carrier name."""
    path = tmp_path / "shop.db"
    con = sqlite3.connect(path)
    con.executescript(
        """
        CREATE TABLE cust (id INTEGER PRIMARY KEY, nm TEXT, ctry TEXT);
        CREATE TABLE shp (id INTEGER PRIMARY KEY, cust_id INTEGER REFERENCES cust(id),
                          carrier TEXT, wt REAL);
        CREATE TABLE prd (id INTEGER PRIMARY KEY, title TEXT, price REAL);
        INSERT INTO cust VALUES (1, 'Acme Corp', 'France'), (2, 'Globex', 'Germany');
        INSERT INTO shp VALUES (1, 1, 'DHL', 2.5), (2, 2, 'UPS', 1.0), (3, 1, 'DHL', 4.0);
        INSERT INTO prd VALUES (1, 'Widget', 9.99), (2, 'Gadget', 19.5);
        """
    )
    con.commit()
    con.close()
    return path


def test_values_are_read_from_sqlite_and_matched_in_questions(shop: Path) -> None:
    cat = Catalog.from_sqlite(shop)
    values = read_values(cat, shop, progress=False)
    assert len(values) == 8  # text values only: no ids, weights or prices
    shp = cat.find_table("shop", "shp")
    assert shp is not None
    carrier = cat.find_column(shp, "carrier")
    assert carrier is not None
    assert values.values_of(carrier) == ["DHL", "UPS"]
    matched = {(cat.column(m.column).name, m.value) for m in values.match("the DHL shipments")}
    assert matched == {("carrier", "DHL")}
    assert normalise_value("Ça, c'est Zürich") == "ca c est zurich"


def test_the_values_stage_finds_the_table_a_value_names(shop: Path) -> None:
    cat = Catalog.from_sqlite(shop)
    index = TableIndex.build(cat, HASHING, values=read_values(cat, shop, progress=False))
    values = build_pipeline("values", index)
    r = values.retrieve("total weight of the DHL shipments", k=3)
    assert r.table_names == ["shop.shp"]
    assert [(s.query, s.value) for s in r.trace] == [("'DHL' in carrier", "DHL")]
    assert values.retrieve("how many rows", k=3).tables == []
    fused = build_pipeline("hybrid + values", index).retrieve("orders of Acme Corp", k=2)
    assert "shop.cust" in fused.table_names


def test_the_prompt_names_the_values_matched_only_when_asked(shop: Path) -> None:
    cat = Catalog.from_sqlite(shop)
    index = TableIndex.build(cat, HASHING, values=read_values(cat, shop, progress=False))
    r = build_pipeline("hybrid + values", index).retrieve("DHL shipments of Acme Corp", k=2)
    assert sorted(r.table_names) == ["shop.cust", "shop.shp"]
    prompt = r.to_prompt(cat, matches=True)
    for table in ("cust", "shp"):  # each comment comes right before its table
        (block,) = [b for b in prompt.split("\n\n") if f"CREATE TABLE {table} " in b]
        comment = {"cust": "-- matched 'Acme Corp' in nm", "shp": "-- matched 'DHL' in carrier"}
        assert block.startswith(comment[table] + "\n")
    assert "matched" not in r.to_prompt(cat)  # values are user data: off by default


@pytest.mark.parametrize("selector", ["greedy-join", "jar-exact"])
def test_join_aware_selection_covers_the_values_its_first_stage_matched(
    shop: Path, selector: str
) -> None:
    cat = Catalog.from_sqlite(shop)
    index = TableIndex.build(cat, HASHING, values=read_values(cat, shop, progress=False))
    inputs = Inputs(graph=JoinGraph.build(index))
    spec = f"hybrid + values > {selector}"
    r = build_pipeline(spec, index, inputs).retrieve("weight sent by DHL", k=1)
    assert r.table_names == ["shop.shp"]
    assert [s.query for s in r.trace if s.step == selector] == ["value 'DHL'"]


def test_join_aware_selection_reads_the_value_a_trace_step_carries(shop: Path) -> None:
    """Coverage reads TraceStep.value, not the step's name or query text: a first stage of
    one's own that reports the values matched (in its own words) is covered the same way."""
    cat = Catalog.from_sqlite(shop)
    index = TableIndex.build(cat, HASHING, values=read_values(cat, shop, progress=False))
    graph = JoinGraph.build(index)
    inner = build_pipeline("hybrid + values", index)

    class Mine:
        def __init__(self, value: bool) -> None:
            self.index, self.value = index, value

        def retrieve(
            self, questions: str | Sequence[str], k: int = 10, *, k_columns: int = 0
        ) -> Any:
            return [
                dataclasses.replace(
                    r,
                    trace=[
                        dataclasses.replace(
                            s, step="mine", query="my matcher", value=s.value if self.value else ""
                        )
                        for s in r.trace
                    ],
                )
                for r in inner.retrieve(list(questions), k, k_columns=k_columns)
            ]

    def reasons(value: bool) -> list[str]:
        r = Pipeline(Mine(value), GreedyJoin(graph)).retrieve("weight sent by DHL", k=1)
        return [s.query for s in r.trace if s.step == "greedy-join"]

    assert reasons(True) == ["value 'DHL'"]
    assert reasons(False) != ["value 'DHL'"]


def test_values_are_saved_and_loaded_with_the_index(shop: Path, tmp_path: Path) -> None:
    cat = Catalog.from_sqlite(shop)
    index = TableIndex.build(cat, HASHING, values=read_values(cat, shop, progress=False))
    index.save(tmp_path / "idx")
    assert (tmp_path / "idx" / "values.tvi").is_file()
    loaded = TableIndex.load(tmp_path / "idx", HASHING)
    assert loaded.values is not None
    assert len(loaded.values) == 8
    again, _, _ = load_saved(tmp_path / "idx", HASHING)
    assert again.values is not None
    q = "DHL shipments to France"
    assert [(m.column, m.value) for m in again.values.match(q)] == [
        (m.column, m.value)
        for m in index.values.match(q)  # type: ignore[union-attr]
    ]


def test_values_of_another_catalog_and_an_index_without_values_are_refused(shop: Path) -> None:
    cat = Catalog.from_sqlite(shop)
    other = Catalog.from_sqlite(shop, "other")
    with pytest.raises(tabret.Error, match="another catalog"):
        TableIndex.build(cat, HASHING, values=ValueIndex(other))
    index = TableIndex.build(cat, HASHING)
    with pytest.raises(tabret.Error, match=r"tabret index .* --values"):
        build_pipeline("values", index)
    with pytest.raises(tabret.SchemaError, match="no database 'nope'"):
        read_values(cat, shop, "nope", progress=False)


def test_bounds_and_time_budget(shop: Path) -> None:
    cat = Catalog.from_sqlite(shop)
    small = read_values(cat, shop, max_values_per_column=1, max_value_bytes=5, progress=False)
    assert all(len(small.values_of(c)) <= 1 for c in range(cat.num_columns))
    assert all(len(v) <= 5 for c in range(cat.num_columns) for v in small.values_of(c))
    assert [small.values_of(c) for c in range(cat.num_columns) if small.values_of(c)] == [["DHL"]]
    with pytest.warns(UserWarning, match="time budget"):
        none = read_values(cat, shop, time_budget_s=0.0, progress=False)
    assert len(none) == 0


def test_values_through_sqlalchemy_equal_the_native_reader(shop: Path) -> None:
    pytest.importorskip("sqlalchemy")
    cat = Catalog.from_sqlite(shop)
    native = read_values(cat, shop, progress=False)
    through = read_values(cat, f"sqlite:///{shop}", progress=False)
    for c in range(cat.num_columns):
        assert sorted(through.values_of(c)) == sorted(native.values_of(c))


def test_tabret_index_values_and_query_values_pipeline(shop: Path, tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    run = [sys.executable, "-m", "tabret"]
    built = subprocess.run(
        [
            *run,
            "index",
            "sqlite",
            str(shop),
            str(idx),
            "--embedder",
            "hashing",
            "--values",
            "--quiet",
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    assert "values: 8 in" in built.stdout
    query = subprocess.run(
        [*run, "query", str(idx), "the DHL shipments", "--pipeline", "hybrid + values", "--k", "2"],
        capture_output=True,
        text=True,
    )
    assert query.returncode == 0, query.stderr
    assert "shp" in query.stdout
    plain = tmp_path / "plain"
    subprocess.run(
        [*run, "index", "sqlite", str(shop), str(plain), "--embedder", "hashing", "--quiet"],
        check=True,
    )
    refused = subprocess.run(
        [*run, "query", str(plain), "the DHL shipments", "--pipeline", "values"],
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0
    assert "--values" in refused.stderr
    wrong = subprocess.run(
        [*run, "index", "sqlite", str(shop), str(tmp_path / "x"), "--values-time-budget", "1"],
        capture_output=True,
        text=True,
    )
    assert wrong.returncode != 0
    assert "--values-time-budget goes with --values" in wrong.stderr


@pytest.mark.parametrize("budget", [float("inf"), float("nan"), -1.0])
def test_a_time_budget_must_be_finite_and_not_negative(shop: Path, budget: float) -> None:
    cat = Catalog.from_sqlite(shop)
    with pytest.raises(ValueError, match="finite number >= 0"):
        read_values(cat, shop, time_budget_s=budget, progress=False)


def test_values_for_another_catalog_are_refused_when_read(shop: Path) -> None:
    cat = Catalog.from_sqlite(shop)
    other = ValueIndex(Catalog.from_sqlite(shop, "other"))
    with pytest.raises(tabret.Error, match="another catalog"):
        read_values(cat, shop, values=other, progress=False)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--benchmark", "spider2-lite", "--values"], "no cell values for spider2-lite"),
        (["--benchmark", "demo", "--values-cache", "x"], "--values-cache goes with --values"),
        (["--benchmark", "demo", "--pipeline", "hybrid + values"], "add --values"),
        (["--benchmark", "demo", "--values", "--families", "collapse"], "--families collapse"),
    ],
)
def test_eval_refuses_what_values_cannot_do_before_any_work(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from tabret.cli import main

    assert main(["eval", "--embedder", "hashing", "--quiet", *argv]) == 1
    captured = capsys.readouterr()
    assert message in captured.err
    assert "|" not in captured.out  # refused before any evaluation


def test_eval_values_on_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    from tabret.cli import main

    argv = ["eval", "--benchmark", "demo", "--embedder", "hashing", "--quiet", "--values"]
    assert main([*argv, "--pipeline", "hybrid", "hybrid + values", "--k", "5"]) == 0
    out = capsys.readouterr().out
    assert "values: " in out
    assert "| hybrid + values |" in out
