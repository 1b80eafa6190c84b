#!/usr/bin/env python3
"""Validate the tabret demo catalog and its question set.

Checks ``python/tabret/data/demo/catalog.json`` (tabret catalog JSON, version 1)
and ``python/tabret/data/demo/questions.json``:

* strict format: exact key order, types, identifier syntax, column types,
  no duplicate names (case-insensitive, as SQLite compares them), primary-key
  columns exist, every foreign key points at an existing primary-key column
  of a table in the same database with the same type affinity;
* the catalog is materialised as one in-memory SQLite database per catalog
  database (CREATE TABLE with PRIMARY KEY and FOREIGN KEY clauses) and SQLite
  itself resolves every foreign key;
* every gold SQL query runs (on the empty tables), is read-only, and the set of
  tables it reads equals its ``gold_tables`` -- both according to SQLite's
  authorizer callback and according to a plain identifier scan of the SQL text;
* the size targets of the demo (databases, tables, questions) are met.

Prints summary counts and exits with status 1 if any problem was found, each
problem naming the offending item.  Standard library only.

Usage: python scripts/check_demo.py [--catalog PATH] [--questions PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

DEMO_DIR = Path(__file__).resolve().parent.parent / "python" / "tabret" / "data" / "demo"

CATALOG_FORMAT = "tabret-catalog"
CATALOG_VERSION = 1

CATALOG_KEYS = ["format", "version", "databases"]
DATABASE_KEYS = ["name", "description", "tables"]
TABLE_KEYS = [
    "name",
    "nl_name",
    "description",
    "columns",
    "primary_key",
    "foreign_keys",
]
COLUMN_KEYS = ["name", "nl_name", "type", "description"]
FK_KEYS = ["column", "ref_table", "ref_column"]
QUESTION_KEYS = ["id", "db", "question", "gold_tables", "sql"]

# Size targets of the demo data set.
DATABASES_RANGE = (5, 6)
TABLES_PER_DB_RANGE = (8, 14)
TABLES_TOTAL_RANGE = (50, 70)
QUESTIONS_RANGE = (30, 36)
GOLD_TABLES_RANGE = (1, 4)

IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
QUESTION_ID_RE = re.compile(r"^[a-z0-9_]+-[0-9]{2,}$")
TYPE_RE = re.compile(
    r"^(?:integer|int|bigint|smallint|text|real|double|float|date|datetime|timestamp"
    r"|time|boolean|blob"
    r"|(?:varchar|char)\(\s*\d+\s*\)"
    r"|(?:numeric|decimal)\(\s*\d+\s*(?:,\s*\d+\s*)?\))$",
    re.IGNORECASE,
)

# Tokenizer for the identifier scan of gold SQL.
SQL_SKIP_RE = re.compile(r"'(?:[^']|'')*'|--[^\n]*|/\*.*?\*/", re.DOTALL)
SQL_IDENT_RE = re.compile(r'"((?:[^"]|"")+)"|`([^`]+)`|\[([^\]]+)\]|([A-Za-z_][A-Za-z0-9_$]*)')

# Authorizer actions a read-only query may perform.
READ_ONLY_ACTIONS = frozenset(
    {
        sqlite3.SQLITE_SELECT,
        sqlite3.SQLITE_READ,
        sqlite3.SQLITE_FUNCTION,
        sqlite3.SQLITE_RECURSIVE,
    }
)


@dataclass
class Column:
    name: str
    type: str


@dataclass
class ForeignKey:
    column: str
    ref_table: str
    ref_column: str


@dataclass
class Table:
    name: str
    columns: list[Column] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    foreign_keys: list[ForeignKey] = field(default_factory=list)

    def column(self, name: str) -> Column | None:
        for col in self.columns:
            if col.name == name:
                return col
        return None


@dataclass
class Database:
    name: str
    tables: list[Table] = field(default_factory=list)

    def table(self, name: str) -> Table | None:
        for tab in self.tables:
            if tab.name == name:
                return tab
        return None


@dataclass
class Question:
    id: str
    db: str
    gold_tables: list[str]
    sql: str


class Problems:
    """Collects problem messages."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, where: str, message: str) -> None:
        self.items.append(f"{where}: {message}")


class DuplicateKeyError(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateKeyError(f"duplicate JSON key {key!r}")
        result[key] = value
    return result


def load_json(path: Path, problems: Problems) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        problems.add(str(path), f"cannot read: {exc}")
        return None
    try:
        data: object = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except (json.JSONDecodeError, DuplicateKeyError) as exc:
        problems.add(str(path), f"invalid JSON: {exc}")
        return None
    return data


def check_keys(
    obj: object, keys: list[str], where: str, problems: Problems
) -> TypeGuard[dict[str, object]]:
    """Check that ``obj`` is an object with exactly ``keys`` in this order."""
    if not isinstance(obj, dict):
        problems.add(where, f"expected an object, got {type(obj).__name__}")
        return False
    actual = list(obj.keys())
    if actual != keys:
        missing = [k for k in keys if k not in obj]
        extra = [k for k in actual if k not in keys]
        if missing or extra:
            problems.add(where, f"wrong keys (missing {missing}, unexpected {extra})")
        else:
            problems.add(where, f"keys out of order: {actual}, expected {keys}")
        return False
    return True


def get_str(
    obj: dict[str, object],
    key: str,
    where: str,
    problems: Problems,
    *,
    allow_empty: bool = False,
) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        problems.add(where, f"{key!r} must be a string")
        return ""
    if not allow_empty and not value.strip():
        problems.add(where, f"{key!r} must not be empty")
    return value


def get_list(obj: dict[str, object], key: str, where: str, problems: Problems) -> list[object]:
    value = obj.get(key)
    if not isinstance(value, list):
        problems.add(where, f"{key!r} must be a list")
        return []
    return value


def check_identifier(name: str, where: str, problems: Problems) -> None:
    if name and not IDENT_RE.match(name):
        problems.add(where, f"{name!r} is not a plain SQL identifier")


def type_affinity(decl: str) -> str:
    """SQLite column affinity of a declared type (SQLite docs, section 3.1)."""
    upper = decl.upper()
    if "INT" in upper:
        return "INTEGER"
    if any(s in upper for s in ("CHAR", "CLOB", "TEXT")):
        return "TEXT"
    if "BLOB" in upper or not upper:
        return "BLOB"
    if any(s in upper for s in ("REAL", "FLOA", "DOUB")):
        return "REAL"
    return "NUMERIC"


def parse_column(obj: object, where: str, problems: Problems) -> Column | None:
    if not check_keys(obj, COLUMN_KEYS, where, problems):
        return None
    name = get_str(obj, "name", where, problems)
    check_identifier(name, where, problems)
    get_str(obj, "nl_name", where, problems)
    typ = get_str(obj, "type", where, problems)
    if typ and not TYPE_RE.match(typ):
        problems.add(where, f"unsupported column type {typ!r}")
    get_str(obj, "description", where, problems, allow_empty=True)
    return Column(name, typ)


def parse_table(obj: object, where: str, problems: Problems) -> Table | None:
    if not check_keys(obj, TABLE_KEYS, where, problems):
        return None
    name = get_str(obj, "name", where, problems)
    check_identifier(name, where, problems)
    where = f"{where} ({name})"
    get_str(obj, "nl_name", where, problems)
    get_str(obj, "description", where, problems)
    table = Table(name)

    seen: set[str] = set()
    for i, col_obj in enumerate(get_list(obj, "columns", where, problems)):
        col = parse_column(col_obj, f"{where} column #{i}", problems)
        if col is None:
            continue
        if col.name.lower() in seen:
            problems.add(f"{where} column {col.name!r}", "duplicate column name")
        seen.add(col.name.lower())
        table.columns.append(col)
    if not table.columns:
        problems.add(where, "table has no columns")

    pk = get_list(obj, "primary_key", where, problems)
    if not pk:
        problems.add(where, "empty primary key")
    for pk_col in pk:
        if not isinstance(pk_col, str):
            problems.add(where, f"primary key entry {pk_col!r} is not a string")
        elif table.column(pk_col) is None:
            problems.add(where, f"primary key column {pk_col!r} does not exist")
        elif pk_col in table.primary_key:
            problems.add(where, f"primary key column {pk_col!r} listed twice")
        else:
            table.primary_key.append(pk_col)

    for i, fk_obj in enumerate(get_list(obj, "foreign_keys", where, problems)):
        fk_where = f"{where} foreign key #{i}"
        if not check_keys(fk_obj, FK_KEYS, fk_where, problems):
            continue
        fk = ForeignKey(
            get_str(fk_obj, "column", fk_where, problems),
            get_str(fk_obj, "ref_table", fk_where, problems),
            get_str(fk_obj, "ref_column", fk_where, problems),
        )
        if table.column(fk.column) is None:
            problems.add(fk_where, f"column {fk.column!r} does not exist")
        table.foreign_keys.append(fk)
    return table


def parse_catalog(data: object, problems: Problems) -> list[Database]:
    if not check_keys(data, CATALOG_KEYS, "catalog", problems):
        return []
    if data["format"] != CATALOG_FORMAT:
        problems.add("catalog", f"format must be {CATALOG_FORMAT!r}")
    if data["version"] != CATALOG_VERSION or isinstance(data["version"], bool):
        problems.add("catalog", f"version must be {CATALOG_VERSION}")

    databases: list[Database] = []
    db_names: set[str] = set()
    for i, db_obj in enumerate(get_list(data, "databases", "catalog", problems)):
        where = f"database #{i}"
        if not check_keys(db_obj, DATABASE_KEYS, where, problems):
            continue
        name = get_str(db_obj, "name", where, problems)
        check_identifier(name, where, problems)
        where = f"database {name!r}"
        if name.lower() in db_names:
            problems.add(where, "duplicate database name")
        db_names.add(name.lower())
        get_str(db_obj, "description", where, problems)
        db = Database(name)
        table_names: set[str] = set()
        for j, tab_obj in enumerate(get_list(db_obj, "tables", where, problems)):
            table = parse_table(tab_obj, f"{where} table #{j}", problems)
            if table is None:
                continue
            if table.name.lower() in table_names:
                problems.add(f"table {name}.{table.name}", "duplicate table name in database")
            table_names.add(table.name.lower())
            db.tables.append(table)
        databases.append(db)

    for db in databases:
        check_foreign_keys(db, problems)
    return databases


def check_foreign_keys(db: Database, problems: Problems) -> None:
    for table in db.tables:
        seen: set[tuple[str, str, str]] = set()
        for fk in table.foreign_keys:
            source = f"{db.name}.{table.name}.{fk.column}"
            where = f"foreign key {source} -> {fk.ref_table}.{fk.ref_column}"
            key = (fk.column, fk.ref_table, fk.ref_column)
            if key in seen:
                problems.add(where, "duplicate foreign key")
            seen.add(key)
            ref = db.table(fk.ref_table)
            if ref is None:
                problems.add(
                    where,
                    f"table {fk.ref_table!r} does not exist in database {db.name!r}",
                )
                continue
            ref_col = ref.column(fk.ref_column)
            if ref_col is None:
                problems.add(
                    where,
                    f"column {fk.ref_column!r} does not exist in {fk.ref_table!r}",
                )
                continue
            if fk.ref_column not in ref.primary_key:
                problems.add(where, "referenced column is not part of the primary key")
            col = table.column(fk.column)
            if col is not None and type_affinity(col.type) != type_affinity(ref_col.type):
                problems.add(where, f"type mismatch ({col.type!r} vs {ref_col.type!r})")


def parse_questions(data: object, databases: list[Database], problems: Problems) -> list[Question]:
    if not isinstance(data, list):
        problems.add("questions", "expected a JSON list")
        return []
    by_name = {db.name: db for db in databases}
    questions: list[Question] = []
    ids: set[str] = set()
    for i, obj in enumerate(data):
        where = f"question #{i}"
        if not check_keys(obj, QUESTION_KEYS, where, problems):
            continue
        qid = get_str(obj, "id", where, problems)
        where = f"question {qid!r}"
        if qid and not QUESTION_ID_RE.match(qid):
            problems.add(where, "id must look like '<db>-NN'")
        if qid in ids:
            problems.add(where, "duplicate id")
        ids.add(qid)
        db_name = get_str(obj, "db", where, problems)
        get_str(obj, "question", where, problems)
        sql = get_str(obj, "sql", where, problems)
        db = by_name.get(db_name)
        if db is None:
            problems.add(where, f"unknown database {db_name!r}")
        elif not qid.startswith(f"{db_name}-"):
            problems.add(where, f"id does not start with its database name {db_name!r}")
        gold: list[str] = []
        for entry in get_list(obj, "gold_tables", where, problems):
            if not isinstance(entry, str) or entry.count(".") != 1:
                problems.add(where, f"gold table {entry!r} is not 'db.table'")
                continue
            gdb, gtab = entry.split(".")
            if gdb != db_name:
                problems.add(where, f"gold table {entry!r} is not in database {db_name!r}")
            elif db is not None and db.table(gtab) is None:
                problems.add(where, f"gold table {entry!r} does not exist")
            if gtab in gold:
                problems.add(where, f"gold table {entry!r} listed twice")
            gold.append(gtab)
        if not gold:
            problems.add(where, "no gold tables")
        questions.append(Question(qid, db_name, gold, sql))
    return questions


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def create_sql(table: Table) -> str:
    parts = [f"  {quote(c.name)} {c.type}" for c in table.columns]
    parts.append(f"  PRIMARY KEY ({', '.join(quote(c) for c in table.primary_key)})")
    for fk in table.foreign_keys:
        ref = f"{quote(fk.ref_table)} ({quote(fk.ref_column)})"
        parts.append(f"  FOREIGN KEY ({quote(fk.column)}) REFERENCES {ref}")
    return f"CREATE TABLE {quote(table.name)} (\n" + ",\n".join(parts) + "\n)"


def build_sqlite(db: Database, problems: Problems) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("PRAGMA foreign_keys = ON")
    for table in db.tables:
        try:
            conn.execute(create_sql(table))
        except sqlite3.Error as exc:
            problems.add(f"table {db.name}.{table.name}", f"CREATE TABLE failed: {exc}")
    # Make SQLite resolve every foreign key: on an empty table, DELETE and INSERT
    # prepare the FK checks and fail on a missing parent or a non-unique parent key.
    for table in db.tables:
        for stmt in (
            f"DELETE FROM {quote(table.name)}",
            f"EXPLAIN INSERT INTO {quote(table.name)} DEFAULT VALUES",
        ):
            try:
                conn.execute(stmt).fetchall()
            except sqlite3.Error as exc:
                problems.add(
                    f"table {db.name}.{table.name}",
                    f"SQLite rejects its foreign keys: {exc}",
                )
                break
    return conn


def tables_by_authorizer(conn: sqlite3.Connection, sql: str) -> tuple[set[str], list[str]]:
    """Run ``sql`` and return (tables read, disallowed actions) as seen by SQLite."""
    read: set[str] = set()
    denied: list[str] = []

    def authorizer(
        action: int,
        arg1: str | None,
        arg2: str | None,
        db_name: str | None,
        source: str | None,
    ) -> int:
        if action not in READ_ONLY_ACTIONS:
            denied.append(f"action {action} ({arg1}, {arg2})")
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_READ and arg1 is not None and not arg1.startswith("sqlite_"):
            read.add(arg1.lower())
        return sqlite3.SQLITE_OK

    conn.set_authorizer(authorizer)
    try:
        conn.execute(sql).fetchall()
    finally:
        conn.set_authorizer(None)
    return read, denied


def tables_by_tokens(sql: str, table_names: set[str]) -> set[str]:
    """Lower-cased table names of the database that appear as identifiers in ``sql``."""
    stripped = SQL_SKIP_RE.sub(" ", sql)
    found: set[str] = set()
    for match in SQL_IDENT_RE.finditer(stripped):
        ident = next(g for g in match.groups() if g is not None).replace('""', '"').lower()
        if ident in table_names:
            found.add(ident)
    return found


def check_question_sql(
    question: Question, db: Database, conn: sqlite3.Connection, problems: Problems
) -> None:
    where = f"question {question.id!r}"
    if not re.match(r"^\s*(SELECT|WITH)\b", question.sql, re.IGNORECASE):
        problems.add(where, "gold SQL must be a SELECT (or WITH ... SELECT) query")
    canonical = {t.name.lower(): t.name for t in db.tables}
    gold = {t.lower() for t in question.gold_tables}
    try:
        read, denied = tables_by_authorizer(conn, question.sql)
    except (sqlite3.Error, sqlite3.Warning) as exc:
        problems.add(where, f"gold SQL fails in SQLite: {exc}")
        return
    if denied:
        problems.add(where, f"gold SQL is not read-only: {', '.join(denied)}")

    def show(names: set[str]) -> str:
        return ", ".join(sorted(f"{db.name}.{canonical.get(n, n)}" for n in names))

    if read != gold:
        problems.add(
            where,
            f"SQLite reads [{show(read)}] but gold_tables is [{show(gold)}]",
        )
    tokens = tables_by_tokens(question.sql, set(canonical))
    if tokens != gold:
        extra, missing = tokens - gold, gold - tokens
        detail = []
        if missing:
            detail.append(f"gold tables not named in SQL: {show(missing)}")
        if extra:
            detail.append(f"non-gold tables named in SQL: {show(extra)}")
        problems.add(where, "; ".join(detail))


def check_sizes(databases: list[Database], questions: list[Question], problems: Problems) -> None:
    def within(value: int, bounds: tuple[int, int]) -> bool:
        return bounds[0] <= value <= bounds[1]

    if not within(len(databases), DATABASES_RANGE):
        problems.add("catalog", f"{len(databases)} databases, expected {DATABASES_RANGE}")
    total = sum(len(db.tables) for db in databases)
    if not within(total, TABLES_TOTAL_RANGE):
        problems.add("catalog", f"{total} tables in total, expected {TABLES_TOTAL_RANGE}")
    per_db = Counter(q.db for q in questions)
    for db in databases:
        if not within(len(db.tables), TABLES_PER_DB_RANGE):
            problems.add(
                f"database {db.name!r}",
                f"{len(db.tables)} tables, expected {TABLES_PER_DB_RANGE}",
            )
        if per_db[db.name] == 0:
            problems.add(f"database {db.name!r}", "no questions")
    if not within(len(questions), QUESTIONS_RANGE):
        problems.add("questions", f"{len(questions)} questions, expected {QUESTIONS_RANGE}")
    for q in questions:
        if not within(len(q.gold_tables), GOLD_TABLES_RANGE):
            problems.add(
                f"question {q.id!r}",
                f"{len(q.gold_tables)} gold tables, expected {GOLD_TABLES_RANGE}",
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--catalog", type=Path, default=DEMO_DIR / "catalog.json")
    parser.add_argument("--questions", type=Path, default=DEMO_DIR / "questions.json")
    args = parser.parse_args(argv)

    problems = Problems()
    catalog_data = load_json(args.catalog, problems)
    questions_data = load_json(args.questions, problems)
    databases = parse_catalog(catalog_data, problems) if catalog_data is not None else []
    questions = (
        parse_questions(questions_data, databases, problems) if questions_data is not None else []
    )

    by_name = {db.name: db for db in databases}
    for db in databases:
        conn = build_sqlite(db, problems)
        try:
            for question in questions:
                if question.db == db.name:
                    check_question_sql(question, db, conn, problems)
        finally:
            conn.close()
    check_sizes(databases, questions, problems)

    n_tables = sum(len(db.tables) for db in databases)
    n_columns = sum(len(t.columns) for db in databases for t in db.tables)
    n_fks = sum(len(t.foreign_keys) for db in databases for t in db.tables)
    print(f"databases: {len(databases)}")
    print(f"tables: {n_tables}")
    print(f"columns: {n_columns}")
    print(f"foreign keys: {n_fks}")
    print(f"questions: {len(questions)}")
    by_size = Counter(len(q.gold_tables) for q in questions)
    print(
        "questions by number of gold tables: "
        + ", ".join(f"{k}: {by_size[k]}" for k in sorted(by_size))
    )
    per_db = Counter(q.db for q in questions)
    for db in databases:
        print(f"  {db.name}: {len(db.tables)} tables, {per_db[db.name]} questions")
    unknown = sorted({q.db for q in questions} - set(by_name))
    if unknown:
        print(f"  questions for unknown databases: {', '.join(unknown)}")

    if problems.items:
        print(f"\nFAILED: {len(problems.items)} problem(s)", file=sys.stderr)
        for item in problems.items:
            print(f"  - {item}", file=sys.stderr)
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
