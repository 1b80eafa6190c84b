"""What the Python loaders share: tables read from a source (a live database through
SQLAlchemy or DuckDB, a dbt manifest, an ``INFORMATION_SCHEMA`` export) as plain records,
checked, then added to a catalog as one database, all or nothing.

A loader builds :class:`TableSpec` records whose foreign keys name their referenced table by
its tabret name (every table of one source goes into one database), and calls
:func:`add_tables`. Warehouse relations (database, schema, name) get their tabret names from
:func:`qualified_names`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tabret._core import Catalog as CoreCatalog
from tabret._core import SchemaError


@dataclass
class ColumnSpec:
    name: str
    type: str
    description: str
    not_null: bool = False
    unique: bool = False
    default: str = ""


@dataclass
class TableSpec:
    name: str
    description: str
    columns: list[ColumnSpec]
    primary_key: list[str]
    #: (columns, referenced table's tabret name, referenced columns)
    foreign_keys: list[tuple[list[str], str, list[str]]] = field(default_factory=list)

    def column(self, name: str) -> ColumnSpec | None:
        """The column ``name`` (case-insensitive, as the catalog finds columns)."""
        key = name.lower()
        return next((c for c in self.columns if c.name.lower() == key), None)


@dataclass(frozen=True)
class Relation:
    """A warehouse table as dbt and ``INFORMATION_SCHEMA`` name it: database (Snowflake's
    database, BigQuery's project), schema (BigQuery's dataset) and name."""

    database: str
    schema: str
    name: str

    def key(self) -> tuple[str, str, str]:
        return (self.database.lower(), self.schema.lower(), self.name.lower())


def qualified_names(relations: Sequence[Relation]) -> dict[tuple[str, str, str], str]:
    """The tabret table name of each relation (by :meth:`Relation.key`): ``schema.name``, what
    SQL writes inside one warehouse database, or ``database.schema.name`` for all of them when
    the relations span more than one database (a relation without a schema keeps its name)."""
    several = len({r.database.lower() for r in relations}) > 1
    names = {}
    for r in relations:
        parts = [r.database] if several and r.database else []
        parts += [r.schema] if r.schema else []
        names[r.key()] = ".".join([*parts, r.name])
    return names


def single_database(relations: Sequence[Relation]) -> str:
    """The one database all ``relations`` live in, or ``""`` when they span several."""
    databases = {r.database for r in relations}
    return databases.pop() if len(databases) == 1 else ""


def validate(tables: list[TableSpec], where: str) -> None:
    """Checks every key names an existing table and column before anything is added."""
    by_name = {t.name.lower(): t for t in tables}
    for t in tables:
        for col in t.primary_key:
            if t.column(col) is None:
                raise SchemaError(
                    f"{where}: primary key of '{t.name}' names missing column '{col}'"
                )
        for cols, ref, ref_cols in t.foreign_keys:
            target = by_name.get(ref.lower())
            if target is None:
                raise SchemaError(
                    f"{where}: foreign key of '{t.name}' references missing table '{ref}'"
                )
            missing = [c for c in cols if t.column(c) is None] + [
                f"{ref}.{c}" for c in ref_cols if target.column(c) is None
            ]
            if missing:
                raise SchemaError(
                    f"{where}: foreign key of '{t.name}' names missing column '{missing[0]}'"
                )
            if len(cols) != len(ref_cols):
                raise SchemaError(f"{where}: foreign key of '{t.name}' has unequal column lists")


def add_tables(cat: CoreCatalog, name: str, tables: list[TableSpec], where: str) -> int:
    """Adds ``tables`` to ``cat`` as the database ``name``; returns its id. ``where`` (the
    file or URL read) starts every error. All or nothing: checked first (:func:`validate`, a
    free database name), then added to a fresh catalog, where any other :class:`SchemaError`
    (an empty name, two names equal but for case, which tabret's case-insensitive names cannot
    hold) surfaces with ``cat`` untouched; only then the same calls go into ``cat``: names are
    scoped by their database, whose name is free, so they succeed there as they did in the
    staging one."""
    validate(tables, where)
    if cat.find_database(name) is not None:
        raise SchemaError(f"{where}: duplicate database '{name}'")
    try:
        _add(CoreCatalog(), name, tables)
    except SchemaError as err:
        raise SchemaError(f"{where}: {err}; nothing was added") from None
    return _add(cat, name, tables)


def _add(cat: CoreCatalog, name: str, tables: list[TableSpec]) -> int:
    db = cat.add_database(name)
    ids = {}
    for t in tables:
        try:
            tid = cat.add_table(db, t.name, description=t.description)
        except SchemaError as err:
            raise SchemaError(f"{err} (table {t.name!r})") from None
        ids[t.name.lower()] = tid
        for i, col in enumerate(t.columns):
            try:
                cid = cat.add_column(tid, col.name, col.type, description=col.description)
            except SchemaError as err:
                # By position too: an empty column name is legal in SQLite.
                raise SchemaError(
                    f"{err} (table {t.name!r}, column {i + 1} {col.name!r})"
                ) from None
            cat.set_constraints(cid, not_null=col.not_null, unique=col.unique, default=col.default)
    for t in tables:
        tid = ids[t.name.lower()]
        if t.primary_key:
            cat.set_primary_key(tid, [_col(cat, tid, c) for c in t.primary_key])
        for cols, ref, ref_cols in t.foreign_keys:
            rid = ids[ref.lower()]
            for c, r in zip(cols, ref_cols, strict=True):
                cat.add_foreign_key(_col(cat, tid, c), _col(cat, rid, r))
    return db


def _col(cat: CoreCatalog, table: int, name: str) -> int:
    cid = cat.find_column(table, name)
    assert cid is not None, "validated before adding"
    return cid
