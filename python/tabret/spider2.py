"""Spider 2.0-lite: its schema file as a :class:`~tabret.Catalog`, and gold tables read from its
gold SQL with a real SQL parser (sqlglot, the ``benchmarks`` extra).

Files (under ``$TABRET_DATA_DIR/spider2-lite``): ``spider2_lite_schema.json.gz`` (162 databases,
8,255 tables, 532,388 columns; ``{db: [{engine, table_fullname, column_names, column_types,
…}]}``), ``spider2-lite.jsonl`` (547 questions) and ``gold_sql.json`` (``{instance_id: SQL}``,
public for 250 of them), ``external_knowledge_documents.json`` (``{file name: Markdown}``, 69
documents; a question's ``external_knowledge`` names the one given with it).

Gold tables of a question (:func:`gold_tables`): every table its gold SQL reads, from the
scopes of every query in it (``WITH`` names and aliases resolved away, also a recursive CTE's
reference to itself and CTE names in another case), parsed in the dialect of the database's
engine (BigQuery, Snowflake or SQLite). A name matches the question's database's tables by
its trailing parts (``project.dataset.table``, ``DB.SCHEMA.TABLE`` or ``table``, compared
case-insensitively, blanks around parts dropped); a three-part name that matches nothing is
matched again without its first part (a Snowflake question reading another database's copy of
the same schema). A wildcard table (``ga_sessions_*``, with ``_TABLE_SUFFIX``) is the
*family* of the database's tables it matches: one gold item that any member satisfies.
"""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabret import _core, _json
from tabret.catalog import Catalog
from tabret.datasets import data_dir

__all__ = [
    "GoldTables",
    "dialect",
    "gold_tables",
    "knowledge_documents",
    "question_knowledge",
    "read_schema",
    "spider2_catalog",
    "sql_table_names",
]

SCHEMA = "spider2-lite/spider2_lite_schema.json.gz"
QUESTIONS = "spider2-lite/spider2-lite.jsonl"
GOLD_SQL = "spider2-lite/gold_sql.json"
DOCUMENTS = "spider2-lite/external_knowledge_documents.json"

#: The sqlglot dialect of each engine of the schema file.
DIALECTS = {"bigquery": "bigquery", "snowflake": "snowflake", "sqlite": "sqlite"}

Schema = dict[str, list[dict[str, Any]]]


def read_schema(root: Path | None = None) -> Schema:
    """The schema file: database -> its tables (dicts of the upstream per-table JSON)."""
    raw: Schema = _json.read_file((root or data_dir()) / SCHEMA)
    return raw


def knowledge_documents(root: Path | None = None) -> dict[str, str]:
    """The external-knowledge documents: file name -> Markdown text.

    Raises :class:`tabret.FileError` if the file is missing and :class:`tabret.SchemaError`
    (naming it) unless it maps names to strings."""
    path = (root or data_dir()) / DOCUMENTS
    raw = _json.read_file(path)
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise _core.SchemaError(f"{path}: expected an object of document name -> text")
    return raw


def question_knowledge(question: dict[str, Any], documents: dict[str, str], path: Path) -> str:
    """The text of the document a question line names in ``external_knowledge`` ("" if none);
    :class:`tabret.SchemaError` naming the question file and instance when it is not among
    ``documents``."""
    name = question.get("external_knowledge")
    if not name:
        return ""
    if name not in documents:
        raise _core.SchemaError(
            f"{path}: {question.get('instance_id')}: unknown external knowledge document "
            f"'{name}' (not in {DOCUMENTS})"
        )
    return documents[name].strip()


def names(value: Any) -> list[str]:
    """A list field, stored either as a list or as its Python repr."""
    return [str(x) for x in _literal(value)]


def distinct(items: list[str]) -> list[tuple[int, str]]:
    """(position, name) of the first of each case-insensitively equal name (tabret rejects
    duplicate column names; the Spider 2.0 schemas have a few that differ only in case)."""
    seen: set[str] = set()
    out = []
    for i, name in enumerate(items):
        if name.lower() not in seen:
            seen.add(name.lower())
            out.append((i, name))
    return out


def _literal(value: Any) -> Any:
    """A field stored either as itself or as its Python repr."""
    return ast.literal_eval(value) if isinstance(value, str) else value


def column_descriptions(table: dict[str, Any], columns: list[str]) -> list[str]:
    """The descriptions of a table's ``columns`` from its ``description`` field: a list aligned
    with ``column_names``, or (for tables with nested fields) with ``extra``'s
    ``nested_column_names``, matched by name; ``None`` and blanks become "". A list that
    aligns with neither gives no descriptions."""
    parsed = _literal(table.get("description") or "[]")
    if not isinstance(parsed, list):
        return [""] * len(columns)
    text = ["" if d is None else " ".join(str(d).split()) for d in parsed]
    if len(text) == len(columns):
        return text
    extra = _literal(table.get("extra") or "{}")
    nested = extra.get("nested_column_names") if isinstance(extra, dict) else None
    if not isinstance(nested, list) or len(nested) != len(text):
        return [""] * len(columns)
    by_name: dict[str, str] = {}
    for name, description in zip(nested, text, strict=True):
        by_name.setdefault(str(name), description)
    return [by_name.get(c, "") for c in columns]


def build_catalog(raw: Schema, max_columns: int = 0) -> tuple[Catalog, dict[str, list[int]]]:
    """The catalog of ``raw`` and, per database key, the ids of its tables in file order.

    A database per key, named by it; a table per entry, named by its ``table_fullname``; a
    column's description is its entry of the table's ``description`` list. A few
    database names differ only in case (``austin`` on BigQuery, ``AUSTIN`` on Snowflake);
    tabret's names are case-insensitive, so a later one gets ``_2`` appended (likewise tables).
    With ``max_columns``, whole tables in file order until that many columns."""
    cat = Catalog()
    ids: dict[str, list[int]] = {}
    columns = 0
    for key, tables in raw.items():
        if max_columns and columns >= max_columns:
            break
        db_name = key
        while cat.find_database(db_name) is not None:
            db_name += "_2"
        db = cat.add_database(db_name)
        ids[key] = []
        for table in tables:
            if max_columns and columns >= max_columns:
                break
            table_name = table["table_fullname"]
            while cat.find_table(db_name, table_name) is not None:
                table_name += "_2"
            t = cat.add_table(db, table_name)
            ids[key].append(t)
            types = names(table["column_types"])
            all_columns = names(table["column_names"])
            described = column_descriptions(table, all_columns)
            for i, column in distinct(all_columns):
                kind = types[i] if i < len(types) else ""
                cat.add_column(t, column, kind, description=described[i])
                columns += 1
    return cat, ids


def spider2_catalog(root: Path | None = None, max_columns: int = 0) -> Catalog:
    """Spider 2.0-lite's 162 databases as one catalog (see :func:`build_catalog`)."""
    return build_catalog(read_schema(root), max_columns)[0]


def database_key(raw: Schema, db: str) -> str | None:
    """The schema key of a question's ``db``: the same name, else the one name equal to it
    case-insensitively with ``-`` read as ``_`` (``Db-IMDB`` is ``DB_IMDB`` there)."""
    if db in raw:
        return db
    norm = db.casefold().replace("-", "_")
    found = [k for k in raw if k.casefold().replace("-", "_") == norm]
    return found[0] if len(found) == 1 else None


def dialect(raw: Schema, key: str) -> str:
    """The sqlglot dialect of a database of the schema file (by its tables' engine)."""
    return DIALECTS[raw[key][0]["engine"]]


def _sqlglot() -> Any:
    try:
        import sqlglot
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "Spider 2.0-lite's gold tables need sqlglot: pip install 'tabret[benchmarks]'"
        ) from err
    return sqlglot


def _outer_queries(statement: Any, exp: Any) -> Iterator[Any]:
    """The queries of a statement that no other query contains (a ``CREATE … AS SELECT``'s
    select, a ``DECLARE``'s subquery, or the statement itself)."""
    if isinstance(statement, exp.Query):
        yield statement
        return
    for query in statement.find_all(exp.Query):
        if query.find_ancestor(exp.Query) is None:
            yield query


def sql_table_names(sql: str, dialect: str) -> list[tuple[str, ...]]:
    """The tables a SQL script reads, as name parts (``(project, dataset, table)``, ``(table)``
    …), first-seen order, without CTE names and aliases. Raises ``sqlglot`` errors for SQL it
    cannot parse."""
    sqlglot = _sqlglot()
    from sqlglot import exp
    from sqlglot.optimizer.scope import traverse_scope

    out: list[tuple[str, ...]] = []
    for statement in sqlglot.parse(sql, read=dialect):
        if statement is None:
            continue
        ctes = {cte.alias.casefold() for cte in statement.find_all(exp.CTE)}
        for query in _outer_queries(statement, exp):
            for scope in traverse_scope(query):
                for source in scope.sources.values():
                    if not isinstance(source, exp.Table):
                        continue
                    parts = tuple(p for p in (source.catalog, source.db, source.name) if p)
                    if len(parts) == 1 and parts[0].casefold() in ctes:
                        continue  # a recursive CTE's self-reference, or a CTE in another case
                    out.append(parts)
    return list(dict.fromkeys(out))


def _key(parts: Sequence[str]) -> tuple[str, ...]:
    return tuple(p.strip().casefold() for p in parts)


def _match(ref: tuple[str, ...], tables: list[tuple[str, ...]]) -> list[int]:
    """Positions of the tables whose trailing name parts match ``ref`` (a ``*`` in its last
    part matches any characters)."""
    n = len(ref)
    if "*" in ref[-1]:
        return [
            i
            for i, t in enumerate(tables)
            if len(t) >= n and t[-n:-1] == ref[:-1] and fnmatch.fnmatchcase(t[-1], ref[-1])
        ]
    return [i for i, t in enumerate(tables) if t[-n:] == ref]


@dataclass(frozen=True)
class GoldTables:
    """A question's gold as positions in its database's table list: ``tables`` in first-seen
    order, and for each wildcard the ``families`` of tables it matches (its first member is
    the one in ``tables``); ``problem`` says why there is no gold (then ``tables`` is empty)."""

    tables: tuple[int, ...] = ()
    families: tuple[tuple[int, ...], ...] = ()
    problem: str = ""


def gold_tables(sql: str, dialect: str, table_names: Sequence[str]) -> GoldTables:
    """The gold of ``sql`` among one database's tables (their ``table_fullname``s)."""
    try:
        refs = sql_table_names(sql, dialect)
    except _sqlglot().errors.SqlglotError as err:  # ParseError, TokenError, OptimizeError …
        return GoldTables(problem=f"parse failure ({type(err).__name__})")
    if not refs:
        return GoldTables(problem="no table in the SQL")
    tables = [_key(name.split(".")) for name in table_names]
    gold: list[int] = []
    families: list[tuple[int, ...]] = []
    for parts in refs:
        ref = _key(parts)
        found = _match(ref, tables)
        if not found and len(ref) == 3:
            found = _match(ref[1:], tables)
        if not found or ("*" not in ref[-1] and len(found) > 1):
            what = "ambiguous table" if found else "no table in its database named"
            return GoldTables(problem=f"{what} {'.'.join(parts)}")
        if found[0] not in gold:
            gold.append(found[0])
            if "*" in ref[-1]:
                families.append(tuple(found))
    return GoldTables(tuple(gold), tuple(families))
