"""Table families (issue 22, item 3): date- or number-sharded tables with the same columns
collapsed into one table for retrieval, ids mapped both ways, benchmark gold remapped, the
members named in the prompt text, and `tabret eval --families collapse`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tabret import Catalog
from tabret.benchmarks import Benchmark, BenchmarkQuestion, database_benchmarks
from tabret.cli import main
from tabret.datasets import demo_catalog
from tabret.eval import evaluate
from tabret.families import (
    Families,
    collapse_benchmark,
    collapse_families,
    find_families,
    name_pattern,
)
from tabret.results import Retrieval, ScoredTable

SALES = ("sales_20200101", "sales_20200102", "sales_20200103")


def _shop() -> Catalog:
    """shop: three sales shards (one FK each to customers), events_1/events_2 with different
    columns, t_1…t_4 in two column groups, log-7/log-8; other: one more sales shard."""
    cat = Catalog()
    shop = cat.add_database("shop", "a shop")
    customers = cat.add_table(shop, "customers")
    cust_id = cat.add_column(customers, "id", "INT")
    cat.add_column(customers, "name", "TEXT")
    cat.set_primary_key(customers, [cust_id])
    for i, name in enumerate(SALES):
        t = cat.add_table(shop, name, description="daily sales" if i == 1 else "")
        sale_id = cat.add_column(t, "id", "INT", description="sale id" if i == 2 else "")
        cat.set_constraints(sale_id, not_null=True)
        cat.add_column(t, "amount", "REAL" if i == 0 else "FLOAT", "sale amount")
        cat.add_foreign_key(cat.add_column(t, "customer_id", "INT"), cust_id)
        cat.set_primary_key(t, [sale_id])
    for name, column in [("events_1", "a"), ("events_2", "b")]:
        cat.add_column(cat.add_table(shop, name), column)
    for name, column in [("t_1", "x"), ("t_2", "x"), ("t_3", "y"), ("t_4", "y")]:
        cat.add_column(cat.add_table(shop, name), column)
    for name in ["log-7", "log-8"]:
        cat.add_column(cat.add_table(shop, name), "line")
    other = cat.add_database("other")
    t = cat.add_table(other, "sales_20200104")
    for column in ["id", "amount", "customer_id"]:
        cat.add_column(t, column)
    return cat


def _id(cat: Catalog, db: str, name: str) -> int:
    t = cat.find_table(db, name)
    assert t is not None, name
    return t


def _col(cat: Catalog, table: int, name: str) -> int:
    c = cat.find_column(table, name)
    assert c is not None, name
    return c


@pytest.fixture
def fam() -> Families:
    return collapse_families(_shop())


@pytest.mark.parametrize(
    ("name", "pattern"),
    [
        ("ga_sessions_20160801", "ga_sessions_*"),
        ("gsod1929", "gsod*"),
        ("log-7", "log-*"),
        ("1990_q1", "1990_q*"),
        ("project.dataset.storms_1950", "project.dataset.storms_*"),
        ("customers", None),
        ("2019", None),
        ("_12", None),
    ],
)
def test_name_pattern(name: str, pattern: str | None) -> None:
    assert name_pattern(name) == pattern


def test_shards_with_the_same_columns_collapse() -> None:
    cat = _shop()
    found = find_families(cat)
    names = {f.name: [cat.table(t).name for t in f.members] for f in found}
    assert names == {
        "sales_*": list(SALES),  # not other's sales_20200104: another database
        "t_*": ["t_1", "t_2"],
        "t_*#2": ["t_3", "t_4"],  # same pattern, other columns: a name of its own
        "log-*": ["log-7", "log-8"],
    }  # events_1 and events_2 differ in columns; customers has no digit suffix
    assert [f.members[0] for f in found] == sorted(f.members[0] for f in found)
    assert not find_families(cat, min_members=4)
    with pytest.raises(ValueError, match="min_members"):
        find_families(cat, min_members=1)


def test_collapsed_catalog(fam: Families) -> None:
    old, cat = fam.original, fam.catalog
    assert (old.num_tables, cat.num_tables) == (13, 8)
    assert fam.num_families == 4
    assert fam.summary() == "13 tables -> 8 (4 families of 9 tables)"
    assert [t.name for t in cat.tables] == [
        "customers",
        "sales_*",
        "events_1",
        "events_2",
        "t_*",
        "t_*#2",
        "log-*",
        "sales_20200104",
    ]
    assert cat.database(0).description == "a shop"
    sales = _id(cat, "shop", "sales_*")
    table = cat.table(sales)
    assert table.nl_name == "sales"
    assert table.description == (
        "3 tables with these columns, sales_20200101 … sales_20200103. daily sales"
    )
    columns = [cat.column(c) for c in table.columns]
    assert [(c.name, c.type, c.nl_name) for c in columns] == [
        ("id", "INT", "id"),
        ("amount", "REAL", "sale amount"),  # the first member's type
        ("customer_id", "INT", "customer id"),
    ]
    assert columns[0].description == "sale id"  # the first non-empty among the members
    assert columns[0].not_null
    assert table.primary_key == [table.columns[0]]
    # the three shards' foreign keys are one
    assert [(fk.from_name, fk.to_name) for fk in cat.foreign_keys] == [
        ("shop.sales_*.customer_id", "shop.customers.id")
    ]
    # a table in no family is copied as it is
    assert cat.table(0).primary_key == [0]
    assert cat.table(_id(cat, "shop", "log-*")).nl_name == "log"


def test_a_catalog_without_families_is_copied_as_it_is() -> None:
    cat = demo_catalog()
    fk = cat.foreign_keys[0]
    cat.add_foreign_key(fk.from_column, fk.to_column)  # a duplicate, as Spider has two
    fam = collapse_families(cat)
    assert fam.num_families == 0
    assert fam.catalog == cat
    assert fam.catalog.num_foreign_keys == cat.num_foreign_keys


def test_ids_both_ways(fam: Families) -> None:
    old, cat = fam.original, fam.catalog
    sales = _id(cat, "shop", "sales_*")
    shards = [_id(old, "shop", n) for n in SALES]
    assert fam.members[sales] == shards
    assert all(fam.family_of[t] == sales for t in shards)
    assert fam.is_family(sales)
    assert not fam.is_family(0)
    assert fam.members[0] == [0]
    assert len(fam.family_of) == old.num_tables
    assert len(fam.members) == cat.num_tables
    everything = list(range(cat.num_tables))
    assert fam.expand(everything) == list(range(old.num_tables))
    assert fam.collapse_ids(fam.expand(everything)) == everything
    assert fam.expand([sales, 0]) == [*shards, 0]
    assert fam.collapse_ids([shards[2], 0, shards[0]]) == [sales, 0]
    # columns by name, both ways
    amount = _col(cat, sales, "amount")
    olds = [_col(old, t, "amount") for t in shards]
    assert fam.column_members[amount] == olds
    assert [fam.column_of[c] for c in olds] == [amount] * 3
    assert fam.expand_columns([amount]) == olds
    assert fam.collapse_column_ids(olds) == [amount]
    assert fam.collapse_column_ids(fam.expand_columns(range(cat.num_columns))) == list(
        range(cat.num_columns)
    )


def test_benchmark_gold_is_remapped(fam: Families) -> None:
    old, cat = fam.original, fam.catalog
    shards = [_id(old, "shop", n) for n in SALES]
    t = [_id(old, "shop", f"t_{i}") for i in range(1, 5)]
    customers = _id(old, "shop", "customers")
    amounts = [_col(old, s, "amount") for s in shards]
    questions = [
        # three shards read by name, and their amount columns: one gold table, one column
        BenchmarkQuestion(
            "by-name", "shop", "q", (shards[0], customers, shards[2]), tuple(amounts)
        ),
        # a wildcard over the sales shards: inside one family, so a plain gold table
        BenchmarkQuestion("wildcard", "shop", "q", (shards[0],), families=(tuple(shards),)),
        # a wildcard over t_1 … t_4: two families, either satisfies
        BenchmarkQuestion("across", "shop", "q", (t[0], customers), families=(tuple(t),)),
    ]
    bench = Benchmark("b", old, questions, "mine")
    collapsed = collapse_benchmark(bench, fam)
    assert collapsed.catalog is cat
    assert collapsed.source == f"mine; table families collapsed: {fam.summary()}"
    sales, t_a, t_b = (_id(cat, "shop", n) for n in ["sales_*", "t_*", "t_*#2"])
    by_name, wildcard, across = collapsed.questions
    assert by_name.gold_tables == (sales, 0)
    assert by_name.gold_columns == (_col(cat, sales, "amount"),)
    assert (wildcard.gold_tables, wildcard.families) == ((sales,), ())
    assert (across.gold_tables, across.families) == ((t_a, 0), ((t_a, t_b),))
    assert collapse_benchmark(bench).questions == collapsed.questions  # families by default
    # scored with the family rule: t_*#2 satisfies the t_1 … t_4 item
    ranking = {"q": [t_b, 0]}

    def retrieve(qs: list[str], k: int) -> list[Retrieval]:
        return [Retrieval(q, [ScoredTable(i, "", 1.0) for i in ranking[q]]) for q in qs]

    only_across = Benchmark("b", cat, [across], "")
    assert evaluate(retrieve, only_across, (2,), progress=False).complete_recall == {2: 100.0}
    # per database after collapsing: each part has its families collapsed
    per_db = database_benchmarks(collapsed)
    assert [p.catalog.num_tables for p in per_db] == [7]
    with pytest.raises(ValueError, match="another catalog"):
        collapse_benchmark(bench, collapse_families(Catalog()))


def test_prompt_names_the_members(fam: Families) -> None:
    cat = fam.catalog
    sales = _id(cat, "shop", "sales_*")
    res = Retrieval("q", [ScoredTable(sales, "", 1.0), ScoredTable(0, "", 0.5)])
    text = res.to_prompt(cat, families=fam)
    first, second = text.split("\n\n")
    comment, ddl = first.split("\n", 1)
    assert comment == (
        "-- sales_* stands for 3 tables with these columns (query them by name): "
        "sales_20200101, sales_20200102, sales_20200103"
    )
    assert ddl == cat.serialize_table(sales, format="ddl", names="original")
    assert second == cat.serialize_table(0, format="ddl", names="original")  # no family
    assert res.to_prompt(cat) == text.split("\n", 1)[1]  # without families=: no comment
    assert fam.comment(sales, max_listed=2) == (
        "-- sales_* stands for 3 tables with these columns (query them by name): "
        "sales_20200101, …, sales_20200103"
    )
    assert fam.comment(0) == ""
    with pytest.raises(ValueError, match="families="):
        res.to_prompt(fam.original, families=fam)


def test_cli_eval_families_with_own_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = tmp_path / "shop.json"
    _shop().save_json(catalog)
    questions = tmp_path / "mine.jsonl"
    lines = [
        {"question": "sales amount per customer", "gold_tables": ["shop.sales_20200102"]},
        {"question": "log lines", "gold_tables": ["shop.log-7", "shop.log-8"]},
    ]
    questions.write_text("\n".join(json.dumps(q) for q in lines) + "\n", encoding="utf-8")
    argv = ["eval", "--questions", str(questions), "--catalog", str(catalog)]
    argv += ["--embedder", "hashing", "--quiet", "--k", "1", "3", "--method", "bm25"]
    assert main([*argv, "--families", "collapse"]) == 0
    out = capsys.readouterr().out
    assert "table families collapsed: 13 tables -> 8 (4 families of 9 tables)" in out
    assert "Catalog(2 databases, 8 tables" in out
    assert main([*argv, "--families", "off"]) == 0
    out = capsys.readouterr().out
    assert "families collapsed" not in out
    assert "Catalog(2 databases, 13 tables" in out


def test_spider2_lite_families(data_dir: Path) -> None:
    pytest.importorskip("sqlglot")
    from tabret.benchmarks import spider2_lite

    bench = spider2_lite(data_dir)
    fam = collapse_families(bench.catalog)
    assert fam.summary() == "8,255 tables -> 5,506 (265 families of 3,014 tables)"
    collapsed = collapse_benchmark(bench, fam)
    assert sum(len(q.gold_tables) for q in bench.questions) == 529
    assert sum(len(q.gold_tables) for q in collapsed.questions) == 509
    by_id = {q.id: q for q in collapsed.questions}
    cat = fam.catalog
    # bq419 reads 16 storms_YYYY shards by name: one gold table now
    (storms,) = by_id["bq419"].gold_tables
    assert cat.table(storms).name == "bigquery-public-data.noaa_historic_severe_storms.storms_*"
    assert "storms_1950" in fam.comment(storms)
    # bq010 reads ga_sessions_201707*: 31 shards of one family, so a plain gold table
    assert by_id["bq010"].families == ()
    ga = by_id["bq010"].gold_tables[0]
    assert cat.table(ga).nl_name.endswith("ga sessions")
    # ga_sessions_* (all 366 days) spans two families: 32 days have one column more
    assert [cat.table(t).name.rsplit(".", 1)[1] for t in by_id["bq001"].families[0]] == [
        "ga_sessions_*",
        "ga_sessions_*#2",
    ]
