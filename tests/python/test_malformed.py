"""The malformed-input catalogue (issue 12): every loader, saved artifact, CLI entry point and
callback, given bad input, raises a typed error whose message names the problem (file, line,
table, field, callback). One row per case; docs/reliability.md summarises the table."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tabret
from local_http import serving
from tabret import Catalog
from tabret.benchmarks import load_benchmark, questions_benchmark
from tabret.cli import main
from tabret.crush import CrushRetriever
from tabret.embedders import CallableEmbedder, HashingEmbedder
from tabret.index import DenseRetriever, TableIndex
from tabret.join import GreedyJoinRetriever, JoinGraph
from tabret.llms import (
    CachedLLM,
    OpenAICompatibleLLM,
    ResponseCache,
    complete,
    load_crush_recordings,
    load_jar_decompositions,
)
from tabret.murre import MurreRetriever
from tabret.reverse import GeneratedQuestions
from tabret.rewriting import MurreRewriter

HASHING = HashingEmbedder(dim=64)


@dataclass(frozen=True)
class Case:
    id: str
    act: Callable[[Path], object]  # builds the bad input under the directory, then loads it
    error: type[BaseException]
    message: str  # a regex; "{tmp}" stands for the test's directory
    line: int | None = None  # the ParseError's .line, when it has one


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


# --- DDL --------------------------------------------------------------------------------------


def ddl(text: str) -> Callable[[Path], object]:
    return lambda tmp: Catalog.from_ddl(write(tmp / "s.sql", text))


DDL_CASES = [
    Case(
        "ddl-syntax-error",
        ddl("CREATE TABLE a (\n id INT,\n name TEXT\n;\n"),
        tabret.ParseError,
        r"{tmp}/s\.sql:4: expected ',' or '\)' after column 'name' of table 'a'",
        4,
    ),
    Case(
        "ddl-duplicate-table",
        ddl("CREATE TABLE a (id INT);\nCREATE TABLE a (x INT);\n"),
        tabret.ParseError,
        r"s\.sql:2: duplicate table 'a' \(first declared at line 1\)",
        2,
    ),
    Case(
        "ddl-duplicate-column",
        ddl("CREATE TABLE a (id INT,\n id TEXT);\n"),
        tabret.ParseError,
        r"s\.sql:2: duplicate column 'id' in table 'a'",
        2,
    ),
    Case(
        "ddl-fk-missing-table",
        ddl("CREATE TABLE a (id INT,\n b INT REFERENCES ghost(id));\n"),
        tabret.ParseError,
        r"s\.sql:2: foreign key a\(b\) references unknown table 'ghost'",
        2,
    ),
    Case(
        "ddl-fk-missing-column",
        ddl("CREATE TABLE g (id INT);\nCREATE TABLE a (id INT,\n b INT REFERENCES g(nope));\n"),
        tabret.ParseError,
        r"s\.sql:3: foreign key a\(b\) references unknown column 'nope' of table 'g'",
        3,
    ),
    Case(
        "ddl-fk-unknown-local-column",
        ddl(
            "CREATE TABLE g (id INT);\n"
            "CREATE TABLE a (id INT,\n FOREIGN KEY (zz) REFERENCES g(id));"
        ),
        tabret.ParseError,
        r"s\.sql:3: foreign key of table 'a' names unknown column 'zz'",
        3,
    ),
    Case(
        "ddl-fk-arity",
        ddl(
            "CREATE TABLE g (id INT);\n"
            "CREATE TABLE a (x INT, y INT,\n FOREIGN KEY (x, y) REFERENCES g(id));"
        ),
        tabret.ParseError,
        r"s\.sql:3: foreign key a\(x, y\) has 2 column\(s\) but references 1 of table 'g'",
        3,
    ),
    Case(
        "ddl-pk-unknown-column",
        ddl("CREATE TABLE a (id INT,\n PRIMARY KEY (zz));\n"),
        tabret.ParseError,
        r"s\.sql:2: primary key of table 'a' names unknown column 'zz'",
        2,
    ),
    Case(
        "ddl-unterminated-string",
        ddl("CREATE TABLE a (\n id INT DEFAULT 'abc);\n"),
        tabret.ParseError,
        r"s\.sql:2: unterminated string literal",
        2,
    ),
    Case(
        "ddl-unterminated-comment",
        ddl("CREATE TABLE a (id INT);\n/* no end\n"),
        tabret.ParseError,
        r"s\.sql:2: unterminated /\* comment",
        2,
    ),
    Case(
        "ddl-empty-file",
        ddl(""),
        tabret.ParseError,
        r"{tmp}/s\.sql: no CREATE TABLE statement",
        0,
    ),
    Case(
        "ddl-not-ddl",
        lambda tmp: Catalog.from_ddl(write(tmp / "t.sql", '{"databases": []}\n')),
        tabret.ParseError,
        r"t\.sql: no CREATE TABLE statement: is this a SQL DDL file\?",
        0,
    ),
    # Nothing is dropped in silence (issue 47, item 3).
    Case(
        "ddl-misspelt-create",
        ddl("CREATE TABLE a (id INT);\nCREATE TABEL b (id INT);\n"),
        tabret.ParseError,
        r"{tmp}/s\.sql:2: CREATE TABEL: not a kind of object tabret knows .*a misspelt TABLE\?",
        2,
    ),
    Case(
        "ddl-create-table-as-select",
        ddl("CREATE TABLE a (id INT);\nCREATE TABLE b AS SELECT id FROM a;\n"),
        tabret.ParseError,
        r"s\.sql:2: CREATE TABLE b AS \.\.\.: the table has no column list",
        2,
    ),
    Case(
        "ddl-literal-backslash-n",
        ddl("CREATE TABLE a(x int);\\nCREATE TABLE b(z int);"),
        tabret.ParseError,
        r"s\.sql:1: '\\' where a statement should start \(a literal \\n written for a line "
        r"break\?\)",
        1,
    ),
    Case(
        "ddl-cr-line-endings",
        ddl("CREATE TABLE a (x int);\r-- note\rCREATE TABLE b (y int);\rCREATE TABLE c (z int\r"),
        tabret.ParseError,
        r"s\.sql:4: unterminated column list of table 'c'",
        4,
    ),
    Case(
        "ddl-missing-file",
        lambda tmp: Catalog.from_ddl(tmp / "nope.sql"),
        tabret.FileError,
        r"{tmp}/nope\.sql: no such file",
    ),
    Case(
        "ddl-directory",
        lambda tmp: Catalog.from_ddl(tmp),
        tabret.FileError,
        r"{tmp}: is a directory, expected a file",
    ),
]

# --- Spider / BIRD tables.json ----------------------------------------------------------------

PETS: dict[str, Any] = {
    "db_id": "pets",
    "table_names_original": ["owner"],
    "table_names": ["owner"],
    "column_names_original": [[-1, "*"], [0, "id"]],
    "column_names": [[-1, "*"], [0, "id"]],
    "column_types": ["text", "number"],
    "primary_keys": [1],
    "foreign_keys": [],
}


def spider(change: dict[str, Any] | None = None, drop: str = "", twice: bool = False) -> Any:
    def act(tmp: Path) -> object:
        entry = {k: v for k, v in {**PETS, **(change or {})}.items() if k != drop}
        path = write(tmp / "tables.json", json.dumps([entry, entry] if twice else [entry]))
        return Catalog.from_spider_json(path)

    return act


def spider_text(text: str) -> Callable[[Path], object]:
    return lambda tmp: Catalog.from_spider_json(write(tmp / "tables.json", text))


TWO_COLS = [[-1, "*"], [0, "id"], [0, "id"]]
SPIDER_CASES = [
    Case(
        "spider-missing-db_id",
        spider(drop="db_id"),
        tabret.SchemaError,
        r"{tmp}/tables\.json: database entry 0: missing field 'db_id'",
    ),
    Case(
        "spider-missing-columns",
        spider(drop="column_names_original"),
        tabret.SchemaError,
        r"tables\.json: database 'pets': missing field 'column_names_original'",
    ),
    Case(
        "spider-wrong-type",
        spider({"table_names_original": "owner"}),
        tabret.SchemaError,
        r"tables\.json: database 'pets': field 'table_names_original' has type string",
    ),
    Case(
        "spider-non-string-name",
        spider({"table_names_original": [3]}),
        tabret.SchemaError,
        r"database 'pets': field 'table_names_original' holds a non-string",
    ),
    Case(
        "spider-table-index-out-of-range",
        spider(
            {
                "column_names_original": [[-1, "*"], [5, "id"]],
                "column_names": [[-1, "*"], [5, "id"]],
            }
        ),
        tabret.SchemaError,
        r"database 'pets': column 'id' points at table 5 which does not exist \(1 tables\)",
    ),
    Case(
        "spider-primary-key-out-of-range",
        spider({"primary_keys": [9]}),
        tabret.SchemaError,
        r"database 'pets': primary key refers to column 9 which does not exist \(2 columns\)",
    ),
    Case(
        "spider-primary-key-star",
        spider({"primary_keys": [0]}),
        tabret.SchemaError,
        r"database 'pets': primary key refers to column 0 \('\*'\)",
    ),
    Case(
        "spider-foreign-key-out-of-range",
        spider({"foreign_keys": [[1, 7]]}),
        tabret.SchemaError,
        r"database 'pets': foreign key refers to column 7 which does not exist",
    ),
    Case(
        "spider-foreign-key-not-a-pair",
        spider({"foreign_keys": [[1]]}),
        tabret.SchemaError,
        r"database 'pets': foreign key \[1\] is not a \[from, to\] pair",
    ),
    Case(
        "spider-column-entry-shape",
        spider({"column_names_original": [[-1, "*"], [0.5, "id"]]}),
        tabret.SchemaError,
        r"database 'pets': field 'column_names_original' entry 1 is not \[table_index, name\]",
    ),
    Case(
        "spider-length-mismatch",
        spider({"column_types": ["text"]}),
        tabret.SchemaError,
        r"database 'pets': 'column_names_original' has 2 entries, .* 'column_types' 1",
    ),
    Case(
        "spider-duplicate-database",
        spider(twice=True),
        tabret.SchemaError,
        r"tables\.json: database 'pets': duplicate database 'pets'",
    ),
    Case(
        "spider-duplicate-table",
        spider({"table_names_original": ["o", "o"], "table_names": ["o", "o"]}),
        tabret.SchemaError,
        r"database 'pets': duplicate table 'o' in database 'pets'",
    ),
    Case(
        "spider-duplicate-column",
        spider(
            {
                "column_names_original": TWO_COLS,
                "column_names": TWO_COLS,
                "column_types": ["text", "number", "text"],
            }
        ),
        tabret.SchemaError,
        r"database 'pets': duplicate column 'id' in table 'pets\.owner'",
    ),
    Case(
        "spider-truncated-json",
        spider_text(json.dumps([PETS], indent=1)[:300]),
        tabret.ParseError,
        r"{tmp}/tables\.json:\d+: invalid JSON at column \d+: .*unexpected end of input",
    ),
    Case(
        "spider-empty-file",
        spider_text(""),
        tabret.ParseError,
        r"tables\.json:1: invalid JSON at column 1",
        1,
    ),
    Case(
        "spider-not-a-list",
        spider_text('{"db_id": "pets"}'),
        tabret.SchemaError,
        r"tables\.json: expected a JSON list of databases, found object",
    ),
    Case(
        "spider-entry-not-an-object",
        spider_text("[1]"),
        tabret.SchemaError,
        r"tables\.json: database entry 0: is not an object",
    ),
]

# --- tabret catalog JSON, SQLite --------------------------------------------------------------


def catalog_json(change: Callable[[dict[str, Any]], object]) -> Callable[[Path], object]:
    def act(tmp: Path) -> object:
        doc = json.loads(tabret.demo_catalog().to_json())
        change(doc)
        return Catalog.from_json(write(tmp / "cat.json", json.dumps(doc, indent=1)))

    return act


def sqlite_db(tmp: Path, name: str = "t.db", tables: int = 60) -> Path:
    path = tmp / name
    conn = sqlite3.connect(path)
    conn.executescript("".join(f"CREATE TABLE t{i} (id INT, x TEXT);" for i in range(tables)))
    conn.close()
    return path


def sqlite_schema(path: Path, sql: str) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(sql)
    conn.close()
    return path


def truncated_sqlite(tmp: Path) -> object:
    path = sqlite_db(tmp)
    path.write_bytes(path.read_bytes()[:3000])
    return Catalog.from_sqlite(path)


CATALOG_CASES = [
    Case(
        "catalog-json-wrong-format",
        catalog_json(lambda d: d.update(format="tabret-index")),
        tabret.SchemaError,
        r"{tmp}/cat\.json: document: format is 'tabret-index', expected 'tabret-catalog'",
    ),
    Case(
        "catalog-json-future-version",
        catalog_json(lambda d: d.update(version=99)),
        tabret.SchemaError,
        r"cat\.json: document: version 99 is not supported",
    ),
    Case(
        "catalog-json-missing-databases",
        catalog_json(lambda d: d.pop("databases")),
        tabret.SchemaError,
        r"cat\.json: document: missing field 'databases'",
    ),
    Case(
        "catalog-json-truncated",
        lambda tmp: Catalog.from_json(
            write(tmp / "cat.json", tabret.demo_catalog().to_json()[:120])
        ),
        tabret.ParseError,
        r"cat\.json:\d+: invalid JSON at column \d+",
    ),
    Case(
        "sqlite-not-a-database",
        lambda tmp: Catalog.from_sqlite(write(tmp / "x.db", "plain text")),
        tabret.FileError,
        r"{tmp}/x\.db: not a SQLite database",
    ),
    Case(
        "sqlite-empty-file",
        lambda tmp: Catalog.from_sqlite(write(tmp / "e.db", "")),
        tabret.FileError,
        r"e\.db: not a SQLite database",
    ),
    Case(
        "sqlite-truncated",
        truncated_sqlite,
        tabret.FileError,
        r"{tmp}/t\.db: cannot read schema: database disk image is malformed",
    ),
    Case(
        "sqlite-empty-table-name",
        lambda tmp: Catalog.from_sqlite(sqlite_schema(tmp / "e.db", 'CREATE TABLE ""(x INT)')),
        tabret.SchemaError,
        r"{tmp}/e\.db: empty table name in database 'e'",
    ),
    Case(
        "sqlite-empty-column-name",
        lambda tmp: Catalog.from_sqlite(sqlite_schema(tmp / "e.db", 'CREATE TABLE t(""  INT)')),
        tabret.SchemaError,
        r"{tmp}/e\.db: empty column name in table 'e\.t'",
    ),
    # A file given to the wrong loader is recognised and the loader to use named (issue 47).
    Case(
        "ddl-is-a-sqlite-database",
        lambda tmp: Catalog.from_ddl(sqlite_db(tmp, "x.db")),
        tabret.FileError,
        r"{tmp}/x\.db: is a SQLite database, not SQL DDL: use the sqlite loader "
        r"\(`tabret catalog sqlite {tmp}/x\.db`, `--catalog-format sqlite`, Python "
        r"`Catalog\.from_sqlite`, C\+\+ `load_sqlite`\)",
    ),
    Case(
        "json-is-a-sqlite-database",
        lambda tmp: Catalog.from_json(sqlite_db(tmp, "x.db")),
        tabret.FileError,
        r"{tmp}/x\.db: is a SQLite database, not tabret catalog JSON: use the sqlite loader",
    ),
    Case(
        "spider-is-a-sqlite-database",
        lambda tmp: Catalog.from_spider_json(sqlite_db(tmp, "x.db")),
        tabret.FileError,
        r"x\.db: is a SQLite database, not a Spider/BIRD tables\.json: use the sqlite loader",
    ),
    Case(
        "json-is-spider",
        lambda tmp: Catalog.from_json(write(tmp / "tables.json", json.dumps([PETS]))),
        tabret.FileError,
        r"{tmp}/tables\.json: is a Spider/BIRD tables\.json, not tabret catalog JSON: use the "
        r"spider loader \(`tabret catalog spider .*`, `--catalog-format spider`, Python "
        r"`Catalog\.from_spider_json`",
    ),
    Case(
        "spider-is-catalog-json",
        lambda tmp: Catalog.from_spider_json(
            write(tmp / "cat.json", tabret.demo_catalog().to_json())
        ),
        tabret.FileError,
        r"cat\.json: is tabret catalog JSON, not a Spider/BIRD tables\.json: use the json loader",
    ),
    Case(
        "ddl-is-spider",
        lambda tmp: Catalog.from_ddl(write(tmp / "tables.json", json.dumps([PETS]))),
        tabret.FileError,
        r"tables\.json: is a Spider/BIRD tables\.json, not SQL DDL: use the spider loader",
    ),
    # Single-file saves (tests/python/test_safety_writers.py holds the special files).
    Case(
        "catalog-save-onto-a-directory",
        lambda tmp: tabret.demo_catalog().save_json(tmp),
        tabret.FileError,
        r"^{tmp}: is a directory, not a regular file; not replacing it$",
    ),
    Case(
        "catalog-save-missing-parent",
        lambda tmp: tabret.demo_catalog().save_json(tmp / "no" / "cat.json"),
        tabret.FileError,
        r"^{tmp}/no/cat\.json: cannot write: the directory {tmp}/no does not exist$",
    ),
]

# --- benchmark question files and recorded LLM outputs ----------------------------------------


PETS_CAT = Catalog()
PETS_CAT.add_ddl_text("CREATE TABLE owner (id INT);", "pets")


def your_questions(tmp: Path, text: bytes) -> object:
    """A --questions file (JSON lines over the catalog), loaded."""
    return questions_benchmark(write(tmp / "q.jsonl", text), PETS_CAT)


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def directory(path: Path) -> Path:
    path.mkdir()
    return path


def spider_union_root(tmp: Path, questions: str) -> object:
    write(tmp / "spider" / "tables.json", json.dumps([PETS]))
    write(tmp / "murre" / "dataset" / "spider" / "dev.json", questions)
    return load_benchmark("spider-union", tmp)


def bird_dev_root(tmp: Path, questions: list[dict[str, Any]]) -> object:
    write(tmp / "bird" / "dev_tables.json", json.dumps([PETS]))
    write(tmp / "jar" / "data" / "bird" / "dev.json", json.dumps(questions))
    return load_benchmark("bird-dev", tmp)


GOOD_Q = {
    "id": 0,
    "db_id": "pets",
    "utterance": "How many owners?",
    "rel_schema": ["pets.owner(id)"],
}
BIRD_Q = {"question_id": 7, "db_id": "zoo", "question": "How many?", "sql": "SELECT 1 FROM owner"}

QUESTION_FILE_CASES = [
    Case(
        "questions-missing-field",
        lambda tmp: spider_union_root(tmp, json.dumps([{**GOOD_Q, "utterance": None}, {"id": 1}])),
        tabret.SchemaError,
        r"{tmp}/murre/dataset/spider/dev\.json: question 1: missing field 'db_id'",
    ),
    Case(
        "questions-unknown-database",
        lambda tmp: spider_union_root(tmp, json.dumps([{**GOOD_Q, "db_id": "zoo"}])),
        tabret.SchemaError,
        r"dev\.json: question 0: unknown database 'zoo'",
    ),
    Case(
        "questions-truncated-json",
        lambda tmp: spider_union_root(tmp, json.dumps([GOOD_Q], indent=1)[:40]),
        tabret.ParseError,
        r"murre/dataset/spider/dev\.json:\d+: invalid JSON",
    ),
    Case(
        "questions-not-a-list",
        lambda tmp: spider_union_root(tmp, json.dumps(GOOD_Q)),
        tabret.SchemaError,
        r"dev\.json: expected a JSON list of questions",
    ),
    Case(
        "questions-unknown-database-bird",
        lambda tmp: bird_dev_root(tmp, [BIRD_Q]),
        tabret.SchemaError,
        r"jar/data/bird/dev\.json: question 0: unknown database 'zoo'",
    ),
    Case(
        "questions-missing-file",
        lambda tmp: (
            write(tmp / "bird" / "dev_tables.json", json.dumps([PETS]))
            and load_benchmark("bird-dev", tmp)
        ),
        tabret.FileError,
        r"{tmp}/jar/data/bird/dev\.json: no such file",
    ),
    Case(
        "crush-recordings-missing-field",
        lambda tmp: load_crush_recordings(write(tmp / "c.json", '[{"question": "q"}]')),
        tabret.SchemaError,
        r"{tmp}/c\.json: \[0\]: missing field 'question_decomposition_hallucinate_schema_bird'",
    ),
    Case(
        "crush-recordings-non-string-item",
        lambda tmp: load_crush_recordings(
            write(
                tmp / "c.json",
                '[{"question": "q", "question_decomposition_hallucinate_schema_bird": [1]}]',
            )
        ),
        tabret.SchemaError,
        r"c\.json: \[0\]: 'question_decomposition_hallucinate_schema_bird' holds a number",
    ),
    Case(
        "crush-recordings-truncated",
        lambda tmp: load_crush_recordings(write(tmp / "c.json", '[{"question":\n"q",')),
        tabret.ParseError,
        r"c\.json:2: invalid JSON at column 5",
        2,
    ),
    Case(
        "jar-decomposition-not-a-list",
        lambda tmp: load_jar_decompositions(
            write(tmp / "d.json", '["a"]'), write(tmp / "dev.json", '[{"question": "x"}]')
        ),
        tabret.SchemaError,
        r"d\.json: \[0\]: expected a list of sub-queries",
    ),
    Case(
        "jar-dev-missing-question",
        lambda tmp: load_jar_decompositions(
            write(tmp / "d.json", '[["a"]]'), write(tmp / "dev.json", '[{"q": "x"}]')
        ),
        tabret.SchemaError,
        r"dev\.json: \[0\]: missing field 'question'",
    ),
    Case(
        "your-questions-not-utf8",
        lambda tmp: your_questions(tmp, b'{"question": "a", "gold_tables": ["pets.owner"]}\n\xe9'),
        tabret.ParseError,
        r"{tmp}/q\.jsonl:2: not valid UTF-8: byte 0xE9 at byte offset 49 \(column 1\)",
        2,
    ),
    Case(
        "your-questions-directory",
        lambda tmp: questions_benchmark(directory(tmp / "q.jsonl"), PETS_CAT),
        tabret.FileError,
        r"{tmp}/q\.jsonl: is a directory, expected a file",
    ),
    Case(
        "your-questions-fifo",
        lambda tmp: questions_benchmark(fifo(tmp / "q.jsonl"), PETS_CAT),
        tabret.FileError,
        r"{tmp}/q\.jsonl: not a regular file \(a FIFO\)",
    ),
    Case(
        "your-questions-empty-question",
        lambda tmp: your_questions(tmp, b'{"question": " ", "gold_tables": ["pets.owner"]}'),
        tabret.SchemaError,
        r"{tmp}/q\.jsonl:1: 'question' is empty",
    ),
]

# --- saved index, join graph and question index ----------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A saved table index, its join graph and its generated questions (demo catalog)."""
    root = tmp_path_factory.mktemp("saved")
    index = TableIndex.build(tabret.demo_catalog(), HASHING, progress=False)
    index.save(root / "index")
    index.save(root / "with_graph", join_graph=JoinGraph.build(index))
    shutil.copy(root / "with_graph" / "join_graph.tjg", root / "graph.tjg")  # the file alone
    index.save(root / "questions", questions=GeneratedQuestions.build(index))
    other = TableIndex.build(tabret.demo_catalog(), HashingEmbedder(dim=32), progress=False)
    shop = Catalog.from_ddl(Path(__file__).parents[1] / "data" / "ddl" / "sqlite_shop.sql")
    small = TableIndex.build(shop, HASHING, progress=False)
    return {"root": root, "index": index, "other_dim": other, "other_catalog": small}


def index_copy(tmp: Path, root: Path, name: str = "index") -> Path:
    shutil.copytree(root / name, tmp / name)
    return tmp / name


def sealed(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with its own checksum made right (include/tabret/io/sealed_json.hpp), as an
    edit that passes the manifest's seal would be; the loader's later checks are then hit."""
    body = {k: v for k, v in doc.items() if k != "self_fnv1a64"}
    compact = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return body | {"self_fnv1a64": fnv1a64_hex(compact.encode())}


def edit_manifest(
    d: Path, change: Callable[[dict[str, Any]], object], *, seal: bool = True
) -> None:
    doc = json.loads((d / "manifest.json").read_text())
    change(doc)
    (d / "manifest.json").write_text(json.dumps(sealed(doc) if seal else doc, indent=2))


def index_meta(m: dict[str, Any]) -> dict[str, Any]:
    """The table index's options in a saved directory's manifest."""
    meta: dict[str, Any] = m["parts"]["index"]["meta"]
    return meta


def index_files(m: dict[str, Any]) -> dict[str, Any]:
    files: dict[str, Any] = m["parts"]["index"]["files"]
    return files


def with_index(edit: Callable[[Path], object]) -> Callable[[Path, dict[str, Any]], object]:
    def act(tmp: Path, s: dict[str, Any]) -> object:
        d = index_copy(tmp, s["root"])
        edit(d)
        return TableIndex.load(d, HASHING)

    return act


def with_manifest(
    change: Callable[[dict[str, Any]], object], *, seal: bool = True
) -> Callable[[Path, dict[str, Any]], object]:
    return with_index(lambda d: edit_manifest(d, change, seal=seal))


def other_catalog_json(d: Path) -> None:
    """catalog.json replaced by another catalog, its manifest entry updated to match."""
    text = Catalog.from_ddl(
        Path(__file__).parents[1] / "data" / "ddl" / "sqlite_shop.sql"
    ).to_json()
    (d / "catalog.json").write_text(text)
    data = text.encode()
    entry = {"bytes": len(data), "fnv1a64": fnv1a64_hex(data)}
    edit_manifest(d, lambda m: index_files(m)["catalog.json"].update(entry))


def fnv1a64_hex(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def graph_header(
    change: Callable[[dict[str, Any]], object], *, seal: bool = True
) -> Callable[[Path, dict[str, Any]], object]:
    def act(tmp: Path, s: dict[str, Any]) -> object:
        data = (s["root"] / "graph.tjg").read_bytes()
        eol = data.index(b"\n")
        header = json.loads(data[:eol])
        change(header)
        header = sealed(header) if seal else header
        path = write(tmp / "g.tjg", json.dumps(header).encode() + data[eol:])
        return JoinGraph.load(path, s["index"])

    return act


def questions_copy(edit: Callable[[Path], object]) -> Callable[[Path, dict[str, Any]], object]:
    def act(tmp: Path, s: dict[str, Any]) -> object:
        d = index_copy(tmp, s["root"], "questions")
        edit(d)
        return GeneratedQuestions.load(d, s["index"])

    return act


@dataclass(frozen=True)
class SavedCase:
    id: str
    act: Callable[[Path, dict[str, Any]], object]
    error: type[BaseException]
    message: str


SAVED_CASES = [
    SavedCase(
        "index-missing-directory",
        lambda tmp, s: TableIndex.load(tmp / "nowhere", HASHING),
        tabret.FileError,
        r"{tmp}/nowhere: no such directory",
    ),
    SavedCase(
        "index-missing-manifest",
        with_index(lambda d: (d / "manifest.json").unlink()),
        tabret.FileError,
        r"{tmp}/index/manifest\.json: no such file",
    ),
    SavedCase(
        "index-manifest-not-json",
        with_index(lambda d: (d / "manifest.json").write_text('{\n  "format": ')),
        tabret.ParseError,
        r"index/manifest\.json:2: invalid JSON at column 13",
    ),
    SavedCase(
        "index-wrong-magic",
        with_manifest(lambda m: m.update(format="tabret-questions")),
        tabret.FileError,
        r"index/manifest\.json: not a tabret index \(format 'tabret-questions'\)",
    ),
    SavedCase(
        "index-future-version",
        with_manifest(lambda m: m.update(version=99)),
        tabret.FileError,
        r"manifest\.json: tabret index version 99 is not supported .* rebuild it",
    ),
    SavedCase(
        "index-manifest-edited",
        with_manifest(
            lambda m: index_meta(m)["hnsw"].update(ef_search=65),
            seal=False,
        ),
        tabret.FileError,
        r"index/manifest\.json: checksum mismatch: the manifest was edited or is corrupt",
    ),
    SavedCase(
        "index-manifest-unsealed",
        with_manifest(lambda m: m.pop("self_fnv1a64"), seal=False),
        tabret.FileError,
        r"index/manifest\.json: the manifest has no checksum \('self_fnv1a64'\)",
    ),
    SavedCase(
        "index-version-wrong-type",
        with_manifest(lambda m: m.update(version="1")),
        tabret.SchemaError,
        r"index/manifest\.json: manifest: field 'version' has type string, expected an integer",
    ),
    SavedCase(
        "index-negative-dimension",
        with_manifest(lambda m: index_meta(m).update(dim=-1)),
        tabret.SchemaError,
        r"manifest\.json: manifest\.parts\.index\.meta: field 'dim' is -1, expected a count",
    ),
    SavedCase(
        "index-unknown-option",
        with_manifest(lambda m: index_meta(m).update(table_format="yaml")),
        tabret.SchemaError,
        r"meta: field 'table_format' is 'yaml', expected one of: signature, words, ddl",
    ),
    SavedCase(
        "index-hnsw-parameter",
        with_manifest(lambda m: index_meta(m)["hnsw"].update(m=-3)),
        tabret.SchemaError,
        r"manifest\.hnsw: field 'm' is -3",
    ),
    SavedCase(
        "index-missing-file",
        with_index(lambda d: (d / "tables.f32").unlink()),
        tabret.FileError,
        r"{tmp}/index/tables\.f32: no such file",
    ),
    SavedCase(
        "index-unlisted-file",
        with_manifest(lambda m: index_files(m).pop("tables.f32")),
        tabret.FileError,
        r"{tmp}/index: manifest lists no file 'tables\.f32'",
    ),
    SavedCase(
        "index-checksum-mismatch",
        with_index(
            lambda d: (d / "bm25.json").write_bytes(b"[" + (d / "bm25.json").read_bytes()[1:])
        ),
        tabret.FileError,
        r"index/bm25\.json: checksum mismatch: the file is corrupt",
    ),
    SavedCase(
        "index-truncated-file",
        with_index(
            lambda d: (d / "columns.f32").write_bytes((d / "columns.f32").read_bytes()[:100])
        ),
        tabret.FileError,
        r"index/columns\.f32: size 100 does not match the manifest: the file is truncated",
    ),
    SavedCase(
        "index-dimension-mismatch",
        with_manifest(lambda m: index_meta(m).update(dim=32)),
        tabret.FileError,
        r"index/tables\.f32: holds 17664 bytes, expected 69 rows . 32 floats",
    ),
    SavedCase(
        "index-catalog-mismatch",
        with_index(other_catalog_json),
        tabret.FileError,
        r"index/catalog\.json: catalog\.json is not the catalog the manifest names",
    ),
    SavedCase(
        "index-embedder-mismatch",
        lambda tmp, s: TableIndex.load(s["root"] / "index", HashingEmbedder(dim=32)),
        ValueError,
        r"built with embedder 'hashing\(dim=64.*but 'hashing\(dim=32.* was given",
    ),
    SavedCase(
        "index-save-over-foreign-directory",
        lambda tmp, s: s["index"].save(write(tmp / "home" / "notes.txt", "mine").parent),
        tabret.FileError,
        r"{tmp}/home: exists and is not a saved tabret index \(no sealed tabret manifest\.json\)",
    ),
    SavedCase(
        "index-save-over-file",
        lambda tmp, s: s["index"].save(write(tmp / "index.txt", "mine")),
        tabret.FileError,
        r"{tmp}/index\.txt: exists and is not a directory",
    ),
    SavedCase(
        "graph-missing",
        lambda tmp, s: JoinGraph.load(tmp / "none.tjg", s["index"]),
        tabret.FileError,
        r"{tmp}/none\.tjg: no such file",
    ),
    SavedCase(
        "graph-empty-file",
        lambda tmp, s: JoinGraph.load(write(tmp / "e.tjg", b""), s["index"]),
        tabret.FileError,
        r"e\.tjg: not a valid join graph file \(no header line\)",
    ),
    SavedCase(
        "graph-wrong-magic",
        graph_header(lambda h: h.update(format="tabret-index")),
        tabret.FileError,
        r"g\.tjg: not a valid join graph file \(wrong format tag\)",
    ),
    SavedCase(
        "graph-future-version",
        graph_header(lambda h: h.update(version=7)),
        tabret.FileError,
        r"g\.tjg: join graph version 7 is not supported",
    ),
    SavedCase(
        "graph-header-edited",
        graph_header(lambda h: h.update(embedder="hashing(dim=65)"), seal=False),
        tabret.FileError,
        r"g\.tjg: checksum mismatch: the header was edited or is corrupt",
    ),
    SavedCase(
        "graph-header-wrong-type",
        graph_header(lambda h: h.update(json_bytes="12")),
        tabret.SchemaError,
        r"{tmp}/g\.tjg: header: field 'json_bytes' has type string, expected an integer",
    ),
    SavedCase(
        "graph-size-mismatch",
        graph_header(lambda h: h.update(f32_bytes=h["f32_bytes"] + 4)),
        tabret.FileError,
        r"g\.tjg: not a valid join graph file \(size \d+ does not match the header",
    ),
    SavedCase(
        "graph-checksum-mismatch",
        graph_header(lambda h: h.update(json_fnv1a64="0" * 16)),
        tabret.FileError,
        r"g\.tjg: not a valid join graph file \(checksum mismatch\)",
    ),
    SavedCase(
        "graph-other-catalog",
        lambda tmp, s: JoinGraph.load(s["root"] / "graph.tjg", s["other_catalog"]),
        tabret.FileError,
        r"graph\.tjg: this join graph was built for another catalog",
    ),
    SavedCase(
        "graph-embedder-mismatch",
        lambda tmp, s: JoinGraph.load(s["root"] / "graph.tjg", s["other_dim"]),
        ValueError,
        r"join graph was built with embedder 'hashing\(dim=64.*the index with 'hashing\(dim=32",
    ),
    SavedCase(
        "questions-missing-manifest",
        questions_copy(lambda d: (d / "manifest.json").unlink()),
        tabret.FileError,
        r"{tmp}/questions/manifest\.json: no such file",
    ),
    SavedCase(
        "questions-future-version",
        questions_copy(lambda d: edit_manifest(d, lambda m: m.update(version=5))),
        tabret.FileError,
        r"questions/manifest\.json: tabret index version 5 is not supported",
    ),
    SavedCase(
        "questions-manifest-edited",
        questions_copy(lambda d: edit_manifest(d, lambda m: m.update(generator="gpt"), seal=False)),
        tabret.FileError,
        r"questions/manifest\.json: checksum mismatch: the manifest was edited",
    ),
    SavedCase(
        "questions-count-mismatch",
        questions_copy(
            lambda d: edit_manifest(d, lambda m: m["parts"]["questions"]["meta"].update(tables=3))
        ),
        tabret.FileError,
        r"questions/questions\.json: holds 69 questions, the manifest says 3",
    ),
    SavedCase(
        "questions-checksum-mismatch",
        questions_copy(lambda d: (d / "questions.f32").write_bytes(bytes(17664))),
        tabret.FileError,
        r"questions/questions\.f32: checksum mismatch",
    ),
    SavedCase(
        "questions-table-index-given",
        lambda tmp, s: GeneratedQuestions.load(s["root"] / "index", s["index"]),
        tabret.FileError,
        r"/index: holds no generated questions \(save it with the index\)",
    ),
    SavedCase(
        "questions-other-catalog",
        lambda tmp, s: GeneratedQuestions.load(s["root"] / "questions", s["other_catalog"]),
        tabret.Error,
        r"questions: generated questions cover 69 tables, the index has \d+",
    ),
    SavedCase(
        "questions-other-dimension",
        lambda tmp, s: GeneratedQuestions.load(s["root"] / "questions", s["other_dim"]),
        tabret.Error,
        r"questions: generated questions were embedded with .*\(dimension 64\).*\(dimension 32\)",
    ),
]

ALL_CASES = DDL_CASES + SPIDER_CASES + CATALOG_CASES + QUESTION_FILE_CASES


def pattern(message: str, tmp: Path) -> str:
    return message.replace("{tmp}", re.escape(str(tmp)))


def test_the_catalogue_is_large_and_unique() -> None:
    ids = [c.id for c in ALL_CASES] + [c.id for c in SAVED_CASES] + [c[0] for c in CLI_CASES]
    ids += [c[0] for c in CALLBACK_CASES]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 30


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.id)
def test_malformed_input(case: Case, tmp_path: Path) -> None:
    with pytest.raises(case.error, match=pattern(case.message, tmp_path)) as info:
        case.act(tmp_path)
    assert isinstance(info.value, tabret.Error)
    if case.line is not None:
        assert info.value.line == case.line  # type: ignore[attr-defined]
    if isinstance(info.value, tabret.ParseError):  # .source is the file
        assert tmp_path in Path(info.value.source).parents


@pytest.mark.parametrize("case", SAVED_CASES, ids=lambda c: c.id)
def test_malformed_saved_file(case: SavedCase, tmp_path: Path, saved: dict[str, Any]) -> None:
    with pytest.raises(case.error, match=pattern(case.message, tmp_path)):
        case.act(tmp_path, saved)


# --- CLI ---------------------------------------------------------------------------------------

CLI_CASES: list[tuple[str, Callable[[Path], list[str]], int, str]] = [
    (
        "cli-query-missing-index",
        lambda tmp: ["query", str(tmp / "nowhere"), "a question"],
        1,
        r"tabret: error: {tmp}/nowhere: no such directory",
    ),
    (
        "cli-query-corrupt-index",
        lambda tmp: [
            "query",
            str(write(tmp / "idx" / "manifest.json", "{")).rsplit("/", 1)[0],
            "q",
        ],
        1,
        r"tabret: error: {tmp}/idx/manifest\.json:1: invalid JSON",
    ),
    (
        "cli-catalog-ddl-syntax-error",
        lambda tmp: ["catalog", "ddl", str(write(tmp / "b.sql", "CREATE TABLE a (\n id INT\n"))],
        1,
        r"tabret: error: {tmp}/b\.sql:1: .*never closed",
    ),
    (
        "cli-index-unknown-format",
        lambda tmp: ["index", "yaml", "x", str(tmp / "out")],
        2,
        r"argument format: invalid choice: 'yaml'",
    ),
    (
        "cli-eval-unknown-benchmark",
        lambda tmp: ["eval", "--benchmark", "nope"],
        2,
        r"invalid choice: 'nope'",
    ),
    (
        "cli-catalog-spider-as-json",
        lambda tmp: ["catalog", "json", str(write(tmp / "tables.json", json.dumps([PETS])))],
        1,
        r"tabret: error: {tmp}/tables\.json: is a Spider/BIRD tables\.json, not tabret catalog "
        r"JSON: use the spider loader .*`--catalog-format spider`",
    ),
    (
        "cli-query-no-question",
        lambda tmp: ["query", str(tmp / "idx")],
        1,
        r"tabret: error: no question given",
    ),
    (
        "cli-query-empty-question",
        lambda tmp: ["query", str(tmp / "idx"), "a", "  "],
        1,
        r"tabret: error: question 2 of 2 is empty \(whitespace only\)",
    ),
    (
        "cli-query-file-not-utf8",
        lambda tmp: ["query", str(tmp / "idx"), "--file", str(write(tmp / "q.txt", b"a\n\xe9"))],
        1,
        r"tabret: error: {tmp}/q\.txt:2: not valid UTF-8: byte 0xE9 at byte offset 2",
    ),
    (
        "cli-query-file-directory",
        lambda tmp: ["query", str(tmp / "idx"), "--file", str(tmp)],
        1,
        r"tabret: error: {tmp}: is a directory, expected a file",
    ),
    (
        "cli-query-file-fifo",
        lambda tmp: ["query", str(tmp / "idx"), "--file", str(fifo(tmp / "q"))],
        1,
        r"tabret: error: {tmp}/q: not a regular file \(a FIFO\)",
    ),
    (
        "cli-demo-negative-limit",
        lambda tmp: ["demo", "--limit", "-1"],
        2,
        r"argument --limit: must be at least 1, not -1",
    ),
    (
        "cli-eval-zero-k",
        lambda tmp: ["eval", "--benchmark", "demo", "--k", "5", "0"],
        2,
        r"argument --k: must be at least 1, not 0",
    ),
]


@pytest.mark.parametrize(
    ("id", "argv", "code", "message"), CLI_CASES, ids=[c[0] for c in CLI_CASES]
)
def test_cli_reports_bad_arguments(
    id: str,
    argv: Callable[[Path], list[str]],
    code: int,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    try:
        got = main(argv(tmp_path))
    except SystemExit as exit:  # argparse's own errors
        got = int(exit.code or 0)
    assert got == code
    assert re.search(pattern(message, tmp_path), capsys.readouterr().err)


# --- callbacks ---------------------------------------------------------------------------------


class Boom(Exception):
    """A user's own exception type: it must reach the caller unchanged."""


class Switch:
    """An embedder that works (hashing) until switched to a bad answer."""

    def __init__(self) -> None:
        self.answer: Callable[[list[str]], Any] | None = None

    def __call__(self, texts: list[str]) -> Any:
        return HASHING(texts) if self.answer is None else self.answer(texts)


def _boom(*args: Any) -> Any:
    raise Boom("the model is down")


def llm_ok(prompts: list[str]) -> list[str]:
    return ["None" for _ in prompts]


@pytest.fixture(scope="module")
def switched() -> tuple[Switch, TableIndex, JoinGraph]:
    switch = Switch()
    index = TableIndex.build(
        tabret.demo_catalog(), CallableEmbedder(switch, "switch"), progress=False
    )
    return switch, index, JoinGraph.build(index)


def dense(index: TableIndex, graph: JoinGraph, llm: Any) -> Any:
    return DenseRetriever(index)


def hybrid(index: TableIndex, graph: JoinGraph, llm: Any) -> Any:
    return DenseRetriever(index, hybrid=True)


def crush(index: TableIndex, graph: JoinGraph, llm: Any) -> Any:
    return CrushRetriever(index, llm=llm)


def murre(index: TableIndex, graph: JoinGraph, llm: Any) -> Any:
    return MurreRetriever(index, MurreRewriter(index.catalog, llm))


def greedy(index: TableIndex, graph: JoinGraph, llm: Any) -> Any:
    return GreedyJoinRetriever(index, graph, llm)


def reverse_build(index: TableIndex, graph: JoinGraph, llm: Any) -> Any:
    class Build:
        def retrieve(self, questions: list[str], k: int) -> Any:
            return GeneratedQuestions.build(index, llm)

    return Build()


def adaptive(index: TableIndex, graph: JoinGraph, llm: Any) -> Any:
    from tabret.adaptive import AdaptiveRetriever, CallableScorer

    return AdaptiveRetriever(
        DenseRetriever(index), CallableScorer(llm), candidates=5, window=5, retain=3
    )


RETRIEVERS = {
    "dense": dense,
    "hybrid": hybrid,
    "crush": crush,
    "murre": murre,
    "greedy-join": greedy,
    "reverse-questions": reverse_build,
    "adaptive": adaptive,
}
EMBEDDING_METHODS = ["dense", "hybrid", "crush", "murre", "greedy-join"]
LLM_METHODS = ["crush", "murre", "greedy-join", "reverse-questions", "adaptive"]

# (id, what goes wrong in the embedder at query time, error, message)
CALLBACK_CASES: list[tuple[str, Callable[[list[str]], Any], type[BaseException], str]] = [
    ("embedder-raises", _boom, Boom, r"the model is down"),
    (
        "embedder-too-many-rows",
        lambda t: np.zeros((len(t) + 1, 64)),
        tabret.EmbeddingError,
        r"embedder 'switch' returned \d+ rows for \d+ texts",
    ),
    (
        "embedder-wrong-dimension",
        lambda t: np.ones((len(t), 32)),
        tabret.EmbeddingError,
        r"embedder 'switch' returned vectors of dimension 32, expected 64",
    ),
    (
        "embedder-nan",
        lambda t: np.full((len(t), 64), np.nan),
        tabret.EmbeddingError,
        r"embedder 'switch' returned NaN or infinity in row 0",
    ),
    (
        "embedder-infinity",
        lambda t: np.where(np.arange(64) == 3, np.inf, 1.0)[None, :].repeat(len(t), 0),
        tabret.EmbeddingError,
        r"embedder 'switch' returned NaN or infinity in row 0",
    ),
    (
        "embedder-1d",
        lambda t: np.zeros(64),
        TypeError,
        r"embedder 'switch' must return a 2-D array of floats .* with 1 dimensions",
    ),
    (
        "embedder-non-numeric",
        lambda t: [["a"] * 64 for _ in t],
        TypeError,
        r"embedder 'switch' must return a 2-D array of floats .*does not convert to floats",
    ),
]


@pytest.mark.parametrize("method", EMBEDDING_METHODS)
@pytest.mark.parametrize(
    ("id", "answer", "error", "message"), CALLBACK_CASES, ids=[c[0] for c in CALLBACK_CASES]
)
def test_bad_embedder_through_every_method(
    switched: tuple[Switch, TableIndex, JoinGraph],
    method: str,
    id: str,
    answer: Callable[[list[str]], Any],
    error: type[BaseException],
    message: str,
) -> None:
    switch, index, graph = switched
    retriever = RETRIEVERS[method](index, graph, llm_ok)
    switch.answer = answer
    try:
        with pytest.raises(error, match=message):
            retriever.retrieve(["How many beds does each ward have?"], 3)
    finally:
        switch.answer = None


@pytest.mark.parametrize("id", [c[0] for c in CALLBACK_CASES])
def test_bad_embedder_while_building(id: str) -> None:
    _, answer, error, message = next(c for c in CALLBACK_CASES if c[0] == id)
    calls = {"n": 0}

    def embed(texts: list[str]) -> Any:  # the second batch goes wrong
        calls["n"] += 1
        return HASHING(texts) if calls["n"] == 1 else answer(texts)

    with pytest.raises(error, match=message.replace("'switch'", "'late'")):
        TableIndex.build(
            tabret.demo_catalog(), CallableEmbedder(embed, "late"), batch_size=16, progress=False
        )


@pytest.mark.parametrize("method", LLM_METHODS)
def test_raising_llm_keeps_its_type_through_every_method(
    switched: tuple[Switch, TableIndex, JoinGraph], method: str
) -> None:
    _, index, graph = switched
    with pytest.raises(Boom, match="the model is down"):
        RETRIEVERS[method](index, graph, _boom).retrieve(["How many beds?"], 3)


@pytest.mark.parametrize("method", ["crush", "murre", "greedy-join", "reverse-questions"])
@pytest.mark.parametrize(
    ("answer", "error", "message"),
    [
        (lambda p: [1] * len(p), TypeError, r"LLM '.*' returned completion 0 as a int, not a str"),
        (
            lambda p: ["x"] * (len(p) + 1),
            tabret.LLMError,
            r"LLM '.*' returned \d+ completions for \d+ prompts",
        ),
        (
            lambda p: "x",
            TypeError,
            r"LLM '.*' must return a list of str \(one per prompt\), got str",
        ),
    ],
    ids=["non-string", "wrong-count", "a-bare-string"],
)
def test_misbehaving_llm_through_every_method(
    switched: tuple[Switch, TableIndex, JoinGraph],
    method: str,
    answer: Callable[[list[str]], Any],
    error: type[BaseException],
    message: str,
) -> None:
    _, index, graph = switched
    with pytest.raises(error, match=message):
        RETRIEVERS[method](index, graph, answer).retrieve(["How many beds?"], 3)


# --- answers that are no text (issue 47, item 11) -------------------------------------------

# A completion with a lone surrogate (what json.loads makes of "\ud83d") cannot become UTF-8: it
# escaped from C++ as RuntimeError("Unable to cast Python instance of type <class 'str'>").
NOT_UNICODE = "schools(\ud83d)"


@pytest.mark.parametrize("method", ["crush", "murre", "greedy-join", "reverse-questions"])
def test_an_answer_that_is_not_unicode_is_an_llm_error_through_every_method(
    switched: tuple[Switch, TableIndex, JoinGraph], method: str
) -> None:
    _, index, graph = switched
    with pytest.raises(tabret.LLMError, match=r"LLM '.*' returned completion 0 with a lone") as e:
        RETRIEVERS[method](index, graph, lambda p: [NOT_UNICODE] * len(p)).retrieve(["Q?"], 3)
    assert isinstance(e.value.__cause__, UnicodeEncodeError)


def test_an_answer_that_is_not_unicode_is_never_cached(tmp_path: Path) -> None:
    def bad(prompts: list[str]) -> list[str]:
        return [NOT_UNICODE] * len(prompts)

    cache = ResponseCache(tmp_path / "cache.sqlite")
    calls: list[Callable[[], object]] = [
        lambda: complete(bad, ["p"]),
        lambda: CachedLLM(bad, cache, model="m")(["p"]),
    ]
    for call in calls:
        with pytest.raises(tabret.LLMError, match=r"LLM '.*' returned completion 0") as e:
            call()
        assert isinstance(e.value.__cause__, UnicodeEncodeError)
    assert len(cache) == 0


@contextmanager
def _http_llm(answer: bytes) -> Iterator[OpenAICompatibleLLM]:
    """A client of a server on 127.0.0.1 that answers ``answer`` to every POST."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    with serving(Handler) as url:
        yield OpenAICompatibleLLM(f"{url}/v1", "m", timeout=10, max_retries=0, proxies={})


HTTP_ANSWERS = {
    "lone-surrogate": b'{"choices": [{"message": {"content": "schools(\\ud83d)"}}]}',
    "deep-nesting": ("[" * 200_000 + "]" * 200_000).encode(),
}


@pytest.mark.parametrize("method", ["crush", "murre", "greedy-join", "reverse-questions"])
@pytest.mark.parametrize("answer", HTTP_ANSWERS.values(), ids=list(HTTP_ANSWERS))
def test_an_undecodable_http_answer_is_an_llm_error_through_every_method(
    switched: tuple[Switch, TableIndex, JoinGraph], method: str, answer: bytes
) -> None:
    """The same answers from a server (RuntimeError / RecursionError before)."""
    _, index, graph = switched
    with _http_llm(answer) as llm, pytest.raises(tabret.LLMError, match="/v1/chat/completions: "):
        RETRIEVERS[method](index, graph, llm).retrieve(["How many beds?"], 3)
