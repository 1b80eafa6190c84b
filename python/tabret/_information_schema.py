"""Catalog from an export of a warehouse's ``INFORMATION_SCHEMA.COLUMNS`` (Snowflake,
BigQuery, or any database with the standard view), and optionally of its keys, as CSV with a
header row or as JSON (an array of objects, or one object a line). docs/catalog.md lists the
fields read and the SQL that writes each export."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tabret import _json, _text
from tabret._core import FileError, SchemaError
from tabret._tables import (
    ColumnSpec,
    Relation,
    TableSpec,
    add_tables,
    qualified_names,
    single_database,
)

if TYPE_CHECKING:
    from tabret._core import Catalog

CSV_SUFFIXES = (".csv",)
JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")

#: Field names are matched case-insensitively; the first of each tuple present is read.
_DESCRIPTION = ("COMMENT", "DESCRIPTION", "COLUMN_COMMENT")
_TABLE_DESCRIPTION = ("TABLE_COMMENT", "TABLE_DESCRIPTION")


@dataclass(frozen=True)
class Record:
    """One row of an export: its fields by upper-case name, its line in the file."""

    path: Path
    line: int
    fields: dict[str, str]

    def get(self, *names: str) -> str:
        return next((self.fields[n] for n in names if n in self.fields), "")

    def need(self, name: str) -> str:
        value = self.fields.get(name, "")
        if not value:
            raise SchemaError(f"{self.path}:{self.line}: no {name}")
        return value

    def relation(self, prefix: str = "") -> Relation:
        return Relation(
            self.get(f"{prefix}TABLE_CATALOG"),
            self.get(f"{prefix}TABLE_SCHEMA"),
            self.need(f"{prefix}TABLE_NAME"),
        )

    def position(self) -> int:
        """ORDINAL_POSITION (BigQuery's JSON writes numbers as strings); 0 when absent."""
        text = self.get("ORDINAL_POSITION", "KEY_SEQUENCE")
        try:
            return int(text) if text else 0
        except ValueError:
            raise _text.parse_error(
                self.path, self.line, f"ORDINAL_POSITION is not an integer: {text!r}"
            ) from None


def _text_of(value: Any) -> str:
    return "" if value is None else str(value)


def _csv_records(path: Path, text: str) -> Iterator[Record]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [h.strip().upper() for h in next(reader, [])]
        if not any(header):
            raise _text.parse_error(path, 1, "no header row")
        for row in reader:
            if not any(row):
                continue
            if len(row) != len(header):
                raise _text.parse_error(
                    path, reader.line_num, f"{len(row)} fields, the header has {len(header)}"
                )
            yield Record(path, reader.line_num, dict(zip(header, row, strict=True)))
    except csv.Error as err:
        raise _text.parse_error(path, reader.line_num, f"invalid CSV: {err}") from None


def _json_records(path: Path, text: str) -> Iterator[Record]:
    if text.lstrip().startswith("["):
        items = _json.parse(text, path)
        # One array: its entries have no lines of their own; name the entry by its index.
        for i, item in enumerate(items):
            yield _record(path, 1, item, f"entry {i}")
        return
    for n, line in enumerate(_text.split_lines(text), start=1):
        if line.strip():
            yield _record(path, n, _json.parse(line, path, n), "the line")


def _record(path: Path, line: int, item: Any, what: str) -> Record:
    if not isinstance(item, dict):
        raise SchemaError(f"{path}:{line}: {what} is not a JSON object")
    return Record(path, line, {str(k).upper(): _text_of(v) for k, v in item.items()})


def read_records(path: Path) -> list[Record]:
    """The rows of a CSV or JSON export (by the file's suffix)."""
    suffix = path.suffix.lower()
    if suffix not in CSV_SUFFIXES + JSON_SUFFIXES:
        raise FileError(
            f"{path}: an INFORMATION_SCHEMA export is a {', '.join(CSV_SUFFIXES + JSON_SUFFIXES)} "
            f"file, not {suffix or 'a file without a suffix'}"
        )
    text = _text.decode(_text.read_bytes(path), path)
    records = _csv_records if suffix in CSV_SUFFIXES else _json_records
    return list(records(path, text))


def _tables(columns: list[Record]) -> tuple[dict[tuple[str, str, str], TableSpec], list[Relation]]:
    """The tables of a COLUMNS export, in the order they first appear, columns by position."""
    relations: dict[tuple[str, str, str], Relation] = {}
    rows: dict[tuple[str, str, str], list[Record]] = {}
    for r in columns:
        rel = r.relation()
        relations.setdefault(rel.key(), rel)
        rows.setdefault(rel.key(), []).append(r)
    names = qualified_names(list(relations.values()))
    tables = {}
    for key, records in rows.items():
        ordered = sorted(records, key=Record.position)  # stable: file order without positions
        description = next((d for r in ordered if (d := r.get(*_TABLE_DESCRIPTION))), "")
        tables[key] = TableSpec(names[key], description, [_column(r) for r in ordered], [])
    return tables, list(relations.values())


def _column(r: Record) -> ColumnSpec:
    return ColumnSpec(
        r.need("COLUMN_NAME"),
        r.get("DATA_TYPE").lower(),
        r.get(*_DESCRIPTION),
        not_null=r.get("IS_NULLABLE").upper() in ("NO", "N", "FALSE"),
        default=r.get("COLUMN_DEFAULT"),
    )


def _add_keys(tables: dict[tuple[str, str, str], TableSpec], keys: list[Record]) -> None:
    """PRIMARY KEY, FOREIGN KEY and one-column UNIQUE rows of a keys export, grouped into
    constraints by table, CONSTRAINT_NAME and referenced table, their columns ordered by
    ORDINAL_POSITION."""
    groups: dict[tuple[str, str, str, str], tuple[TableSpec, TableSpec | None, list[Record]]]
    groups = {}
    for r in keys:
        kind = r.need("CONSTRAINT_TYPE").upper().replace("_", " ")
        if kind not in ("PRIMARY KEY", "FOREIGN KEY", "UNIQUE"):
            continue
        table = _table(tables, r, r.relation())
        _check_column(table, r, r.need("COLUMN_NAME"))
        target = None
        if kind == "FOREIGN KEY":
            target = _table(tables, r, r.relation("REFERENCED_"))
            _check_column(target, r, r.need("REFERENCED_COLUMN_NAME"))
        name = r.get("CONSTRAINT_NAME")
        key = (table.name.lower(), kind, name, target.name.lower() if target else "")
        groups.setdefault(key, (table, target, []))[2].append(r)
    for (_, kind, _, _), (table, target, rows) in groups.items():
        rows.sort(key=Record.position)
        columns = [r.need("COLUMN_NAME") for r in rows]
        if kind == "PRIMARY KEY":
            table.primary_key = columns
        elif target is not None:
            referenced = [r.need("REFERENCED_COLUMN_NAME") for r in rows]
            table.foreign_keys.append((columns, target.name, referenced))
        elif len(columns) == 1 and (spec := table.column(columns[0])) is not None:
            spec.unique = True


def _table(tables: dict[tuple[str, str, str], TableSpec], r: Record, rel: Relation) -> TableSpec:
    # Either export may leave TABLE_CATALOG out; match on schema and name then.
    found = tables.get(rel.key()) or next(
        (t for k, t in tables.items() if not (rel.database and k[0]) and k[1:] == rel.key()[1:]),
        None,
    )
    if found is None:
        name = ".".join(p for p in (rel.database, rel.schema, rel.name) if p)
        raise SchemaError(f"{r.path}:{r.line}: table '{name}' is not in the columns export")
    return found


def _check_column(table: TableSpec, r: Record, column: str) -> None:
    if table.column(column) is None:
        raise SchemaError(f"{r.path}:{r.line}: table '{table.name}' has no column '{column}'")


def add_information_schema(
    cat: Catalog,
    columns: str | os.PathLike[str],
    keys: str | os.PathLike[str] | None,
    db_name: str,
) -> int:
    """Adds the tables of a COLUMNS export (and the keys of a keys export) as one database:
    default name the one TABLE_CATALOG of the export, else the columns file's stem."""
    path = Path(columns)
    records = read_records(path)
    if not records:
        raise SchemaError(f"{path}: no columns")
    tables, relations = _tables(records)
    if keys is not None:
        _add_keys(tables, read_records(Path(keys)))
    name = db_name or single_database(relations) or path.stem
    return add_tables(cat, name, list(tables.values()), str(path))


def export_files(directory: Path) -> tuple[Path, Path | None]:
    """A directory's ``columns.<suffix>`` and, when there, ``keys.<suffix>``."""

    def find(stem: str) -> Path | None:
        found = [directory / f"{stem}{s}" for s in CSV_SUFFIXES + JSON_SUFFIXES]
        return next((p for p in found if p.exists()), None)

    columns = find("columns")
    if columns is None:
        raise FileError(f"{directory}: no columns.csv, columns.json or columns.jsonl")
    return columns, find("keys")
