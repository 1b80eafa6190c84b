"""Issue 18, items 8 (Python part) and 10: a live SQLite database is opened as exactly the named
file, read-only, never created; ``Catalog.add_sqlalchemy`` is all or nothing."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tabret import Catalog, FileError, SchemaError
from tabret.cli import main
from tabret.join import column_stats_from_database

sqlalchemy = pytest.importorskip("sqlalchemy")

from test_postgres import postgres_url  # noqa: E402, F401 - the throwaway PostgreSQL server

SHOP = """
CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer (id),
                     total REAL);
INSERT INTO customer VALUES (1, 'Ada'), (2, 'Bo'), (3, 'Cy');
INSERT INTO orders VALUES (10, 1, 5.0), (11, 1, 7.5), (12, 3, 1.0);
"""


def sqlite_engine(path: Path) -> Any:
    from tabret._sqlalchemy import sqlite_engine

    return sqlite_engine(path)


def _make_db(path: Path, sql: str = SHOP) -> Path:
    conn = sqlite3.connect(path)
    try:
        conn.executescript(sql)
        conn.commit()
    finally:
        conn.close()
    return path


def _snapshot(cat: Catalog) -> tuple[str, int, int, int, int]:
    return (cat.to_json(), cat.num_databases, cat.num_tables, cat.num_columns,
            cat.num_foreign_keys)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Item 8: exactly the named file, read-only


@pytest.mark.parametrize("name", ["we?ird.db", "hash#tag.db", "per%20cent.db", "sp ace.db"])
def test_cli_column_stats_reads_exactly_the_named_sqlite_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """`tabret index sqlite "we?ird.db" … --column-stats` once built ``sqlite:///we?ird.db``:
    SQLAlchemy opened (and created) a file ``we`` and the statistics failed."""
    _make_db(tmp_path / name)
    monkeypatch.chdir(tmp_path)
    argv = ["index", "sqlite", name, "out", "--embedder", "hashing", "--join-graph"]
    assert main([*argv, "--column-stats"]) == 0, capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == sorted([name, "out"]), "no stray file"
    out = capsys.readouterr().out
    assert "column statistics: 5 of 5 columns have values" in out


def test_sqlite_engine_opens_exactly_the_named_file_read_only(tmp_path: Path) -> None:
    path = _make_db(tmp_path / "a?b#c%41 d.db")
    engine = sqlite_engine(path)
    try:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql("SELECT name FROM customer ORDER BY id").all()
            assert [r[0] for r in rows] == ["Ada", "Bo", "Cy"]
            with pytest.raises(sqlalchemy.exc.OperationalError, match="readonly"):
                conn.exec_driver_sql("INSERT INTO customer VALUES (4, 'Di')")
    finally:
        engine.dispose()
    assert sorted(os.listdir(tmp_path)) == ["a?b#c%41 d.db"]


def test_column_stats_on_a_weird_name_through_the_engine(tmp_path: Path) -> None:
    path = _make_db(tmp_path / "we?ird.db")
    cat = Catalog.from_sqlite(path, "shop")
    engine = sqlite_engine(path)
    try:
        stats = column_stats_from_database(cat, engine, "shop")
    finally:
        engine.dispose()
    name = cat.find_column(cat.find_table("shop", "customer") or 0, "name")
    assert name is not None
    assert sorted(stats.values(name)) == ["Ada", "Bo", "Cy"]
    assert sorted(os.listdir(tmp_path)) == ["we?ird.db"]


def test_missing_or_odd_sqlite_file_is_a_file_error_and_never_created(tmp_path: Path) -> None:
    missing = tmp_path / "missing?x.db"
    with pytest.raises(FileError, match=r"missing\?x\.db: no such file"):
        sqlite_engine(missing)
    with pytest.raises(FileError, match="not a regular file"):
        sqlite_engine(tmp_path)
    # Checked again at connection time: a file removed after the engine was made is not
    # created by SQLite either.
    path = _make_db(tmp_path / "gone.db")
    engine = sqlite_engine(path)
    path.unlink()
    try:
        with pytest.raises(FileError, match=r"gone\.db: cannot open"):
            engine.connect()
    finally:
        engine.dispose()
    assert os.listdir(tmp_path) == []


def test_cli_column_stats_on_a_missing_sqlite_file_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["index", "sqlite", "no?such.db", "out", "--embedder", "hashing", "--join-graph"]
    assert main([*argv, "--column-stats"]) == 1
    assert "no?such.db" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# Item 10: add_sqlalchemy is all or nothing


def test_add_sqlalchemy_failure_leaves_the_catalog_as_it_was(tmp_path: Path) -> None:
    """SQLite allows an empty column name; tabret does not. The error comes at the second
    table, after `a_first` was added in the old code."""
    path = _make_db(
        tmp_path / "bad.db",
        "CREATE TABLE a_first (id INTEGER PRIMARY KEY, x TEXT);"
        'CREATE TABLE b_second (id INTEGER, "" TEXT);',
    )
    cat = Catalog()
    cat.add_ddl_text("CREATE TABLE t (x INTEGER PRIMARY KEY);", "before")
    copy, before = Catalog(cat), _snapshot(cat)
    with pytest.raises(SchemaError) as caught:
        cat.add_sqlalchemy(f"sqlite:///{path}", "bad")
    assert _snapshot(cat) == before
    assert cat == copy
    assert cat.find_database("bad") is None
    message = str(caught.value)
    assert str(path) in message  # the database
    assert "'b_second'" in message  # the table
    assert "column 2 ''" in message  # the column, by position: it has no name
    # Still usable: a good database adds under the name the failed one did not take.
    good = _make_db(tmp_path / "good.db")
    cat.add_sqlalchemy(f"sqlite:///{good}", "bad")
    assert [d.name for d in cat.databases] == ["before", "bad"]


def test_postgres_case_variants_leave_the_catalog_as_it_was(postgres_url: str) -> None:  # noqa: F811
    """PostgreSQL's legal `id` and "ID" in one table, and tables "Users" and users: tabret's
    names are case-insensitive, so the reflection fails, with nothing added."""
    engine = sqlalchemy.create_engine(postgres_url)
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE SCHEMA cols; CREATE TABLE cols.a_ok (x int); "
            'CREATE TABLE cols.b_bad (id int, "ID" int);'
            "CREATE SCHEMA tabs; CREATE TABLE tabs.a_ok (x int); "
            'CREATE TABLE tabs."Users" (x int); CREATE TABLE tabs.users (y int);'
        )
    engine.dispose()
    cat = Catalog.from_sqlalchemy(postgres_url, "hr")
    copy, before = Catalog(cat), _snapshot(cat)
    with pytest.raises(SchemaError) as columns:
        cat.add_sqlalchemy(postgres_url, schema="cols")
    assert _snapshot(cat) == before
    with pytest.raises(SchemaError) as tables:
        cat.add_sqlalchemy(postgres_url, schema="tabs")
    assert _snapshot(cat) == before
    assert cat == copy
    assert "127.0.0.1" in str(columns.value)
    assert "duplicate column 'ID'" in str(columns.value)
    assert "'b_bad', column 2 'ID'" in str(columns.value)
    assert "127.0.0.1" in str(tables.value)
    assert "duplicate table 'users'" in str(tables.value).lower()
    assert [d.name for d in cat.databases] == ["hr"]
