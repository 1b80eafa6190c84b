"""Catalog from a DuckDB database file, read natively with the ``duckdb`` package (the
``duckdb`` extra): ``duckdb_tables()``, ``duckdb_views()``, ``duckdb_columns()`` and
``duckdb_constraints()`` of the file's own catalog, opened read-only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tabret._core import Error, FileError
from tabret._tables import ColumnSpec, TableSpec, add_tables

if TYPE_CHECKING:
    from tabret._core import Catalog

#: A DuckDB file's magic bytes, after its 8-byte checksum.
_MAGIC = b"DUCK"
_SQLITE = b"SQLite format 3\x00"


def _duckdb() -> Any:
    try:
        import duckdb
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("Catalog.from_duckdb needs DuckDB: pip install 'tabret[duckdb]'") from err
    return duckdb


def _check_file(path: Path) -> None:
    """A regular file with DuckDB's header, else a :class:`FileError` naming it (before
    DuckDB sees it: given a SQLite file, DuckDB would try to download its SQLite extension)."""
    if not path.exists():
        raise FileError(f"{path}: no such file")
    if not path.is_file():
        raise FileError(f"{path}: not a regular file")
    with path.open("rb") as f:
        head = f.read(16)
    if head.startswith(_SQLITE):
        raise FileError(
            f"{path}: is a SQLite database, not a DuckDB one: use the sqlite loader "
            f"(`tabret catalog sqlite {path}`, Python `Catalog.from_sqlite`)"
        )
    if head[8:12] != _MAGIC:
        raise FileError(f"{path}: not a DuckDB database (bad header)")


def _connect(path: Path) -> Any:
    duckdb = _duckdb()
    # No extension is loaded or installed on the way: a file is only ever read.
    config = {"autoload_known_extensions": False, "autoinstall_known_extensions": False}
    try:
        return duckdb.connect(str(path), read_only=True, config=config)
    except duckdb.Error as err:
        raise FileError(f"{path}: cannot open as a DuckDB database: {err}") from err


_TABLES = """
    SELECT schema_name, table_name, coalesce(comment, '') FROM duckdb_tables()
    WHERE database_name = current_database() AND NOT internal AND NOT temporary
    UNION ALL
    SELECT schema_name, view_name, coalesce(comment, '') FROM duckdb_views()
    WHERE database_name = current_database() AND NOT internal AND NOT temporary
    ORDER BY 1, 2
"""
_COLUMNS = """
    SELECT schema_name, table_name, column_name, data_type, coalesce(comment, ''),
           NOT is_nullable, coalesce(column_default, '')
    FROM duckdb_columns() WHERE database_name = current_database()
    ORDER BY schema_name, table_name, column_index
"""
_CONSTRAINTS = """
    SELECT schema_name, table_name, constraint_type, constraint_column_names,
           referenced_table, referenced_column_names
    FROM duckdb_constraints()
    WHERE database_name = current_database()
      AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')
    ORDER BY constraint_index
"""


def _read(conn: Any) -> list[TableSpec]:
    (default,) = conn.execute("SELECT current_schema()").fetchone()

    def name(schema: str, table: str) -> str:
        """What SQL on this file writes: tables of the default schema by name alone."""
        return table if schema == default else f"{schema}.{table}"

    tables = {
        (s, t): TableSpec(name(s, t), comment, [], [])
        for s, t, comment in conn.execute(_TABLES).fetchall()
    }
    for s, t, column, type_, comment, not_null, default_ in conn.execute(_COLUMNS).fetchall():
        if (s, t) in tables:
            tables[s, t].columns.append(
                ColumnSpec(column, type_.lower(), comment, not_null=not_null, default=default_)
            )
    for s, t, kind, columns, ref, ref_columns in conn.execute(_CONSTRAINTS).fetchall():
        table = tables[s, t]
        if kind == "PRIMARY KEY":
            table.primary_key = list(columns)
        elif kind == "UNIQUE" and len(columns) == 1:
            spec = table.column(columns[0])
            if spec is not None:
                spec.unique = True
        elif kind == "FOREIGN KEY":
            # DuckDB has no foreign keys across schemas: the referenced table is in this one.
            table.foreign_keys.append((list(columns), name(s, ref), list(ref_columns)))
    return list(tables.values())


def add_duckdb(cat: Catalog, path: str | os.PathLike[str], db_name: str) -> int:
    """Adds the DuckDB file ``path`` as one database (default name: the file stem)."""
    file = Path(path)
    _check_file(file)
    conn = _connect(file)
    try:
        tables = _read(conn)
    except _duckdb().Error as err:
        raise Error(f"{file}: reading the schema failed: {err}") from err
    finally:
        conn.close()
    return add_tables(cat, db_name or file.stem, tables, str(file))
