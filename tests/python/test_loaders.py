from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import tabret
from conftest import FIXTURES
from tabret import Catalog

SCHOOL_SQL = (FIXTURES / "sqlite" / "school.sql").read_text()


def make_sqlite(path: Path, sql: str = SCHOOL_SQL) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(sql)
    conn.close()
    return path


def fk_names(cat: Catalog) -> list[tuple[str, str]]:
    return [
        (cat.qualified_column_name(fk.from_column), cat.qualified_column_name(fk.to_column))
        for fk in cat.foreign_keys
    ]


@pytest.mark.parametrize(
    ("file", "counts"),
    [("spider/tables.json", (166, 876, 4503, 795)), ("bird/dev_tables.json", (11, 75, 798, 102))],
)
def test_benchmark_schemas_have_published_counts(
    data_dir: Path, file: str, counts: tuple[int, int, int, int]
) -> None:
    cat = Catalog.from_spider_json(data_dir / file)
    assert (cat.num_databases, cat.num_tables, cat.num_columns, cat.num_foreign_keys) == counts


def test_sqlite_round_trips_exactly(tmp_path: Path) -> None:
    cat = Catalog.from_sqlite(make_sqlite(tmp_path / "school.db"))
    assert [t.name for t in cat.tables] == ["Student", "course", "enrolment", "honours"]
    assert [c.name for c in cat.columns][:2] == ["student_id", "full name"]
    assert cat.column(4).type == "VARCHAR(80)"
    assert [cat.column(c).name for c in cat.table(2).primary_key] == ["student_id", "dept", "num"]
    assert fk_names(cat) == [
        ("school.enrolment.student_id", "school.Student.student_id"),
        ("school.enrolment.dept", "school.course.dept"),
        ("school.enrolment.num", "school.course.num"),
    ]


def test_sqlite_errors(tmp_path: Path) -> None:
    text = tmp_path / "notes.db"
    text.write_text("plain text, not a database at all")
    with pytest.raises(tabret.FileError, match=r"notes\.db: not a SQLite database"):
        Catalog.from_sqlite(text)
    with pytest.raises(OSError, match="no such file"):  # OSError
        Catalog.from_sqlite(tmp_path / "missing.db")
    dangling = make_sqlite(tmp_path / "d.db", "CREATE TABLE a (x INTEGER REFERENCES ghost(id));")
    with pytest.raises(tabret.SchemaError, match="references missing table 'ghost'"):
        Catalog.from_sqlite(dangling)


def _columns(cat: Catalog, table: str) -> list[tuple[str, str]]:
    t = cat.tables[cat.find_table(cat.databases[0].name, table)]  # type: ignore[index]
    return [(cat.column(c).name, cat.column(c).type) for c in t.columns]


def test_sqlite_keeps_generated_columns(tmp_path: Path) -> None:
    """Generated columns (PRAGMA table_xinfo hidden 2 and 3) are columns a query can name."""
    db = make_sqlite(
        tmp_path / "g.db",
        "CREATE TABLE t (a INT PRIMARY KEY, b INT GENERATED ALWAYS AS (a * 2) VIRTUAL, "
        "c TEXT AS (a || 'x') STORED, d REAL);",
    )
    assert _columns(Catalog.from_sqlite(db), "t") == [
        ("a", "INT"),
        ("b", "INT"),
        ("c", "TEXT"),
        ("d", "REAL"),
    ]


def test_sqlite_skips_the_shadow_tables_of_virtual_tables(tmp_path: Path) -> None:
    """FTS5 and R-tree keep their data in shadow tables (docs_data, geo_node, ...): not the
    user's tables. The virtual tables are, without their hidden columns (FTS5's rank)."""
    db = make_sqlite(
        tmp_path / "v.db",
        "CREATE TABLE t (id INT); CREATE VIRTUAL TABLE docs USING fts5(title, body); "
        "CREATE VIRTUAL TABLE geo USING rtree(id, x0, x1); CREATE TABLE docs_notes (n TEXT);",
    )
    cat = Catalog.from_sqlite(db)
    assert [t.name for t in cat.tables] == ["t", "docs", "geo", "docs_notes"]
    assert _columns(cat, "docs") == [("title", ""), ("body", "")]


def test_ddl_skips_psql_meta_commands() -> None:
    """pg_dump 17.6 and later start and end a dump with `\\restrict KEY` / `\\unrestrict KEY`."""
    cat = Catalog()
    cat.add_ddl_text("\\restrict abc\nCREATE TABLE a (x int);\n\\unrestrict abc\n", "d")
    assert [t.name for t in cat.tables] == ["a"]


def test_ddl_reads_cr_only_line_endings() -> None:
    cat = Catalog()
    cat.add_ddl_text("-- old Mac\rCREATE TABLE a (x int);\rCREATE TABLE b (y int);\r", "d")
    assert [t.name for t in cat.tables] == ["a", "b"]


def test_ddl_backslash_in_a_default_loads_without_dialect_markers() -> None:
    """Standard SQL and MySQL read the same tables here (only the default's text differs); it
    was refused as 'reads as different tables'. The standard reading is taken."""
    cat = Catalog()
    cat.add_ddl_text("CREATE TABLE t (p TEXT DEFAULT 'C:\\path');\nCREATE TABLE u (r INT);", "d")
    assert [t.name for t in cat.tables] == ["t", "u"]
    assert cat.column(cat.tables[0].columns[0]).default == "'C:\\path'"


def test_add_is_all_or_nothing(tmp_path: Path) -> None:
    cat = Catalog.from_sqlite(make_sqlite(tmp_path / "school.db"))
    before = Catalog(cat)
    bad = make_sqlite(tmp_path / "bad.db", "CREATE TABLE a (x INTEGER REFERENCES ghost(id));")
    with pytest.raises(tabret.SchemaError):
        cat.add_sqlite(bad)
    broken = json.dumps([{"db_id": "x", "table_names_original": ["t"]}])
    with pytest.raises(tabret.SchemaError, match="database 'x': missing field"):
        tabret._core.add_spider_json_text(cat, broken, "inline.json")
    assert cat == before


def test_malformed_tables_json_names_file_and_item(tmp_path: Path) -> None:
    entry = {
        "db_id": "pets",
        "table_names_original": ["owner"],
        "table_names": ["owner"],
        "column_names_original": [[-1, "*"], [0, "id"], [3, "ghost"]],
        "column_names": [[-1, "*"], [0, "id"], [3, "ghost"]],
        "column_types": ["text", "number", "text"],
        "primary_keys": [1],
        "foreign_keys": [],
    }
    path = tmp_path / "tables.json"
    path.write_text(json.dumps([entry]))
    with pytest.raises(tabret.SchemaError, match=r"tables.json: database 'pets': column 'ghost'"):
        Catalog.from_spider_json(path)
    path.write_text("[{")
    with pytest.raises(tabret.ParseError) as info:
        Catalog.from_spider_json(path)
    assert info.value.source == str(path)


def test_json_round_trip_and_atomic_save(tmp_path: Path) -> None:
    cat = tabret.demo_catalog()
    out = tmp_path / "demo.json"
    cat.save_json(out)
    assert Catalog.from_json(out) == cat
    assert [p.name for p in tmp_path.iterdir()] == ["demo.json"]
    assert json.loads(out.read_text())["format"] == "tabret-catalog"


def test_ddl_file_loads_with_foreign_keys(fixtures: Path) -> None:
    cat = Catalog.from_ddl(fixtures / "ddl" / "sqlite_shop.sql")
    assert cat.databases[0].name == "sqlite_shop"
    assert cat.num_tables >= 3
    assert cat.num_foreign_keys >= 2


def test_ddl_syntax_error_has_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.sql"
    path.write_text("CREATE TABLE a (\n  id INTEGER PRIMARY KEY,\n  name TEXT\n;\n")
    with pytest.raises(tabret.ParseError) as info:
        Catalog.from_ddl(path)
    assert info.value.source == str(path)
    assert info.value.line == 4
    assert f"{path}:4:" in str(info.value)
