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


def test_column_stats_from_sqlite_feed_the_join_graph(library_db: Path) -> None:
    from tabret.join import JoinGraph, column_stats_from_database

    with sqlite3.connect(library_db) as conn:
        conn.executemany("INSERT INTO author VALUES (?, ?)", [(1, "Ann"), (2, "Bob"), (3, "Cid")])
        conn.executemany(
            "INSERT INTO book VALUES (?, ?, ?)",
            [("a", "Dune", 1), ("b", "Emma", 1), ("c", "Faust", 2), ("d", "Gigi", 2)],
        )
        # No declared key: only values tell that sale.isbn joins book.isbn.
        conn.execute("CREATE TABLE sale (isbn TEXT, price INTEGER)")
        conn.executemany("INSERT INTO sale VALUES (?, ?)", [("a", 10), ("c", 12), ("a", 9)])
    conn.close()
    cat = Catalog.from_sqlite(library_db)
    stats = column_stats_from_database(cat, f"sqlite:///{library_db}", "library", sample_rows=None)
    author_id = cat.find_column(cat.find_table("library", "book") or 0, "author_id")
    assert author_id is not None
    assert stats.uniqueness(author_id) == 0.5
    assert sorted(stats.values(author_id)) == ["1", "2"]
    # sample_rows bounds the rows counted: the first two books share author 1.
    first = column_stats_from_database(cat, f"sqlite:///{library_db}", "library", sample_rows=2)
    assert first.uniqueness(author_id) == 0.5
    assert first.values(author_id) == ["1"]
    with pytest.raises(tabret.SchemaError, match="no database 'nope'"):
        column_stats_from_database(cat, f"sqlite:///{library_db}", "nope")
    with pytest.raises(ValueError, match="max_values"):
        column_stats_from_database(cat, f"sqlite:///{library_db}", "library", max_values=-1)
    # The values reach join inference: book.isbn and sale.isbn share values.
    index = tabret.TableIndex.build(cat, tabret.HashingEmbedder(), progress=False)
    plain = JoinGraph.build(index)
    valued = JoinGraph.build(index, stats)
    assert stats.known == 7  # review is empty: its 3 columns stay unknown
    book, sale = cat.find_table("library", "book"), cat.find_table("library", "sale")
    assert book is not None
    assert sale is not None
    assert valued.weight(book, sale) > plain.weight(book, sale)


def test_cli_index_reads_column_stats(
    library_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tabret.cli import main

    with sqlite3.connect(library_db) as conn:
        conn.executemany("INSERT INTO author VALUES (?, ?)", [(1, "Ann"), (2, "Bob")])
    conn.close()
    out = tmp_path / "idx"
    argv = ["index", "sqlite", str(library_db), str(out), "--embedder", "hashing", "--quiet"]
    assert main([*argv, "--join-graph", "--column-stats"]) == 0
    assert "column statistics: 2 of 8 columns have values" in capsys.readouterr().out
    assert (out / "join_graph.tjg").is_file()
    assert main(["query", str(out), "books by author", "--method", "greedy-join", "--k", "2"]) == 0
    assert "library.author" in capsys.readouterr().out
