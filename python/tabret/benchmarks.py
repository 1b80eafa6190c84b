"""Benchmarks with gold tables: SpiderUnion, BirdUnion (from ``$TABRET_DATA_DIR``) and the demo.

- SpiderUnion: the 658 Spider dev questions whose SQL has no ``*``; corpus = all 166 Spider
  databases (876 tables). Questions and gold tables from ``murre/dataset/spider/dev.json``.
- BirdUnion: the 1,534 BIRD dev questions; corpus = the 11 dev databases (75 tables).
  Questions and gold tables from ``murre/dataset/bird/dev.json``, the *intermediate* BIRD
  revision (MURRE's); ``bird/dev.json`` is newer and CRUSH's file older.

Dev-DB corpora (the greedy join paper's setting, Table 7), questions from ``jar/data/*/dev.json``
(so JAR's recorded decompositions replay exactly):
- spider-dev: the 1,034 Spider dev questions over the 20 dev databases (81 tables of
  ``spider/tables.json``); gold tables = every table of the parsed gold SQL of
  ``spider/dev.json`` (nested queries and set operations included), gold columns likewise.
- bird-dev: the 1,534 BIRD dev questions (newest revision) over the 11 dev databases; gold
  tables = the tables named after FROM/JOIN in the gold SQL.
- spider-dev-multi / bird-dev-multi: only the questions with at least two gold tables (459 and
  1,171; the paper counts 1,172 for BIRD with a different SQL parser).

Spider 2.0-lite (:mod:`tabret.spider2`): ``spider2-lite``, the 248 questions whose public gold
SQL resolves, over the union of its 162 warehouses (8,255 tables); ``spider2-lite-db``, the same
with each question searching its own database only (``per_database``: split by
:func:`database_benchmarks`, an index per database, results merged with
:func:`tabret.eval.merge_results`). A user's own questions: :func:`questions_benchmark`.

Gold columns (``BenchmarkQuestion.gold_columns``, for column-level metrics):
- SpiderUnion: every column the parsed gold SQL of ``spider/dev.json`` mentions (``*`` excluded),
  matched to MURRE's questions by (db_id, question text).
- BirdUnion: ``schema_elements`` of ``crush4sql/data/bird_dev.json`` (the *oldest* revision),
  matched by normalised question text; questions missing there keep ``()`` and are not scored
  at column level.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tabret import _core, _json, _text
from tabret.catalog import Catalog
from tabret.datasets import data_dir, demo_catalog, demo_questions

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "BenchmarkQuestion",
    "database_benchmarks",
    "load_benchmark",
    "questions_benchmark",
    "sql_columns",
    "sql_tables",
]


@dataclass(frozen=True)
class BenchmarkQuestion:
    id: str
    db: str
    question: str
    gold_tables: tuple[int, ...]  # table ids in the benchmark's catalog
    gold_columns: tuple[int, ...] = ()  # column ids in the catalog; empty when unknown
    # table families (a wildcard such as ``ga_sessions_*``): one gold item that any member
    # satisfies; the family's first member is the one in ``gold_tables``
    families: tuple[tuple[int, ...], ...] = ()
    # external knowledge given with the question (BIRD's evidence, the Spider 2.0-lite document
    # the question names, a --questions file's "knowledge"); empty when there is none
    knowledge: str = ""


@dataclass(frozen=True)
class Benchmark:
    name: str
    catalog: Catalog
    questions: list[BenchmarkQuestion]
    source: str  # which files (and which BIRD revision) the gold comes from
    # each question searches only its own database's tables (``database_benchmarks``)
    per_database: bool = False
    # documents shipped with a database (database name -> texts; Spider 2.0-lite's external
    # knowledge documents, by the databases whose questions name them): ``with_documents``
    documents: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def column_questions(self) -> int:
        """How many questions have gold columns (are scored at column level)."""
        return sum(1 for q in self.questions if q.gold_columns)


def _read_questions(path: Path, fields: tuple[str, ...]) -> list[dict[str, Any]]:
    """A benchmark's question file: a JSON list of objects that all have ``fields``.

    Raises :class:`tabret.FileError` for a missing file, :class:`tabret.ParseError` with the
    line for invalid JSON and :class:`tabret.SchemaError` naming the entry and the field."""
    raw = _json.read_file(path)
    if not isinstance(raw, list):
        raise _core.SchemaError(f"{path}: expected a JSON list of questions")
    for i, q in enumerate(raw):
        if not isinstance(q, dict):
            raise _core.SchemaError(f"{path}: question {i} is not an object")
        for name in fields:
            if name not in q:
                raise _core.SchemaError(f"{path}: question {i}: missing field '{name}'")
    return raw


def _check_database(cat: Catalog, path: Path, i: int, db: str) -> int:
    """The id of question ``i``'s database; :class:`tabret.SchemaError` if the catalog lacks it."""
    found = cat.find_database(db)
    if found is None:
        raise _core.SchemaError(f"{path}: question {i}: unknown database '{db}'")
    return found


def _tables_by_nl_name(cat: Catalog) -> dict[tuple[str, str], int | None]:
    """(db, natural-language table name) -> table id, lower-cased; None where two tables of a
    database share the name (a gold entry naming it would be ambiguous)."""
    by_nl: dict[tuple[str, str], int | None] = {}
    for t_id, table in enumerate(cat.tables):
        key = (cat.database(table.database).name.lower(), table.nl_name.lower())
        by_nl[key] = None if key in by_nl else t_id
    return by_nl


def _gold_from_rel_schema(
    by_nl: dict[tuple[str, str], int | None], db: str, rel_schema: list[str], where: str
) -> tuple[int, ...]:
    """``rel_schema`` names tables by natural-language name (``db.table name(cols…)``)."""
    gold = []
    for item in rel_schema:
        db_name, rest = item.split(".", 1)
        name = rest.split("(", 1)[0].strip().lower()
        t = by_nl.get((db_name.lower(), name))
        if t is None or db_name != db:
            raise ValueError(
                f"{where}: gold table '{db_name}.{name}' is not in the catalog or is ambiguous"
            )
        gold.append(t)
    return tuple(dict.fromkeys(gold))


def _murre(name: str, tables: str, questions: str, source: str, root: Path | None) -> Benchmark:
    root = root or data_dir()
    cat = Catalog.from_spider_json(root / tables)
    path = root / questions
    raw = _read_questions(path, ("id", "db_id", "utterance", "rel_schema"))
    by_nl = _tables_by_nl_name(cat)
    qs = []
    for i, q in enumerate(raw):
        _check_database(cat, path, i, q["db_id"])
        gold = _gold_from_rel_schema(
            by_nl, q["db_id"], q["rel_schema"], f"{path} question {q['id']}"
        )
        qs.append(BenchmarkQuestion(str(q["id"]), q["db_id"], q["utterance"], gold))
    return Benchmark(name, cat, qs, source)


# --- Spider parsed SQL -> column indexes ----------------------------------------------------
#
# The parsed ``sql`` of Spider's dev.json:
#   sql       = {select, from, where, groupBy, orderBy, having, limit, intersect, union, except}
#   select    = [is_distinct, [[agg_id, val_unit], ...]]
#   from      = {"table_units": [["table_unit", table_id] | ["sql", sql], ...], "conds": conds}
#   conds     = [cond_unit, "and" | "or", cond_unit, ...]   (where, having, from.conds)
#   cond_unit = [not_op, op_id, val_unit, val1, val2]; val1/val2: a value, a col_unit or a sql
#   val_unit  = [unit_op, col_unit, col_unit | None]
#   col_unit  = [agg_id, col_id, is_distinct]                (col_id 0 is "*")
#   groupBy   = [col_unit, ...];  orderBy = [] | ["asc" | "desc", [val_unit, ...]]


def _is_sql(x: object) -> bool:
    return isinstance(x, dict) and "select" in x


def _col_unit(cu: Any) -> Iterator[int]:
    if isinstance(cu, list) and len(cu) == 3 and isinstance(cu[1], int):
        yield cu[1]


def _val_unit(vu: Any) -> Iterator[int]:
    if vu:
        _, left, right = vu
        yield from _col_unit(left)
        if right is not None:
            yield from _col_unit(right)


def _value(v: Any) -> Iterator[int]:
    """A condition's right-hand side: a nested query, a column, or a literal (nothing)."""
    if _is_sql(v):
        yield from _sql(v)
    elif isinstance(v, list):
        yield from _col_unit(v)


def _conds(conds: list[Any]) -> Iterator[int]:
    for cond in conds:
        if isinstance(cond, str):  # "and" / "or"
            continue
        _not, _op, vu, val1, val2 = cond
        yield from _val_unit(vu)
        yield from _value(val1)
        yield from _value(val2)


def _sql(sql: Mapping[str, Any]) -> Iterator[int]:
    for _agg, vu in sql["select"][1]:
        yield from _val_unit(vu)
    for kind, unit in sql["from"]["table_units"]:
        if kind == "sql":
            yield from _sql(unit)
    yield from _conds(sql["from"]["conds"])
    yield from _conds(sql["where"])
    for cu in sql["groupBy"]:
        yield from _col_unit(cu)
    yield from _conds(sql["having"])
    if sql["orderBy"]:
        for vu in sql["orderBy"][1]:
            yield from _val_unit(vu)
    for key in ("intersect", "union", "except"):
        if sql.get(key):
            yield from _sql(sql[key])


def sql_columns(sql: Mapping[str, Any]) -> tuple[int, ...]:
    """Per-database column indexes (Spider ``column_names`` order, ``*`` = 0 left out) that a
    parsed Spider SQL mentions anywhere, nested queries included; first-seen order."""
    return tuple(c for c in dict.fromkeys(_sql(sql)) if c != 0)


def _spider_column_ids(
    cat: Catalog, tables_path: Path, only_present: bool = False
) -> dict[str, list[int]]:
    """db_id -> global column id of each per-database column index (index 0, ``*``, -> -1).

    The catalog adds each database's columns in ``column_names`` order without ``*``, so index
    i >= 1 is the database's first column id + i - 1; checked here against the names."""
    out: dict[str, list[int]] = {}
    for db in _json.read_file(tables_path):
        db_id = cat.find_database(db["db_id"])
        if db_id is None and only_present:
            continue
        if db_id is None:
            raise ValueError(f"{tables_path}: database '{db['db_id']}' is not in the catalog")
        first = cat.table(cat.database(db_id).tables[0]).columns[0]
        ids = [-1]
        for i, (t, name) in enumerate(db["column_names_original"][1:], start=1):
            col = cat.column(first + i - 1)
            table = db["table_names_original"][t]
            if col.name != name or cat.table(col.table).name != table:
                raise ValueError(f"{tables_path}: column {db['db_id']}.{table}.{name} misplaced")
            ids.append(first + i - 1)
        out[db["db_id"]] = ids
    return out


def _spider_gold_columns(bench: Benchmark, root: Path) -> Benchmark:
    """Adds the gold columns of the parsed SQL in ``spider/dev.json`` to SpiderUnion."""
    col_ids = _spider_column_ids(bench.catalog, root / "spider/tables.json")
    dev = _json.read_file(root / "spider/dev.json")
    by_question = {(e["db_id"], e["question"]): e for e in dev}
    by_query = {(e["db_id"], " ".join(e["query"].split())): e for e in dev}
    murre = {str(q["id"]): q for q in _json.read_file(root / "murre/dataset/spider/dev.json")}
    questions = []
    for q in bench.questions:
        entry = by_question.get((q.db, q.question)) or by_query.get(
            (q.db, " ".join(murre[q.id]["query"].split()))
        )
        if entry is None:
            raise ValueError(f"SpiderUnion question {q.id} is not in spider/dev.json")
        gold = tuple(col_ids[q.db][c] for c in sql_columns(entry["sql"]))
        questions.append(replace(q, gold_columns=gold))
    return replace(bench, questions=questions)


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def _crush_gold_columns(bench: Benchmark, root: Path) -> tuple[Benchmark, int, int]:
    """Adds CRUSH's ``schema_elements`` to BirdUnion, matched by (db, normalised question).

    An element is ``[db, table, column]`` (lowercase original names) or ``[db, table]`` (a
    ``COUNT(*)``: no column). Returns the benchmark, how many questions found no single match
    and how many matched one with an element that names no catalog column (CRUSH's file has a
    few, e.g. an empty table for a sub-query alias); both kinds keep ``()``."""
    path = root / "crush4sql/data/bird_dev.json"
    cat = bench.catalog
    candidates: dict[tuple[str, str], list[tuple[int, ...] | None]] = {}
    for e in _json.read_file(path):
        cols: list[int] = []
        resolved = True
        for element in e["schema_elements"]:
            t = cat.find_table(element[0], element[1])
            c = cat.find_column(t, element[2]) if t is not None and len(element) == 3 else None
            if t is None or (c is None and len(element) == 3):
                resolved = False  # the question's gold would be incomplete
                break
            if c is not None:
                cols.append(c)
        key = (e["db_id"], _normalise(e["question"]))
        candidates.setdefault(key, []).append(tuple(dict.fromkeys(cols)) if resolved else None)
    questions, unmatched, broken = [], 0, 0
    for q in bench.questions:
        found = set(candidates.get((q.db, _normalise(q.question)), []))
        gold = found.pop() if len(found) == 1 else None
        if gold is not None:
            questions.append(replace(q, gold_columns=gold))
            continue
        questions.append(q)
        if found or not candidates.get((q.db, _normalise(q.question))):
            unmatched += 1  # absent from CRUSH's revision, or ambiguous there
        else:
            broken += 1
    return replace(bench, questions=questions), unmatched, broken


def _sql_table_units(sql: Mapping[str, Any]) -> Iterator[int]:
    for kind, unit in sql["from"]["table_units"]:
        if kind == "table_unit":
            yield unit
        else:
            yield from _sql_table_units(unit)
    for conds in (sql["where"], sql["having"], sql["from"]["conds"]):
        for cond in conds:
            if not isinstance(cond, str):
                for v in cond[3:5]:
                    if _is_sql(v):
                        yield from _sql_table_units(v)
    for key in ("intersect", "union", "except"):
        if sql.get(key):
            yield from _sql_table_units(sql[key])


def sql_tables(sql: Mapping[str, Any]) -> tuple[int, ...]:
    """Per-database table indexes that a parsed Spider SQL reads (nested queries and set
    operations included), first-seen order."""
    return tuple(dict.fromkeys(_sql_table_units(sql)))


_FROM_JOIN = re.compile(r"(?:FROM|JOIN)\s+(`[^`]+`|\"[^\"]+\"|\[[^\]]+\]|\w+)", re.IGNORECASE)


def _sql_text_tables(cat: Catalog, db: str, sql: str) -> tuple[int, ...]:
    """Catalog tables of ``db`` named after FROM or JOIN in a SQL string."""
    found = []
    for name in _FROM_JOIN.findall(sql):
        t = cat.find_table(db, name.strip('`"[]'))
        if t is not None:
            found.append(t)
    return tuple(dict.fromkeys(found))


def _sub_catalog(tables_path: Path, dbs: set[str]) -> Catalog:
    """The databases ``dbs`` of a Spider-format ``tables.json``, in file order."""
    entries = [e for e in _json.read_file(tables_path) if e["db_id"] in dbs]
    cat = Catalog()
    _core.add_spider_json_text(cat, json.dumps(entries), str(tables_path))
    return cat


def _only_multi(bench: Benchmark, name: str) -> Benchmark:
    qs = [q for q in bench.questions if len(q.gold_tables) >= 2]
    return replace(bench, name=name, questions=qs, source=f"{bench.source}; multi-table only")


def spider_dev(root: Path | None = None) -> Benchmark:
    root = root or data_dir()
    dev = _read_questions(root / "spider/dev.json", ("db_id", "question", "sql"))
    jar = _read_questions(root / "jar/data/spider/dev.json", ("question",))
    if len(dev) != len(jar):
        raise ValueError("spider/dev.json and jar/data/spider/dev.json differ in length")
    cat = _sub_catalog(root / "spider/tables.json", {e["db_id"] for e in dev})
    col_ids = _spider_column_ids(cat, root / "spider/tables.json", only_present=True)
    questions = []
    for i, (e, j) in enumerate(zip(dev, jar, strict=True)):
        if e["question"] != j["question"]:
            raise ValueError(f"spider dev question {i} differs between spider/ and jar/")
        db = _check_database(cat, root / "spider/dev.json", i, e["db_id"])
        tables = cat.database(db).tables
        questions.append(
            BenchmarkQuestion(
                str(i),
                e["db_id"],
                j["question"],
                tuple(tables[t] for t in sql_tables(e["sql"])),
                tuple(col_ids[e["db_id"]][c] for c in sql_columns(e["sql"])),
            )
        )
    source = (
        "Spider dev (jar/data/spider/dev.json) over its 20 DBs of spider/tables.json; gold "
        "tables and columns from the parsed SQL of spider/dev.json"
    )
    return Benchmark("spider-dev", cat, questions, source)


def bird_dev(root: Path | None = None) -> Benchmark:
    root = root or data_dir()
    cat = Catalog.from_spider_json(root / "bird/dev_tables.json")
    path = root / "jar/data/bird/dev.json"
    raw = _read_questions(path, ("question_id", "db_id", "question", "sql"))
    questions = []
    for i, e in enumerate(raw):
        _check_database(cat, path, i, e["db_id"])
        tables = _sql_text_tables(cat, e["db_id"], e["sql"])
        questions.append(
            BenchmarkQuestion(
                str(e["question_id"]), e["db_id"], e["question"], tables, knowledge=_evidence(e)
            )
        )
    source = (
        "BIRD dev, newest revision (jar/data/bird/dev.json); corpus bird/dev_tables.json; gold "
        "tables = FROM/JOIN names of the gold SQL"
    )
    return Benchmark("bird-dev", cat, questions, source)


def _evidence(entry: Mapping[str, Any]) -> str:
    """BIRD's evidence of one question ("" when absent or null)."""
    return str(entry.get("evidence") or "").strip()


def _bird_evidence(bench: Benchmark, root: Path) -> tuple[Benchmark, int]:
    """BirdUnion's questions (MURRE's revision, which has no evidence) with the evidence of
    the same (database, question text) in JAR's newest revision; returns how many matched."""
    path = root / "jar/data/bird/dev.json"
    raw = _read_questions(path, ("db_id", "question"))
    evidence = {(e["db_id"], _normalise(e["question"])): _evidence(e) for e in raw}
    questions = [
        replace(q, knowledge=evidence.get((q.db, _normalise(q.question)), ""))
        for q in bench.questions
    ]
    matched = sum(1 for q in questions if q.knowledge)
    return replace(bench, questions=questions), matched


def with_knowledge(bench: Benchmark) -> Benchmark:
    """``bench`` with each question's external knowledge appended to its text (a new line
    between), so that whatever embeds or matches the question sees it too; named
    ``<name>+knowledge``. Questions without knowledge keep their text."""
    questions = [
        replace(q, question=f"{q.question}\n{q.knowledge}") if q.knowledge else q
        for q in bench.questions
    ]
    given = sum(1 for q in bench.questions if q.knowledge)
    source = (
        f"{bench.source}; the question text is followed by its external knowledge "
        f"({given} of {len(questions)} questions have some)"
    )
    return replace(bench, name=f"{bench.name}+knowledge", questions=questions, source=source)


def with_documents(bench: Benchmark, max_chars: int = 1000) -> Benchmark:
    """``bench`` with the documents shipped with its databases attached to their tables
    (:func:`tabret.documents.attach_documents`: a table's description gains the passages that
    name it; embedded with the ``described`` table format); named ``<name>+documents``.
    Raises ``ValueError`` when the benchmark ships no documents."""
    from tabret.documents import attach_documents

    if not bench.documents:
        raise ValueError(f"benchmark '{bench.name}' ships no documents with its databases")
    catalog = attach_documents(bench.catalog, bench.documents, max_chars=max_chars)
    gained = sum(
        1
        for t in range(catalog.num_tables)
        if catalog.table(t).description != bench.catalog.table(t).description
    )
    n_docs = sum(len(texts) for texts in bench.documents.values())
    source = (
        f"{bench.source}; {n_docs} documents of {len(bench.documents)} databases attached: "
        f"{gained} tables gained the passages that name them"
    )
    return replace(bench, name=f"{bench.name}+documents", catalog=catalog, source=source)


def spider_dev_multi(root: Path | None = None) -> Benchmark:
    return _only_multi(spider_dev(root), "spider-dev-multi")


def bird_dev_multi(root: Path | None = None) -> Benchmark:
    return _only_multi(bird_dev(root), "bird-dev-multi")


def spider_union(root: Path | None = None) -> Benchmark:
    root = root or data_dir()
    bench = _murre(
        "spider-union",
        "spider/tables.json",
        "murre/dataset/spider/dev.json",
        "Spider dev without '*' (murre/dataset/spider/dev.json); corpus spider/tables.json; "
        "gold columns from the parsed SQL of spider/dev.json",
        root,
    )
    return _spider_gold_columns(bench, root)


def bird_union(root: Path | None = None) -> Benchmark:
    root = root or data_dir()
    bench = _murre(
        "bird-union",
        "bird/dev_tables.json",
        "murre/dataset/bird/dev.json",
        "BIRD dev, intermediate revision (murre/dataset/bird/dev.json); "
        "corpus bird/dev_tables.json",
        root,
    )
    bench, unmatched, broken = _crush_gold_columns(bench, root)
    bench, evidence = _bird_evidence(bench, root)
    source = (
        f"{bench.source}; gold columns from crush4sql/data/bird_dev.json (oldest revision) for "
        f"{bench.column_questions} questions ({unmatched} not in that revision, "
        f"{broken} with an unresolvable gold element); evidence (external knowledge) from "
        f"jar/data/bird/dev.json for {evidence} questions"
    )
    return replace(bench, source=source)


def bird_union_crush(root: Path | None = None) -> Benchmark:
    """BirdUnion restricted to the questions that CRUSH's recorded hallucinations cover
    (``crush4sql/data/bird_dev.json``, matched exactly, else loosely, by question text)."""
    from tabret.llms import crush_recordings

    root = root or data_dir()
    bench = bird_union(root)
    recorded = crush_recordings(root)
    questions = [q for q in bench.questions if q.question in recorded]
    source = (
        f"{bench.source}; only the {len(questions)} of {len(bench.questions)} questions with a "
        "recorded CRUSH hallucination (crush4sql/data/bird_dev.json)"
    )
    return replace(bench, name="bird-union-crush", questions=questions, source=source)


def spider2_lite(root: Path | None = None) -> Benchmark:
    """Spider 2.0-lite over the union of its 162 databases (the catalog-wide setting): the
    questions with public gold SQL whose tables all resolve (:mod:`tabret.spider2`)."""
    from tabret import spider2

    root = root or data_dir()
    raw = spider2.read_schema(root)
    cat, ids = spider2.build_catalog(raw)
    path = root / spider2.QUESTIONS
    gold_sql = _json.read_file(root / spider2.GOLD_SQL)
    documents = spider2.knowledge_documents(root)
    questions: list[BenchmarkQuestion] = []
    left_out: dict[str, list[str]] = {}
    by_database: dict[str, list[str]] = {}  # database -> names of documents its questions use
    lines = _text.read_lines(path)
    for line_no, line in enumerate(lines, start=1):
        q = _json.parse(line, path, line_no)
        key = spider2.database_key(raw, q["db"])
        if key is None:
            raise _core.SchemaError(f"{path}: {q['instance_id']}: unknown database '{q['db']}'")
        db_name = cat.database(cat.table(ids[key][0]).database).name
        knowledge = spider2.question_knowledge(q, documents, path)
        names = by_database.setdefault(db_name, [])
        if knowledge and q["external_knowledge"] not in names:
            names.append(q["external_knowledge"])
        if q["instance_id"] not in gold_sql:
            left_out.setdefault("no public gold SQL", []).append(q["instance_id"])
            continue
        tables = [t["table_fullname"] for t in raw[key]]
        gold = spider2.gold_tables(gold_sql[q["instance_id"]], spider2.dialect(raw, key), tables)
        if gold.problem:
            left_out.setdefault(gold.problem, []).append(q["instance_id"])
            continue
        t_ids = ids[key]
        questions.append(
            BenchmarkQuestion(
                q["instance_id"],
                db_name,
                q["question"],
                tuple(t_ids[i] for i in gold.tables),
                families=tuple(tuple(t_ids[i] for i in f) for f in gold.families),
                knowledge=knowledge,
            )
        )
    n_families = sum(1 for q in questions if q.families)
    why = "; ".join(
        f"{len(ids)} {reason}" if len(ids) > 3 else f"{reason}: {', '.join(ids)}"
        for reason, ids in sorted(left_out.items(), key=lambda item: -len(item[1]))
    )
    source = (
        f"Spider 2.0-lite (spider2-lite/spider2-lite.jsonl): {len(questions)} of {len(lines)} "
        f"questions have gold tables, parsed with sqlglot from spider2-lite/gold_sql.json "
        f"({why}); corpus spider2_lite_schema.json.gz (162 DBs); {n_families} questions read "
        "a wildcard table family (ga_sessions_*), which counts as one gold table that any "
        "member satisfies"
    )
    shipped = {db: tuple(documents[n] for n in ns) for db, ns in by_database.items() if ns}
    return Benchmark("spider2-lite", cat, questions, source, documents=shipped)


def spider2_lite_db(root: Path | None = None) -> Benchmark:
    """Spider 2.0-lite, each question against its own database only (an index per
    database; see :func:`database_benchmarks`)."""
    bench = spider2_lite(root)
    source = f"{bench.source}; each question searches its own database only"
    return replace(bench, name="spider2-lite-db", source=source, per_database=True)


def _copy_database(cat: Catalog, db_id: int) -> tuple[Catalog, dict[int, int], dict[int, int]]:
    """One database of ``cat`` as a catalog of its own (names, descriptions, types, constraints,
    keys), with the old -> new table and column ids."""
    sub = Catalog()
    db = cat.database(db_id)
    new_db = sub.add_database(db.name, db.description)
    tables: dict[int, int] = {}
    columns: dict[int, int] = {}
    for t_id in db.tables:
        t = cat.table(t_id)
        tables[t_id] = sub.add_table(new_db, t.name, t.nl_name, t.description)
        for c_id in t.columns:
            c = cat.column(c_id)
            columns[c_id] = sub.add_column(tables[t_id], c.name, c.type, c.nl_name, c.description)
            if c.not_null or c.unique or c.default:
                sub.set_constraints(
                    columns[c_id], not_null=c.not_null, unique=c.unique, default=c.default
                )
        if t.primary_key:
            sub.set_primary_key(tables[t_id], [columns[c] for c in t.primary_key])
    for fk in cat.foreign_keys:
        if fk.from_column in columns and fk.to_column in columns:
            sub.add_foreign_key(columns[fk.from_column], columns[fk.to_column])
    return sub, tables, columns


def database_benchmarks(bench: Benchmark) -> list[Benchmark]:
    """``bench`` split by database: for each database with questions (first-question order),
    a benchmark over a catalog of that database alone with its questions, ids remapped. An
    index built over one part ranks exactly that database's tables (BM25 statistics and
    fusion included), unlike filtering a ranking of the whole catalog."""
    by_db: dict[str, list[BenchmarkQuestion]] = {}
    for q in bench.questions:
        by_db.setdefault(q.db, []).append(q)
    parts = []
    for db, questions in by_db.items():
        db_id = bench.catalog.find_database(db)
        if db_id is None:
            raise ValueError(f"benchmark '{bench.name}': unknown database '{db}'")
        sub, tables, columns = _copy_database(bench.catalog, db_id)
        moved = [
            replace(
                q,
                gold_tables=tuple(tables[t] for t in q.gold_tables),
                gold_columns=tuple(columns[c] for c in q.gold_columns),
                families=tuple(tuple(tables[t] for t in f) for f in q.families),
            )
            for q in questions
        ]
        parts.append(replace(bench, catalog=sub, questions=moved, per_database=False))
    return parts


def _questions_line(path: Path, line_no: int, line: str) -> dict[str, Any]:
    """One line of a --questions file: a JSON object with a question and its gold tables."""
    q = _json.parse(line, path, line_no)
    if not isinstance(q, dict):
        raise _core.SchemaError(f"{path}:{line_no}: expected a JSON object")
    if not isinstance(q.get("question"), str):
        raise _core.SchemaError(f"{path}:{line_no}: 'question' must be a string")
    if not q["question"].strip():
        raise _core.SchemaError(f"{path}:{line_no}: 'question' is empty")
    gold = q.get("gold_tables")
    if not isinstance(gold, list) or not gold or not all(isinstance(t, str) for t in gold):
        raise _core.SchemaError(
            f"{path}:{line_no}: 'gold_tables' must be a non-empty list of \"db.table\" names"
        )
    if not isinstance(q.get("knowledge", ""), str):
        raise _core.SchemaError(f"{path}:{line_no}: 'knowledge' must be a string")
    return q


def parse_questions_file(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """The non-blank lines of a ``--questions`` file with their line numbers, each checked to be
    a question with gold table names (before any catalog is read: the errors of
    :func:`questions_benchmark` about the file itself)."""
    path = Path(path)
    return [
        (line_no, _questions_line(path, line_no, line))
        for line_no, line in enumerate(_text.read_lines(path), start=1)
        if line.strip()
    ]


def questions_benchmark(path: str | Path, catalog: Catalog) -> Benchmark:
    """A user's own questions over ``catalog``: a JSON-lines file, one
    ``{"question": …, "gold_tables": ["db.table", …]}`` per line (optional ``"id"``, default
    the line number, ``"db"``, default the first gold table's database, and ``"knowledge"``,
    text given with the question, see :func:`with_knowledge`; blank lines skipped). Names are
    matched case-insensitively, ``db`` up to the first dot.

    The file is UTF-8 text (a leading byte order mark is skipped). Raises
    :class:`tabret.FileError` for a missing file or one that is not a regular file (a directory,
    a FIFO), :class:`tabret.ParseError` (with ``source`` and ``line``) for a line that is not
    JSON or not UTF-8 and :class:`tabret.SchemaError` naming the file and line for a missing
    field, an empty question or a table or database the catalog lacks."""
    path = Path(path)
    questions = []
    for line_no, q in parse_questions_file(path):
        gold = []
        for name in q["gold_tables"]:
            db, _, table = name.partition(".")
            t = catalog.find_table(db, table)
            if t is None:
                raise _core.SchemaError(f"{path}:{line_no}: unknown table '{name}'")
            gold.append(t)
        db = q.get("db") or catalog.database(catalog.table(gold[0]).database).name
        if catalog.find_database(str(db)) is None:
            raise _core.SchemaError(f"{path}:{line_no}: unknown database '{db}'")
        qid = str(q.get("id", line_no))
        gold_ids = tuple(dict.fromkeys(gold))
        knowledge = q.get("knowledge", "")
        questions.append(
            BenchmarkQuestion(qid, str(db), q["question"], gold_ids, knowledge=knowledge)
        )
    if not questions:
        raise _core.SchemaError(f"{path}: no questions")
    return Benchmark(path.stem, catalog, questions, f"your questions ({path}) over {catalog!r}")


def demo(root: Path | None = None) -> Benchmark:
    cat = demo_catalog()
    qs = []
    for q in demo_questions():
        ids = []
        for name in q.gold_tables:
            db, table = name.split(".", 1)
            t = cat.find_table(db, table)
            assert t is not None, f"demo gold table {name} missing"
            ids.append(t)
        qs.append(BenchmarkQuestion(q.id, q.db, q.question, tuple(ids)))
    return Benchmark("demo", cat, qs, "tabret demo catalog (package data)")


BENCHMARKS: dict[str, Callable[[Path | None], Benchmark]] = {
    "spider-union": spider_union,
    "bird-union": bird_union,
    "bird-union-crush": bird_union_crush,
    "spider-dev": spider_dev,
    "bird-dev": bird_dev,
    "spider-dev-multi": spider_dev_multi,
    "bird-dev-multi": bird_dev_multi,
    "spider2-lite": spider2_lite,
    "spider2-lite-db": spider2_lite_db,
    "demo": demo,
}


def load_benchmark(name: str, root: Path | None = None) -> Benchmark:
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark '{name}' (choose from {', '.join(BENCHMARKS)})")
    return BENCHMARKS[name](root)


#: ``SET …;`` lines of the spider-db dumps (PostgreSQL session settings, not data).
_DUMP_SETTINGS = re.compile(r"(?m)^\s*SET [^\n]*;\s*$")


def spider_db_sqlite(db: str, out_dir: Path, root: Path | None = None) -> Path | None:
    """The SQLite file ``<out_dir>/<db>.sqlite`` made from ``spider-db/<db>/``'s PostgreSQL
    dumps (``psql_schema.sql``, then ``clean_dump.sql`` without its ``SET`` lines, CHECK
    constraints not enforced), or ``None`` when spider-db has no such database. Made once:
    written beside and renamed into place, so a file there is always complete; a dump SQLite
    cannot read raises :class:`tabret.FileError` naming it."""
    import sqlite3

    src = (root or data_dir()) / "spider-db" / db
    if not (src / "psql_schema.sql").is_file():
        return None
    out = out_dir / f"{db}.sqlite"
    if out.is_file():
        return out
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".{db}.sqlite.{os.getpid()}.tmp"
    try:
        con = sqlite3.connect(tmp)
        try:
            # a file made whole and renamed into place: no journal, no sync per statement
            con.executescript(
                "PRAGMA ignore_check_constraints = ON; PRAGMA journal_mode = OFF; "
                "PRAGMA synchronous = OFF"
            )
            for name, wrap in (("psql_schema.sql", False), ("clean_dump.sql", True)):
                script = _DUMP_SETTINGS.sub(
                    "", _text.decode(_text.read_bytes(src / name), src / name)
                )
                try:  # the rows in one transaction; a schema file may hold its own
                    con.executescript(f"BEGIN;\n{script}\nCOMMIT;" if wrap else script)
                except sqlite3.Error as err:
                    raise _core.FileError(f"{src / name}: SQLite cannot read it: {err}") from err
            con.commit()
        finally:
            con.close()
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def spider_values(
    catalog: _core.Catalog,
    cache_dir: Path,
    root: Path | None = None,
    progress: bool = True,
) -> tuple[_core.ValueIndex, dict[str, str]]:
    """The cell values of every database of ``catalog`` (a Spider catalog) that
    ``spider-db/`` holds, read from SQLite files made under ``cache_dir``
    (:func:`spider_db_sqlite`), and what is missing: the databases left without values, and
    the tables and columns a dump lacks, with the reason."""
    values = _core.ValueIndex(catalog)
    missing: dict[str, str] = {}
    from tqdm import tqdm

    for d in tqdm(catalog.databases, desc="values", unit="database", disable=not progress):
        try:
            path = spider_db_sqlite(d.name, cache_dir, root)
        except _core.FileError as err:
            missing[d.name] = f"none ({err})"
            continue
        if path is None:
            missing[d.name] = "none (not in spider-db)"
            continue
        lacks = values.add_sqlite(catalog, d.name, path)["missing"]
        if lacks:
            missing[d.name] = f"{len(lacks)} tables or columns not in the dump: {', '.join(lacks)}"
    return values, missing
