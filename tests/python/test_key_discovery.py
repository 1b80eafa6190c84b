"""Key discovery from Python: inferred foreign keys, their repr, a catalog with them added or
with its declared keys hidden, and a sparse key graph built from them."""

from __future__ import annotations

from pathlib import Path

import pytest

import tabret
from tabret import Catalog, ColumnStats, HashingEmbedder, JoinGraph, TableIndex

SHOP = """
CREATE TABLE customers (id INTEGER, name TEXT);
CREATE TABLE orders (order_id INTEGER, customer_id INTEGER, billing_customer_id INTEGER);
CREATE TABLE order_items (order_id INTEGER, product_code TEXT, qty INTEGER);
CREATE TABLE products (code TEXT, name TEXT);
"""


def shop() -> Catalog:
    cat = Catalog()
    cat.add_ddl_text(SHOP, "shop")
    return cat


def column(cat: Catalog, name: str) -> int:
    db, table, col = name.split(".")
    t = cat.find_table(db, table)
    assert t is not None
    c = cat.find_column(t, col)
    assert c is not None
    return c


def named(keys: list[tabret.InferredKey]) -> set[tuple[str, str, str]]:
    return {(k.from_name, k.to_name, k.rule) for k in keys}


def test_infers_each_rule_with_names_and_repr() -> None:
    cat = shop()
    keys = tabret.infer_foreign_keys(cat)
    assert named(keys) == {
        ("shop.orders.customer_id", "shop.customers.id", "table_name_id"),
        ("shop.orders.billing_customer_id", "shop.customers.id", "role_prefixed"),
        ("shop.order_items.order_id", "shop.orders.order_id", "same_name"),
        ("shop.order_items.product_code", "shop.products.code", "table_name_id"),
    }
    k = next(k for k in keys if k.rule == "same_name")
    assert k.from_column == column(cat, "shop.order_items.order_id")
    assert k.to_column == column(cat, "shop.orders.order_id")
    assert k.confidence == pytest.approx(0.9)
    assert repr(k) == (
        "InferredKey(shop.order_items.order_id -> shop.orders.order_id, same_name, confidence 0.90)"
    )
    assert len(set(keys)) == len(keys)
    assert tabret.infer_foreign_keys(cat, role_prefixed=False) == [
        k for k in keys if k.rule != "role_prefixed"
    ]


def test_with_foreign_keys_and_without_keys() -> None:
    cat = shop()
    keys = tabret.infer_foreign_keys(cat)
    added = tabret.with_foreign_keys(cat, keys)
    assert isinstance(added, Catalog)
    assert cat.num_foreign_keys == 0
    assert [(f.from_column, f.to_column) for f in added.foreign_keys] == [
        (k.from_column, k.to_column) for k in keys
    ]
    assert tabret.with_foreign_keys(added, keys + keys).num_foreign_keys == len(keys)
    hidden = tabret.catalog_without_keys(added)
    assert hidden.num_foreign_keys == 0
    assert hidden.num_columns == cat.num_columns
    assert hidden == cat


def test_primary_keys_kept_or_hidden() -> None:
    cat = Catalog()
    cat.add_ddl_text(
        """
        CREATE TABLE rooms (RoomCode TEXT PRIMARY KEY, room_id TEXT);
        CREATE TABLE bookings (roomcode TEXT, room_id TEXT,
                               FOREIGN KEY (roomcode) REFERENCES rooms(RoomCode));
        """,
        "inn",
    )
    kept = tabret.catalog_without_keys(cat, keep_primary_keys=True)
    assert kept.num_foreign_keys == 0
    assert kept.table(0).primary_key == cat.table(0).primary_key != []
    assert named(tabret.infer_foreign_keys(kept)) == {
        ("inn.bookings.roomcode", "inn.rooms.RoomCode", "same_name")
    }
    hidden = tabret.catalog_without_keys(cat)
    assert hidden.table(0).primary_key == []
    assert len(tabret.infer_foreign_keys(hidden)) == 2
    assert tabret.infer_foreign_keys(kept, use_primary_keys=False) == tabret.infer_foreign_keys(
        hidden
    )


def test_values_veto_and_bad_statistics() -> None:
    cat = shop()
    stats = ColumnStats(cat.num_columns)
    stats.set(column(cat, "shop.orders.order_id"), 1.0, ["1", "2", "3"])
    stats.set(column(cat, "shop.order_items.order_id"), 0.5, ["1", "9"])
    keys = tabret.infer_foreign_keys(cat, stats, min_inclusion=0.9)
    assert not any(k.from_name == "shop.order_items.order_id" for k in keys)
    lenient = tabret.infer_foreign_keys(cat, stats, min_inclusion=0.5)
    k = next(k for k in lenient if k.from_name == "shop.order_items.order_id")
    assert k.confidence == pytest.approx(0.95)
    default = tabret.infer_foreign_keys(cat, stats)  # values may be samples: no veto
    assert k in default
    with pytest.raises(tabret.Error, match="statistics for 20 columns, but the catalog has"):
        tabret.infer_foreign_keys(cat, ColumnStats(20))
    with pytest.raises(tabret.Error, match="min_inclusion"):
        tabret.infer_foreign_keys(cat, min_inclusion=2.0)
    with pytest.raises(TypeError):
        tabret.infer_foreign_keys(cat, "stats")  # type: ignore[arg-type]


def test_sparse_key_graph() -> None:
    cat = tabret.with_foreign_keys(shop(), tabret.infer_foreign_keys(shop()))
    index = TableIndex.build(cat, HashingEmbedder(dim=64))
    sparse = JoinGraph.build(index, infer_compatibility=False, progress=False)
    assert len(sparse) == 3
    assert all(e.declared and e.weight == 1.0 for e in sparse.edges)
    dense = JoinGraph.build(index, progress=False)
    assert len(dense) > len(sparse)
    assert JoinGraph.build.__kwdefaults__ is not None
    assert JoinGraph.build.__kwdefaults__["infer_compatibility"] is True


def test_spider_database(data_dir: Path) -> None:
    cat = Catalog.from_spider_json(data_dir / "spider/tables.json")
    declared = {(f.from_column, f.to_column) for f in cat.foreign_keys}
    hidden = tabret.catalog_without_keys(cat)
    keys = tabret.infer_foreign_keys(hidden)
    found = {(k.from_column, k.to_column) for k in keys}
    assert len(found & declared) / len(found) > 0.8
    assert len(found & declared) / len(declared) > 0.5

    def database(c: int) -> int:
        return cat.table(cat.column(c).table).database

    assert all(database(k.from_column) == database(k.to_column) for k in keys)


def _eval(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from tabret.cli import main

    argv = ["eval", "--benchmark", "demo", "--embedder", "hashing", "--quiet", "--k", "3"]
    code = main([*argv, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_eval_keys_and_key_graph(capsys: pytest.CaptureFixture[str]) -> None:
    from tabret.datasets import demo_catalog

    declared = demo_catalog()
    inferred = tabret.infer_foreign_keys(tabret.catalog_without_keys(declared))
    both = tabret.with_foreign_keys(declared, tabret.infer_foreign_keys(declared))
    join = ["--method", "greedy-join", "--no-decompositions"]
    for keys, n in [
        ("declared", declared.num_foreign_keys),
        ("inferred", len(inferred)),
        ("both", both.num_foreign_keys),
    ]:
        for graph in ["compatibility", "keys"]:
            code, out, _ = _eval(capsys, *join, "--keys", keys, "--join-graph", graph)
            assert code == 0
            assert "| demo | hashing" in out
            assert f" {n} foreign keys)" in out  # the catalog the methods ran on
    assert len(inferred) not in (0, declared.num_foreign_keys)
    # The demo has no recorded decompositions: greedy-join says so and runs without, as
    # `tabret query` does without an LLM.
    code, _, err = _eval(capsys, "--method", "greedy-join")
    assert code == 0
    assert "each question is its own only sub-query" in err


SHARDED = """
CREATE TABLE customers (id INTEGER, name TEXT);
CREATE TABLE orders_2023 (order_id INTEGER, customer_id INTEGER, total REAL);
CREATE TABLE orders_2024 (order_id INTEGER, customer_id INTEGER, total REAL);
"""


def test_cli_index_with_inferred_keys_families_and_a_key_graph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tabret.cli import main

    ddl = tmp_path / "shop.sql"
    ddl.write_text(SHARDED)
    out = tmp_path / "idx"
    argv = ["index", "ddl", str(ddl), str(out), "--embedder", "hashing", "--quiet"]
    argv += ["--keys", "inferred", "--families", "collapse", "--join-graph", "keys"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "table families: 3 tables -> 2 (1 family of 2 tables)" in printed
    index = TableIndex.load(out)
    cat = index.catalog
    assert [t.name for t in cat.tables] == ["customers", "orders_*"]
    assert [(k.from_name, k.to_name) for k in cat.foreign_keys] == [
        ("shop.orders_*.customer_id", "shop.customers.id")
    ]
    graph = JoinGraph.load(out, index)
    assert [(e.a, e.b, e.declared) for e in graph.edges] == [(0, 1, True)]
    # The bare flag still builds the default (dense) graph; --keys declared adds none.
    plain = tmp_path / "plain"
    argv = ["index", "ddl", str(ddl), str(plain), "--embedder", "hashing", "--quiet"]
    assert main([*argv, "--join-graph"]) == 0
    assert TableIndex.load(plain).catalog.num_foreign_keys == 0
    assert "join graph:" in capsys.readouterr().out
