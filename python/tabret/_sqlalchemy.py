"""Catalog from any database SQLAlchemy can reflect (PostgreSQL, MySQL, SQLite, …)."""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from typing import TYPE_CHECKING, Any

from tabret._core import Catalog as CoreCatalog
from tabret._core import ColumnStats, Error, FileError, SchemaError
from tabret._tables import ColumnSpec, TableSpec, add_tables

if TYPE_CHECKING:
    from tabret.catalog import Catalog


def _unique_columns(inspector: Any, name: str, schema: str | None) -> set[str]:
    """Columns that a one-column UNIQUE constraint or unique index covers."""
    out = set()
    for u in inspector.get_unique_constraints(name, schema=schema):
        if len(u.get("column_names") or []) == 1:
            out.add(u["column_names"][0])
    for ix in inspector.get_indexes(name, schema=schema):
        columns = ix.get("column_names") or []
        # A partial index (a WHERE clause in its dialect options) does not make a column unique.
        partial = any(
            k.endswith("_where") and v is not None for k, v in ix.get("dialect_options", {}).items()
        )
        if ix.get("unique") and len(columns) == 1 and columns[0] is not None and not partial:
            out.add(columns[0])
    return out


def _engine(bind: str | Any) -> tuple[Any, bool]:
    try:
        import sqlalchemy
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "Catalog.from_sqlalchemy needs SQLAlchemy: pip install 'tabret[sqlalchemy]'"
        ) from err
    if isinstance(bind, str):
        return sqlalchemy.create_engine(bind), True
    return bind, False


def sqlite_engine(path: str | os.PathLike[str]) -> Any:
    """A read-only SQLAlchemy ``Engine`` on exactly the SQLite file ``path``.

    Never ``f"sqlite:///{path}"``: SQLAlchemy would read ``we?ird.db`` as the file ``we`` with
    the query ``ird.db`` and create ``we``. The connection is SQLite's URI
    ``file:<percent-encoded absolute path>?mode=ro``: every character of the name is the
    file's, nothing is written and a missing file is never created. Raises
    :class:`tabret.FileError` naming ``path`` when it is missing or not a regular file (and when
    SQLite cannot open it, at the first connection)."""
    try:
        import sqlalchemy
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "reading a live database needs SQLAlchemy: pip install 'tabret[sqlalchemy]'"
        ) from err
    name = os.fspath(path)
    if not os.path.exists(name):
        raise FileError(f"{name}: no such file")
    if not os.path.isfile(name):
        raise FileError(f"{name}: not a regular file")
    absolute = os.path.abspath(name)
    uri = f"file:{urllib.parse.quote(os.fsencode(absolute))}?mode=ro"

    def connect() -> sqlite3.Connection:
        try:
            return sqlite3.connect(uri, uri=True, check_same_thread=False)
        except sqlite3.Error as err:
            raise FileError(f"{name}: cannot open as a SQLite database: {err}") from err

    return sqlalchemy.create_engine(
        sqlalchemy.engine.URL.create("sqlite", database=absolute), creator=connect
    )


def _reflect(bind: Any, schema: str | None) -> list[TableSpec]:
    import sqlalchemy

    inspector = sqlalchemy.inspect(bind)
    # Dialects report a key into the default schema with referred_schema None, so compare
    # effective schemas: keys leaving the reflected schema are not part of this database.
    default = inspector.default_schema_name
    here = schema or default
    tables = []
    for name in inspector.get_table_names(schema=schema):
        try:
            comment = inspector.get_table_comment(name, schema=schema).get("text") or ""
        except NotImplementedError:  # dialects without comments (SQLite)
            comment = ""
        unique = _unique_columns(inspector, name, schema)
        columns = [
            ColumnSpec(
                c["name"],
                str(c["type"]).lower(),
                c.get("comment") or "",
                not_null=not c.get("nullable", True),
                unique=c["name"] in unique,
                default="" if c.get("default") is None else str(c["default"]),
            )
            for c in inspector.get_columns(name, schema=schema)
        ]
        pk = inspector.get_pk_constraint(name, schema=schema).get("constrained_columns") or []
        fks = [
            (fk["constrained_columns"], fk["referred_table"], fk["referred_columns"])
            for fk in inspector.get_foreign_keys(name, schema=schema)
            if (fk.get("referred_schema") or default) == here
        ]
        tables.append(TableSpec(name, comment, columns, list(pk), fks))
    return tables


def add_reflected(cat: Catalog, bind: str | Any, db_name: str, *, schema: str | None) -> int:
    engine, owned = _engine(bind)
    try:
        where = engine.url.render_as_string(hide_password=True)
        try:
            tables = _reflect(engine, schema)
        except Exception as err:
            raise Error(f"{where}: reflection failed: {type(err).__name__}: {err}") from err
        name = db_name or schema or engine.url.database or "main"
        name = name.rsplit("/", 1)[-1].removesuffix(".db").removesuffix(".sqlite")
        return add_tables(cat, name, tables, where)
    finally:
        if owned:
            engine.dispose()


def collect_stats(
    cat: CoreCatalog,
    stats: ColumnStats,
    bind: str | Any,
    db_name: str,
    *,
    schema: str | None,
    max_values: int,
    sample_rows: int | None,
) -> int:
    """Fills ``stats`` (a ``ColumnStats``) for the tables of database ``db_name`` of ``cat`` from
    the live database ``bind``: per table one ``COUNT(*)``/``COUNT(DISTINCT …)`` query over at
    most ``sample_rows`` rows, and per column up to ``max_values`` distinct non-null values.
    Returns the number of columns filled."""
    if max_values < 0 or (sample_rows is not None and sample_rows <= 0):
        raise ValueError(
            f"need max_values >= 0 and sample_rows > 0, got {max_values} and {sample_rows}"
        )
    db = cat.find_database(db_name)
    if db is None:
        raise SchemaError(f"no database '{db_name}' in the catalog")
    engine, owned = _engine(bind)
    try:
        where = engine.url.render_as_string(hide_password=True)
        filled = 0
        with engine.connect() as conn:
            for t in cat.database(db).tables:
                filled += _table_stats(conn, cat, stats, t, schema, max_values, sample_rows, where)
        return filled
    finally:
        if owned:
            engine.dispose()


def _table_stats(
    conn: Any,
    cat: CoreCatalog,
    stats: ColumnStats,
    t: int,
    schema: str | None,
    max_values: int,
    sample_rows: int | None,
    where: str,
) -> int:
    import sqlalchemy as sa

    name = cat.table(t).name
    columns = cat.table(t).columns
    table = sa.table(name, *[sa.column(cat.column(c).name) for c in columns], schema=schema)
    rows = sa.select(table).limit(sample_rows).subquery() if sample_rows else table
    counts = sa.select(
        sa.func.count(), *[sa.func.count(sa.distinct(rows.c[i])) for i in range(len(columns))]
    )
    try:
        total, *distinct = conn.execute(counts.select_from(rows)).one()
        for i, c in enumerate(columns):
            values: list[str] = []
            if max_values:
                col = rows.c[i]
                query = sa.select(col).where(col.is_not(None)).distinct().limit(max_values)
                values = [str(v) for (v,) in conn.execute(query)]
            stats.set(c, distinct[i] / total if total else None, values)
    except sa.exc.SQLAlchemyError as err:
        raise Error(f"{where}: reading values of table '{name}' failed: {err}") from err
    return len(columns)
