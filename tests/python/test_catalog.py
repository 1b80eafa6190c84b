from __future__ import annotations

from pathlib import Path

import pytest

import tabret
from tabret import Catalog


def shop() -> Catalog:
    cat = Catalog()
    db = cat.add_database("shop", "a small shop")
    customer = cat.add_table(db, "Customer")
    cid = cat.add_column(customer, "customer_id", "integer")
    cat.add_column(customer, "FullName", "text", description="first and last name")
    cat.set_primary_key(customer, [cid])
    order = cat.add_table(db, "order_header", nl_name="order")
    oid = cat.add_column(order, "order_id", "integer")
    ocust = cat.add_column(order, "customer_id", "integer")
    cat.set_primary_key(order, [oid])
    cat.add_foreign_key(ocust, cid)
    return cat


def test_ids_records_and_lookup() -> None:
    cat = shop()
    assert (cat.num_databases, cat.num_tables, cat.num_columns, cat.num_foreign_keys) == (
        1,
        2,
        4,
        1,
    )
    assert cat.table(1).columns == [2, 3]
    assert cat.column(1).nl_name == "full name"
    assert cat.column(1).description == "first and last name"
    assert cat.table(1).nl_name == "order"
    assert cat.find_table("SHOP", "customer") == 0
    assert cat.find_table("shop", "missing") is None
    assert cat.find_column(1, "CUSTOMER_ID") == 3
    fk = cat.foreign_keys[0]
    assert (fk.from_column, fk.to_column) == (3, 0)
    assert (fk.from_name, fk.to_name) == (
        "shop.order_header.customer_id",
        "shop.Customer.customer_id",
    )
    assert repr(fk) == (
        "ForeignKey(shop.order_header.customer_id -> shop.Customer.customer_id, columns 3 -> 0)"
    )
    assert cat.qualified_name(1) == "shop.order_header"
    assert cat.qualified_column_name(1) == "shop.Customer.FullName"
    assert repr(cat) == "Catalog(1 databases, 2 tables, 4 columns, 1 foreign keys)"


def test_serialisations() -> None:
    cat = shop()
    assert cat.serialize_table(1) == "shop.order(order id, customer id)"
    assert cat.serialize_table(1, "words", "original") == "shop order_header order_id customer_id"
    assert cat.serialize_column(1) == "shop.customer.full name"
    assert cat.serialize_table(1, "ddl").endswith(
        "FOREIGN KEY (customer_id) REFERENCES Customer (customer_id)\n);"
    )
    assert cat.database_ddl(0).count("CREATE TABLE") == 2
    with pytest.raises(ValueError, match="format must be"):
        cat.serialize_table(0, "xml")  # type: ignore[arg-type]


def test_building_errors_are_typed_and_named() -> None:
    cat = shop()
    with pytest.raises(tabret.SchemaError, match="duplicate table 'CUSTOMER' in database 'shop'"):
        cat.add_table(0, "CUSTOMER")
    with pytest.raises(tabret.SchemaError, match="table id 9 out of range"):
        cat.table(9)
    with pytest.raises(ValueError, match="duplicate column"):  # SchemaError is a ValueError
        cat.add_column(0, "fullname")
    assert issubclass(tabret.FileError, OSError)
    assert issubclass(tabret.ParseError, tabret.Error)


def test_copy_and_equality() -> None:
    cat = shop()
    copy = Catalog(cat)
    assert copy == cat
    copy.add_database("other")
    assert copy != cat


def test_described_format_in_tables_columns_and_saved_indexes(tmp_path: Path) -> None:
    """`described` writes the signature, then the table's and columns' descriptions; column
    vectors then embed `db.table.column: description`; a saved index keeps the format."""
    import numpy as np

    from tabret.datasets import demo_catalog
    from tabret.index import TableIndex

    cat = demo_catalog()
    ward = cat.find_table("hospital", "ward")
    assert ward is not None
    text = cat.serialize_table(ward, format="described")
    assert text.startswith(f"{cat.serialize_table(ward)} -- {cat.table(ward).description}")
    cat.add_column(ward, "wing", "TEXT", description="North or south wing.")
    wing = cat.find_column(ward, "wing")
    assert wing is not None
    assert cat.serialize_table(ward, format="described").endswith("wing: North or south wing.")
    assert cat.serialize_column(wing, description=True) == (
        "hospital.hospital ward.wing: North or south wing."
    )
    embedder = tabret.HashingEmbedder()
    index = TableIndex.build(cat, embedder, format="described", progress=False)
    assert index.core.format == "described"
    assert index.table_text(ward) == cat.serialize_table(ward, format="described")
    # wing came after later tables' columns: the index numbers it as its saved catalog does
    in_index = index.catalog.find_column(ward, "wing")
    assert in_index is not None
    assert in_index != wing
    assert index.catalog.qualified_column_name(in_index) == cat.qualified_column_name(wing)
    stored = np.asarray(index.core.column_vectors)[in_index]
    described = cat.serialize_column(wing, description=True)
    for text, same in [(described, True), (cat.serialize_column(wing), False)]:
        v = np.asarray(embedder([text]))[0]
        cosine = float(stored @ v) / float(np.linalg.norm(stored) * np.linalg.norm(v))
        assert (cosine > 0.999) == same, text
    index.save(tmp_path / "idx")
    loaded = TableIndex.load(tmp_path / "idx")
    assert loaded.core.format == "described"
    assert loaded.catalog.find_column(ward, "wing") == in_index
    assert np.array_equal(loaded.core.column_vectors, index.core.column_vectors)


def test_related_format_names_neighbours_and_survives_a_save(tmp_path: Path) -> None:
    """`related` writes the signature, then the tables the table's keys reference and the
    tables that reference it; an index built with it embeds that text and keeps the format."""
    from tabret.index import TableIndex

    cat = Catalog()
    db = cat.add_database("shop")
    customer = cat.add_table(db, "customer")
    cid = cat.add_column(customer, "id", "INT")
    order = cat.add_table(db, "orders")
    cat.add_foreign_key(cat.add_column(order, "customer_id", "INT"), cid)
    cat.add_table(db, "note")
    assert cat.serialize_table(customer, format="related").endswith(" referenced by orders")
    assert cat.serialize_table(order, format="related").endswith(" references customer")
    assert cat.serialize_table(2, format="related") == cat.serialize_table(2)
    index = TableIndex.build(cat, tabret.HashingEmbedder(), progress=False)  # the default
    assert index.core.format == "related"
    assert index.table_text(customer) == cat.serialize_table(customer, format="related")
    index.save(tmp_path / "idx")
    loaded = TableIndex.load(tmp_path / "idx")
    assert loaded.core.format == "related"
    assert loaded.table_text(order) == cat.serialize_table(order, format="related")


def test_a_signature_index_keeps_its_text_after_the_default_changed(tmp_path: Path) -> None:
    """An index built with the earlier default (``signature``) loads with its own format: its
    table texts stay the signature and it answers exactly as before it was saved."""
    from tabret import DenseRetriever
    from tabret.index import TableIndex

    cat = shop()
    index = TableIndex.build(cat, tabret.HashingEmbedder(), format="signature", progress=False)
    index.save(tmp_path / "idx")
    loaded = TableIndex.load(tmp_path / "idx")
    assert loaded.core.format == "signature"
    related = [
        t
        for t in range(cat.num_tables)
        if cat.serialize_table(t, format="related") != cat.serialize_table(t)
    ]
    assert related  # the catalog has keys, so the two formats differ somewhere
    assert all(loaded.table_text(t) == cat.serialize_table(t) for t in range(cat.num_tables))

    def top(i: TableIndex) -> list[tuple[int, float]]:
        return [
            (t.id, t.score) for t in DenseRetriever(i).retrieve("orders of a customer", 3).tables
        ]

    assert top(loaded) == top(index)
