from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import tabret
from tabret import Catalog

sqlalchemy = pytest.importorskip("sqlalchemy")

SQL = """
CREATE TABLE author (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE book (isbn TEXT PRIMARY KEY, title TEXT, author_id INTEGER REFERENCES author(id));
CREATE TABLE review (isbn TEXT, reviewer TEXT, stars INTEGER,
  PRIMARY KEY (isbn, reviewer), FOREIGN KEY (isbn) REFERENCES book(isbn));
"""


@pytest.fixture
def library_db(tmp_path: Path) -> Path:
    path = tmp_path / "library.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(SQL)
    conn.close()
    return path


def test_sqlalchemy_matches_native_sqlite_loader(library_db: Path) -> None:
    native = Catalog.from_sqlite(library_db)
    reflected = Catalog.from_sqlalchemy(f"sqlite:///{library_db}")
    assert reflected.databases[0].name == "library"
    assert [t.name for t in reflected.tables] == [t.name for t in native.tables]
    assert [c.name for c in reflected.columns] == [c.name for c in native.columns]
    assert [(k.from_column, k.to_column) for k in reflected.foreign_keys] == [
        (k.from_column, k.to_column) for k in native.foreign_keys
    ]
    assert [t.primary_key for t in reflected.tables] == [t.primary_key for t in native.tables]


def test_sqlalchemy_engine_and_name(library_db: Path) -> None:
    engine = sqlalchemy.create_engine(f"sqlite:///{library_db}")
    cat = Catalog.from_sqlalchemy(engine, "books")
    assert cat.databases[0].name == "books"
    with pytest.raises(tabret.SchemaError, match="duplicate database 'books'"):
        cat.add_sqlalchemy(engine, "books")
    engine.dispose()
    assert cat.num_tables == 3
