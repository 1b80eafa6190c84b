"""Cell values as retrieval evidence: the distinct text values of a catalog's columns, read from
the database, saved with the index, and matched against the question's words by the ``values``
stage ("the DHL shipments" finds the column holding ``'DHL'``).

Values are your data: they are stored in the index directory (``values.tvi``: each column's
distinct text values, within the bounds below) and never sent anywhere; no embedder sees them.

``read_values(catalog, source)`` reads them from a SQLite file (natively, read-only) or from
anything SQLAlchemy reaches (a URL such as ``postgresql+psycopg://…`` or an ``Engine``; needs the
``sqlalchemy`` extra), within bounds: ``max_values_per_column`` distinct values per column,
``max_value_bytes`` per value, ``max_bytes`` in all and ``time_budget_s`` seconds, with progress
and Ctrl-C. Only text values are read (numbers, dates and blobs are not), so a value index is at
most ``max_bytes`` whatever the size of the database.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from pathlib import Path
from typing import Any

from tabret import _core
from tabret._core import FileError, SchemaError, ValueIndex, ValueMatch, normalise_value

__all__ = ["ValueIndex", "ValueMatch", "from_column_stats", "normalise_value", "read_values"]

#: Declared types whose columns hold text (matched case-insensitively as substrings); a column
#: without a declared type is read too. SQLite files are read by each value's own type instead.
TEXT_TYPES = ("char", "text", "string", "clob", "name", "enum", "citext")


def read_values(
    catalog: _core.Catalog,
    source: str | os.PathLike[str] | Any,
    db_name: str | None = None,
    *,
    values: ValueIndex | None = None,
    max_values_per_column: int | None = None,
    max_value_bytes: int | None = None,
    max_bytes: int | None = None,
    time_budget_s: float | None = None,
    schema: str | None = None,
    progress: bool = True,
) -> ValueIndex:
    """The text values of database ``db_name`` of ``catalog`` (default: its only database) read
    from ``source``: a SQLite file path, or a SQLAlchemy URL (``"…://…"``) or ``Engine``
    (``schema``: its schema, if not the default). Adds to ``values`` when given (several
    databases of one catalog share one index; the bounds are ``values``'s), else to a new
    :class:`ValueIndex` with the given bounds. A time budget that runs out keeps what was read
    and warns. :class:`tabret.SchemaError` for a database the catalog lacks."""
    if time_budget_s is not None and not (math.isfinite(time_budget_s) and time_budget_s >= 0):
        raise ValueError(f"time_budget_s must be a finite number >= 0, not {time_budget_s}")
    if values is None:
        bounds = {
            k: v
            for k, v in (
                ("max_values_per_column", max_values_per_column),
                ("max_value_bytes", max_value_bytes),
                ("max_bytes", max_bytes),
            )
            if v is not None
        }
        values = ValueIndex(catalog, **bounds)
    name = _database(catalog, db_name)
    if isinstance(source, (str, os.PathLike)) and "://" not in os.fspath(source):
        report = values.add_sqlite(
            catalog, name, Path(source), time_budget_s, _progress(progress, catalog, name)
        )
        complete = bool(report["complete"])
        if report["missing"]:
            missing = report["missing"]
            warnings.warn(
                f"{source}: {len(missing)} tables or columns of database {name} are not in the "
                f"file and were skipped: {', '.join(missing[:5])}"
                + (", …" if len(missing) > 5 else ""),
                stacklevel=2,
            )
    else:
        if values.catalog_fingerprint != _core.catalog_fingerprint(catalog):
            raise _core.Error("read_values: the value index was made for another catalog")
        report_fn = _progress(progress, catalog, name)
        complete = _read_sqlalchemy(values, catalog, source, name, schema, time_budget_s, report_fn)
    if not complete:
        warnings.warn(
            f"{name}: the time budget of {time_budget_s} s ran out: the value index holds "
            "the values of the columns read so far",
            stacklevel=2,
        )
    return values


def from_column_stats(catalog: _core.Catalog, stats: _core.ColumnStats) -> ValueIndex:
    """The sample values of ``stats`` (e.g. :func:`tabret.join.jar_column_stats`, or
    :func:`tabret.join.column_stats_from_database`) as a value index of ``catalog``."""
    values = ValueIndex(catalog)
    for c in range(catalog.num_columns):
        values.add(c, stats.values(c))
    return values


def _database(catalog: _core.Catalog, db_name: str | None) -> str:
    if db_name is not None:
        if catalog.find_database(db_name) is None:
            raise SchemaError(f"no database '{db_name}' in the catalog")
        return db_name
    if catalog.num_databases != 1:
        raise ValueError(
            f"the catalog has {catalog.num_databases} databases: name the one to read (db_name)"
        )
    return str(catalog.databases[0].name)


def _progress(on: bool, catalog: _core.Catalog, name: str) -> Any:
    if not on:
        return None
    from tqdm import tqdm

    bar = tqdm(total=len(_tables(catalog, name)), desc=f"values {name}", unit="table")

    def report(_stage: str, done: int, total: int) -> None:
        bar.update(done - bar.n)
        if done == total:
            bar.close()

    return report


def _tables(catalog: _core.Catalog, name: str) -> list[int]:
    db = catalog.find_database(name)
    if db is None:
        raise SchemaError(f"no database '{name}' in the catalog")
    return list(catalog.database(db).tables)


def _is_text(declared: str) -> bool:
    t = declared.lower()
    return not t or any(s in t for s in TEXT_TYPES)


def _read_sqlalchemy(
    values: ValueIndex,
    catalog: _core.Catalog,
    bind: Any,
    name: str,
    schema: str | None,
    time_budget_s: float | None,
    progress: Any,
) -> bool:
    """Reads through SQLAlchemy, table by table (``progress(stage, done, total)`` after each);
    returns False when the time budget ran out. Only values within the bounds are fetched."""
    import sqlalchemy as sa

    from tabret._sqlalchemy import _engine

    engine, owned = _engine(bind)
    start = time.monotonic()
    limit, longest = values.max_values_per_column, values.max_value_bytes
    try:
        with engine.connect() as conn:
            tables = _tables(catalog, name)
            for done, t in enumerate(tables, 1):
                table = catalog.table(t)
                for c in table.columns:
                    if time_budget_s is not None and time.monotonic() - start > time_budget_s:
                        return False
                    column = catalog.column(c)
                    if not _is_text(column.type):
                        continue
                    col: Any = sa.column(column.name)
                    length = sa.func.length(col)
                    query = (
                        sa.select(col)
                        .select_from(sa.table(table.name, col, schema=schema))
                        .where(col.is_not(None), length > 0, length <= longest)
                        .distinct()
                        .limit(limit)
                    )
                    try:
                        rows = conn.execute(query).scalars().all()
                    except sa.exc.SQLAlchemyError as err:
                        raise FileError(
                            f"{engine.url.render_as_string(hide_password=True)}: cannot read "
                            f"the values of {table.name}.{column.name}: {err}"
                        ) from err
                    values.add(
                        c,
                        [
                            v
                            for v in rows
                            if isinstance(v, str) and 0 < len(v.encode("utf-8")) <= longest
                        ],
                    )
                if progress is not None:
                    progress("values", done, len(tables))
        return True
    finally:
        if owned:
            engine.dispose()
