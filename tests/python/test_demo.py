"""The bundled demo catalog: its shape, and gold SQL that runs and reads exactly its gold tables.

Each demo database is created in SQLite from tabret's own DDL serialisation (so this also checks
`database_ddl`), every gold query runs on the empty tables, and SQLite's authorizer reports the
tables it reads.
"""

from __future__ import annotations

import collections
import sqlite3

import pytest

import tabret
from tabret import Catalog

CAT = tabret.demo_catalog()
QUESTIONS = tabret.demo_questions()


def sqlite_database(cat: Catalog, db: int) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.executescript(cat.database_ddl(db))
    for t in cat.database(db).tables:
        # On an empty table this makes SQLite resolve the table's foreign keys.
        conn.execute(f'DELETE FROM "{cat.table(t).name}"')
    return conn


def tables_read(conn: sqlite3.Connection, sql: str) -> set[str]:
    read: set[str] = set()

    def authorizer(action: int, arg1: str | None, *_: str | None) -> int:
        if action == sqlite3.SQLITE_READ and arg1 and not arg1.startswith("sqlite_"):
            read.add(arg1.lower())
        allowed = (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION)
        return sqlite3.SQLITE_OK if action in allowed else sqlite3.SQLITE_DENY

    conn.set_authorizer(authorizer)
    try:
        conn.execute(sql).fetchall()
    finally:
        conn.set_authorizer(None)
    return read


def test_demo_catalog_shape() -> None:
    assert (CAT.num_databases, CAT.num_tables, CAT.num_columns, CAT.num_foreign_keys) == (
        6,
        69,
        340,
        80,
    )
    assert all(t.primary_key for t in CAT.tables)
    assert all(t.description for t in CAT.tables)
    assert all("(" not in t.nl_name for t in CAT.tables)


def test_demo_questions_cover_every_database_and_sizes() -> None:
    assert len(QUESTIONS) == 36
    assert len({q.id for q in QUESTIONS}) == len(QUESTIONS)
    assert {q.db for q in QUESTIONS} == {d.name for d in CAT.databases}
    sizes = collections.Counter(len(q.gold_tables) for q in QUESTIONS)
    assert sizes == {1: 12, 2: 6, 3: 9, 4: 9}


@pytest.mark.parametrize("db", range(CAT.num_databases), ids=[d.name for d in CAT.databases])
def test_demo_gold_sql_reads_exactly_the_gold_tables(db: int) -> None:
    name = CAT.database(db).name
    conn = sqlite_database(CAT, db)
    for q in (q for q in QUESTIONS if q.db == name):
        gold = {g.split(".", 1)[1].lower() for g in q.gold_tables}
        assert all(g.startswith(f"{name}.") for g in q.gold_tables), q.id
        assert tables_read(conn, q.sql) == gold, q.id
    conn.close()
