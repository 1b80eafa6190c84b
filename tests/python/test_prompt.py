"""Schema text for a text-to-SQL prompt: constraints in the catalog model, descriptions and
sample values in the DDL, and ``Retrieval.to_prompt`` (issue 20, item 2)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

import tabret
from tabret import Catalog, DenseRetriever, HashingEmbedder, TableIndex
from tabret.join import column_stats_from_database

sqlalchemy = pytest.importorskip("sqlalchemy")

SHOP = """
CREATE TABLE customer (
  id INTEGER PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  status TEXT DEFAULT 'active',
  city TEXT
);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customer (id),
  total REAL,
  note TEXT
);
CREATE UNIQUE INDEX orders_note ON orders (note);
INSERT INTO customer VALUES (1, 'ada@x.org', 'active', 'Paris'), (2, 'bo@y.com', 'gone', 'Oslo'),
  (3, 'cy@z.net', 'active', 'Paris');
INSERT INTO orders VALUES (1, 1, 9.5, 'first'), (2, 3, 20, 'it''s a
two-line note');
"""


@pytest.fixture
def shop_db(tmp_path: Path) -> Path:
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(SHOP)
    conn.close()
    return path


def _constraints(cat: Catalog) -> list[tuple[str, bool, bool, str]]:
    return [(c.name, c.not_null, c.unique, c.default) for c in cat.columns]


def test_native_and_sqlalchemy_loaders_read_the_same_constraints(shop_db: Path) -> None:
    native = Catalog.from_sqlite(shop_db)
    reflected = Catalog.from_sqlalchemy(f"sqlite:///{shop_db}", "shop")
    want = [
        ("id", False, False, ""),
        ("email", True, True, ""),
        ("status", False, False, "'active'"),
        ("city", False, False, ""),
        ("id", False, False, ""),
        ("customer_id", True, False, ""),
        ("total", False, False, ""),
        ("note", False, True, ""),  # a unique index on one column
    ]
    assert _constraints(native) == want
    assert _constraints(reflected) == want


def test_constraints_survive_catalog_json(shop_db: Path, tmp_path: Path) -> None:
    cat = Catalog.from_sqlite(shop_db)
    cat.save_json(tmp_path / "shop.json")
    again = Catalog.from_json(tmp_path / "shop.json")
    assert _constraints(again) == _constraints(cat)
    assert again == cat
    cat.set_constraints(0, not_null=True)
    assert again != cat  # equality sees constraints


def test_ddl_loader_reads_constraints_and_writes_them_back() -> None:
    cat = Catalog()
    cat.add_ddl_text(
        "CREATE TABLE t (a int NOT NULL DEFAULT 0, b text UNIQUE COMMENT 'the b', c int);",
        "db",
    )
    assert _constraints(cat) == [
        ("a", True, False, "0"),
        ("b", False, True, ""),
        ("c", False, False, ""),
    ]
    ddl = cat.serialize_table(0, format="ddl")
    assert "  a int NOT NULL DEFAULT 0," in ddl
    assert "  b text UNIQUE,  -- the b" in ddl
    # What tabret writes reads back with the same constraints (a `--` comment is not a
    # COMMENT: the description stays behind).
    again = Catalog()
    again.add_ddl_text(ddl, "db")
    assert _constraints(again) == _constraints(cat)


def _retrieval(cat: Catalog, question: str, k: int) -> tabret.Retrieval:
    index = TableIndex.build(cat, HashingEmbedder())
    return DenseRetriever(index).retrieve(question, k)


def test_to_prompt_has_ddl_descriptions_and_samples(shop_db: Path) -> None:
    cat = Catalog.from_sqlite(shop_db)
    stats = column_stats_from_database(cat, f"sqlite:///{shop_db}", "shop")
    res = _retrieval(cat, "total of the orders of customers in Paris", 2)
    assert {t.name for t in res.tables} == {"shop.customer", "shop.orders"}

    plain = res.to_prompt(cat)
    assert plain == "\n\n".join(cat.serialize_table(t.id, format="ddl") for t in res.tables)
    assert "email TEXT NOT NULL UNIQUE," in plain
    assert "FOREIGN KEY (customer_id) REFERENCES customer (id)" in plain
    assert "e.g." not in plain

    sampled = res.to_prompt(cat, samples=2, stats=stats)
    comments = dict(re.findall(r"^  (\w+) .*?  -- e\.g\. (.*)$", sampled, re.MULTILINE))
    # DISTINCT gives no order: compare the values as sets.
    assert set(comments["city"].split(", ")) == {"'Paris'", "'Oslo'"}
    assert set(comments["total"].split(", ")) == {"9.5", "20.0"}
    assert set(comments["email"].split(", ")) < {"'ada@x.org'", "'bo@y.com'", "'cy@z.net'"}
    # A line break inside a value stays inside its comment; a quote is doubled.
    assert "'it''s a two-line note'" in comments["note"]
    # Every line of the prompt is still SQL: the statements parse as the same schema.
    reread = Catalog()
    reread.add_ddl_text(sampled, "shop")
    assert _constraints(reread) == [
        _constraints(cat)[c] for t in res.tables for c in cat.table(t.id).columns
    ]

    assert res.to_prompt(cat, format="signature") == "\n\n".join(
        cat.serialize_table(t.id, format="signature", names="original") for t in res.tables
    )


def test_to_prompt_cuts_where_the_method_cut_and_names_databases(shop_db: Path) -> None:
    cat = Catalog.from_sqlite(shop_db)
    cat.add_ddl_text("CREATE TABLE supplier (id int, name text);", "stock")
    res = _retrieval(cat, "customer email and supplier name", 3)
    assert len({cat.table(t.id).database for t in res.tables}) == 2
    prompt = res.to_prompt(cat)
    assert prompt.startswith("-- database: ")
    assert prompt.count("-- database: ") >= 2
    cut = tabret.Retrieval(res.question, res.tables, cut=1)
    assert cut.to_prompt(cat) == cat.serialize_table(res.tables[0].id, format="ddl")


def test_to_prompt_bad_arguments_say_what_to_do(shop_db: Path) -> None:
    cat = Catalog.from_sqlite(shop_db)
    stats = column_stats_from_database(cat, f"sqlite:///{shop_db}", "shop")
    res = _retrieval(cat, "customers", 1)
    with pytest.raises(ValueError, match=r"samples=3 needs stats=.*column_stats_from_database"):
        res.to_prompt(cat, samples=3)
    with pytest.raises(ValueError, match=r"samples=3 needs format='ddl'.*'signature'"):
        res.to_prompt(cat, format="signature", samples=3, stats=stats)
    with pytest.raises(TypeError, match=r"stats must be a tabret\.ColumnStats, got dict"):
        res.to_prompt(cat, samples=1, stats={})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        res.to_prompt(cat, samples=-1, stats=stats)


def test_adapters_write_the_same_text_as_to_prompt(shop_db: Path) -> None:
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    from tabret.integrations.langchain import TabretRetriever as LangChainRetriever
    from tabret.integrations.llama_index import TabretRetriever as LlamaIndexRetriever

    cat = Catalog.from_sqlite(shop_db)
    stats = column_stats_from_database(cat, f"sqlite:///{shop_db}", "shop")
    retriever = DenseRetriever(TableIndex.build(cat, HashingEmbedder()))
    question = "total of the orders of customers in Paris"
    want = retriever.retrieve(question, 2).to_prompt(cat, samples=1, stats=stats)
    docs = LangChainRetriever(retriever=retriever, k=2, samples=1, stats=stats).invoke(question)
    assert "\n\n".join(d.page_content for d in docs) == want
    batch = LangChainRetriever(retriever=retriever, k=2, samples=1, stats=stats).batch([question])
    assert "\n\n".join(d.page_content for d in batch[0]) == want
    nodes = LlamaIndexRetriever(retriever, k=2, samples=1, stats=stats).retrieve(question)
    assert "\n\n".join(n.node.get_content() for n in nodes) == want
    with pytest.raises(ValueError, match="samples must be >= 0"):
        LlamaIndexRetriever(retriever, samples=-1)
