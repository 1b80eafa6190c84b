"""Regression tests of issue 18, loader items, through the Python API.

Item 8: a SQLite file is opened by exactly the name given (``file:x.db`` is not a URI).
Item 9: DDL from real dumps (``sqlite3 .schema``, ``pg_dump --schema-only``, ``mysqldump``) of
databases made here loads every table and foreign key; each dialect's string and comment rules
are honoured. The servers come from Debian packages (``make test`` installs them); a missing
binary skips locally and fails under CI=true.
Item 11: embedder rows of extreme magnitude rank as well as plain ones; a row of zeros is an
EmbeddingError naming the row.
Item 12: text that is not UTF-8 is a ParseError naming file, line and byte offset; paths that
are not UTF-8 give clean FileErrors.
Item 15: a FIFO or an endless device given as input is refused, not waited on or read forever.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pytest

import tabret
from tabret import Catalog
from tabret.embedders import CallableEmbedder, HashingEmbedder
from tabret.index import DenseRetriever, TableIndex

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.postgres_cluster import server_bin, throwaway_cluster

CI = os.environ.get("CI") == "true"


def _missing(what: str) -> NoReturn:
    if CI:
        pytest.fail(f"{what} missing under CI=true (scripts/install-deps.sh --test installs it)")
    pytest.skip(f"{what} not installed")


def fk_names(cat: Catalog) -> list[tuple[str, str]]:
    return sorted(
        (cat.qualified_column_name(fk.from_column), cat.qualified_column_name(fk.to_column))
        for fk in cat.foreign_keys
    )


#: The tables and foreign keys of the ``lib`` schema that every dump test loads.
LIB_TABLES = ["author", "book", "review"]
LIB_KEYS = [("lib.book.author_id", "lib.author.id"), ("lib.review.book_id", "lib.book.id")]


def load_lib_dump(tmp_path: Path, dump: str | bytes) -> Catalog:
    """``dump`` (of the ``lib`` schema) saved as lib.sql and loaded; its foreign keys are
    checked here, its tables by the caller."""
    path = tmp_path / "lib.sql"
    if isinstance(dump, bytes):
        path.write_bytes(dump)
    else:
        path.write_text(dump)
    cat = Catalog.from_ddl(path)
    assert fk_names(cat) == LIB_KEYS
    return cat


# --- item 8 ---------------------------------------------------------------------------------


def _make_sqlite(path: Path, sql: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.executescript(sql)
    conn.close()


def test_from_sqlite_opens_the_file_named_like_a_uri(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _make_sqlite(tmp_path / "file:other.db", "CREATE TABLE literal (a INTEGER PRIMARY KEY);")
    _make_sqlite(tmp_path / "other.db", "CREATE TABLE impostor (b INTEGER PRIMARY KEY);")
    monkeypatch.chdir(tmp_path)
    assert [t.name for t in Catalog.from_sqlite("file:other.db").tables] == ["literal"]
    assert [t.name for t in Catalog.from_sqlite(tmp_path / "file:other.db").tables] == ["literal"]


# --- item 15 --------------------------------------------------------------------------------

_LOAD_IN_CHILD = """
import sys, tabret
kind, path = sys.argv[1], sys.argv[2]
load = {"ddl": tabret.Catalog.from_ddl, "json": tabret.Catalog.from_json,
        "spider": tabret.Catalog.from_spider_json, "sqlite": tabret.Catalog.from_sqlite}[kind]
try:
    load(path)
except tabret.FileError as e:
    print("FileError:", e)
    sys.exit(0)
sys.exit(1)
"""


def _load_in_child(kind: str, path: Path) -> str:
    """Loads @p path in a subprocess (a hang or a runaway read cannot take pytest with it)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _LOAD_IN_CHILD, kind, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading {path} as {kind} did not return within 60 s")
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _limit_memory() -> None:
    if "LD_PRELOAD" in os.environ:  # sanitizer runtimes reserve huge address ranges
        return
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@pytest.mark.parametrize("kind", ["ddl", "json", "spider", "sqlite"])
def test_a_fifo_is_refused_not_waited_on(tmp_path: Path, kind: str) -> None:
    fifo = tmp_path / "input"
    os.mkfifo(fifo)
    out = _load_in_child(kind, fifo)
    assert str(fifo) in out
    assert "not a regular file" in out


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_symlink_to_an_endless_device_is_refused(tmp_path: Path, device: str) -> None:
    if not Path(device).exists():
        pytest.skip(f"{device} missing")
    link = tmp_path / "schema.sql"
    link.symlink_to(device)
    assert "not a regular file" in _load_in_child("ddl", link)


# --- item 12 --------------------------------------------------------------------------------


def test_latin1_ddl_is_a_parse_error_with_line_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "latin1.sql"
    path.write_bytes(b"CREATE TABLE a (x int);\nCREATE TABLE caf\xe9 (y int);\n")
    with pytest.raises(
        tabret.ParseError, match=r"not valid UTF-8: byte 0xE9 at byte offset 40"
    ) as e:
        Catalog.from_ddl(path)
    assert e.value.source == str(path)
    assert e.value.line == 2


def test_latin1_tables_json_and_catalog_json_are_parse_errors(tmp_path: Path) -> None:
    spider = tmp_path / "tables.json"
    spider.write_bytes(
        b'[{"db_id": "caf\xe9", "table_names_original": [], "column_names_original": [],'
        b' "column_types": []}]'
    )
    with pytest.raises(tabret.ParseError, match=r"tables.json:1: not valid UTF-8: byte 0xE9"):
        Catalog.from_spider_json(spider)
    catalog_json = tmp_path / "catalog.json"
    catalog_json.write_bytes(b'{\n"format": "tabret-catalog",\n"x": "\xff"}')
    with pytest.raises(tabret.ParseError, match=r"catalog.json:3: not valid UTF-8: byte 0xFF"):
        Catalog.from_json(catalog_json)


def test_utf8_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    path = tmp_path / "bom.sql"
    path.write_bytes(b"\xef\xbb\xbfCREATE TABLE caf\xc3\xa9 (y int);\n")
    assert [t.name for t in Catalog.from_ddl(path).tables] == ["café"]


def test_paths_that_are_not_utf8_give_clean_file_errors(tmp_path: Path) -> None:
    missing = os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9.sql")
    with pytest.raises(tabret.FileError, match=r"caf\\xE9.sql: no such file"):
        Catalog.from_ddl(missing, "named")
    with pytest.raises(tabret.FileError, match=r"caf\\xE9.sql: no such file"):
        Catalog.from_json(missing)
    Path(missing).write_text("CREATE TABLE t (x int);")
    with pytest.raises(tabret.FileError, match=r"file name is not valid UTF-8"):
        Catalog.from_ddl(missing)
    assert Catalog.from_ddl(missing, "named").num_tables == 1


def test_a_sqlite_schema_that_is_not_utf8_is_a_schema_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.db"
    _make_sqlite(path, 'CREATE TABLE "cafQ" (a int);')
    path.write_bytes(path.read_bytes().replace(b"cafQ", b"caf\xe9"))  # SQLite does not check
    with pytest.raises(tabret.SchemaError, match=r"caf\\xE9"):
        Catalog.from_sqlite(path)


# --- item 11 --------------------------------------------------------------------------------

HASHING = HashingEmbedder()
QUESTIONS = ["How many beds does each ward have?", "Which singers performed in concerts?"]


def _top_tables(scale: float) -> list[list[str]]:
    def embed(texts: list[str]) -> Any:
        return np.asarray(HASHING.embed(texts), dtype=np.float64) * scale

    index = TableIndex.build(
        tabret.demo_catalog(), CallableEmbedder(embed, "scaled"), progress=False
    )
    return [r.table_names[:3] for r in DenseRetriever(index).retrieve(QUESTIONS, 3)]


@pytest.mark.parametrize("scale", [1e30, 1e-30, 1e-42])
def test_rows_of_extreme_magnitude_rank_like_plain_ones(scale: float) -> None:
    assert _top_tables(scale) == _top_tables(1.0)


def test_an_all_zero_row_is_an_embedding_error_naming_the_row() -> None:
    def embed(texts: list[str]) -> Any:
        out = np.asarray(HASHING.embed(texts), dtype=np.float32)
        out[[i for i, t in enumerate(texts) if "nothing" in t]] = 0.0
        return out

    index = TableIndex.build(
        tabret.demo_catalog(), CallableEmbedder(embed, "holes"), progress=False
    )
    with pytest.raises(tabret.EmbeddingError, match=r"'holes'.*row 1 \(text 'nothing here'\)"):
        DenseRetriever(index).retrieve(["wards", "nothing here"], 3)


def test_hashing_embedder_keeps_zero_vectors_for_featureless_questions() -> None:
    index = TableIndex.build(tabret.demo_catalog(), HASHING, progress=False)
    assert len(DenseRetriever(index).retrieve("a", 3).tables) == 3


class _DeclaresZeroRows:
    allows_zero_rows = True
    name = "declared"

    def embed(self, texts: list[str]) -> Any:
        return np.asarray(HASHING.embed(texts), dtype=np.float32)


def test_an_embedder_may_declare_zero_rows_legitimate() -> None:
    index = TableIndex.build(tabret.demo_catalog(), _DeclaresZeroRows(), progress=False)
    assert len(DenseRetriever(index).retrieve("a", 3).tables) == 3


# --- item 9: DDL rules, hand-written ---------------------------------------------------------


def test_mysql_backslash_escape_keeps_the_next_table(tmp_path: Path) -> None:
    path = tmp_path / "shop.sql"
    path.write_text(
        "CREATE TABLE a (id int PRIMARY KEY);\n"
        "INSERT INTO a VALUES (1,'it\\'s');\n"
        "CREATE TABLE b (id int, a_id int REFERENCES a(id));\n"
    )
    cat = Catalog.from_ddl(path)
    assert [t.name for t in cat.tables] == ["a", "b"]
    assert fk_names(cat) == [("shop.b.a_id", "shop.a.id")]


def test_postgres_nested_comment_neither_drops_nor_invents(tmp_path: Path) -> None:
    path = tmp_path / "pg.sql"
    path.write_text("/* a /* b */ CREATE TABLE ghost(q int); */ CREATE TABLE a(x int);\n")
    assert [t.name for t in Catalog.from_ddl(path).tables] == ["a"]


def test_a_missing_semicolon_before_create_table_fails_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "missing.sql"
    path.write_text("CREATE TABLE a (x int);\nCREATE INDEX i ON a (x)\nCREATE TABLE b (y int);\n")
    with pytest.raises(tabret.ParseError, match=r"missing.sql:3: CREATE .* a ';' is missing"):
        Catalog.from_ddl(path)


# --- item 9: real dumps ----------------------------------------------------------------------

SQLITE_SCHEMA = """
CREATE TABLE author (id INTEGER PRIMARY KEY, name TEXT DEFAULT 'it''s' /* a /* b */);
-- CREATE TABLE ghost_one (x int);
CREATE TABLE book (
  id INTEGER PRIMARY KEY,
  title TEXT CHECK (title <> 'back\\slash'),  -- it's a comment
  author_id INTEGER REFERENCES author (id)
);
CREATE TABLE review (book_id INTEGER REFERENCES book (id), body TEXT DEFAULT '/* x');
CREATE INDEX review_book ON review (book_id);
CREATE TRIGGER keep AFTER INSERT ON book BEGIN
  INSERT INTO review (book_id) VALUES (new.id);
END;
INSERT INTO author (name) VALUES ('O''Brien\\'), ('semi;colon');
"""


def test_sqlite3_schema_dump_loads_every_table(tmp_path: Path) -> None:
    sqlite3_bin = shutil.which("sqlite3")
    if sqlite3_bin is None:
        _missing("the sqlite3 command-line shell (Debian package 'sqlite3')")
    db = tmp_path / "lib.db"
    _make_sqlite(db, SQLITE_SCHEMA)
    dump = subprocess.run(
        [str(sqlite3_bin), str(db), ".schema"], capture_output=True, check=True, timeout=60
    ).stdout
    cat = load_lib_dump(tmp_path, dump)
    assert [t.name for t in cat.tables] == LIB_TABLES
    # The same schema read from the database file agrees.
    direct = Catalog.from_sqlite(db)
    assert [t.name for t in direct.tables] == [t.name for t in cat.tables]
    assert fk_names(direct) == fk_names(cat)


PG_SCHEMA = r"""
CREATE TABLE author (id integer PRIMARY KEY, name text DEFAULT 'it''s');
/* a /* nested */ comment */
COMMENT ON TABLE author IS 'Writers; it''s \ a "list"';
CREATE TABLE book (
  id integer PRIMARY KEY,
  title text DEFAULT E'it\'s',
  author_id integer REFERENCES author (id)
);
COMMENT ON COLUMN book.title IS '/* not a comment';
CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $body$
BEGIN
  -- CREATE TABLE ghost (x int);
  RETURN NEW; -- it's
END $body$;
CREATE VIEW v AS SELECT $$;CREATE TABLE ghost2(x int);$$ AS s;
CREATE TABLE review (book_id integer REFERENCES book (id), body text);
INSERT INTO author VALUES (1, 'back\slash');
"""


def _as_user(user: str, cmd: list[str]) -> list[str]:
    """Servers refuse to run as root: run them as their own user then."""
    return ["runuser", "-u", user, "--", *cmd] if os.geteuid() == 0 else cmd


@pytest.fixture(scope="module")
def pg_dump_text() -> Iterator[str]:
    bindir = server_bin()
    if bindir is None:
        _missing("PostgreSQL server binaries (Debian package 'postgresql')")

    def run(*cmd: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            _as_user("postgres", list(cmd)),
            check=True,
            capture_output=True,
            text=True,
            input=stdin,
            timeout=120,
            env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"},
        )
        return done.stdout

    with throwaway_cluster(bindir, "tabret-pgdump-") as cluster:
        conn = ["-h", str(cluster.socket_dir), "-p", str(cluster.port), "-U", "postgres"]
        psql = [str(bindir / "psql"), *conn, "-v", "ON_ERROR_STOP=1", "-q", "-d", "postgres"]
        run(*psql, stdin=PG_SCHEMA)
        yield run(str(bindir / "pg_dump"), *conn, "--schema-only", "postgres")


def test_pg_dump_schema_only_loads_every_table(pg_dump_text: str, tmp_path: Path) -> None:
    cat = load_lib_dump(tmp_path, pg_dump_text)
    assert sorted(t.name for t in cat.tables) == [*LIB_TABLES, "v"]  # the view is a table
    view = cat.tables[cat.find_table("lib", "v") or 0]
    assert [cat.column(c).name for c in view.columns] == ["s"]
    author = cat.tables[cat.find_table("lib", "author") or 0]
    assert author.description == 'Writers; it\'s \\ a "list"'
    # Headerless (a hand-edited copy) it still loads the same: the nested comment is PostgreSQL's.
    body = "\n".join(line for line in pg_dump_text.splitlines() if "PostgreSQL" not in line)
    headerless = tmp_path / "edited.sql"
    headerless.write_text("/* a /* b */ CREATE TABLE ghost(q int); */\n" + body)
    assert sorted(t.name for t in Catalog.from_ddl(headerless, "lib").tables) == sorted(
        t.name for t in cat.tables
    )


MYSQL_SCHEMA = r"""
CREATE TABLE author (id int PRIMARY KEY, name varchar(40) COMMENT 'it\'s the "name" # here')
  ENGINE=InnoDB;
CREATE TABLE book (
  id int PRIMARY KEY,
  title varchar(80) DEFAULT 'a\\b',
  author_id int,
  FOREIGN KEY (author_id) REFERENCES author (id)
) ENGINE=InnoDB;
CREATE TABLE review (book_id int, body text, FOREIGN KEY (book_id) REFERENCES book (id))
  ENGINE=InnoDB COMMENT='reviews; it\'s /* not a comment';
INSERT INTO author VALUES (1, 'it\'s'), (2, 'back\\slash\\'), (3, 'semi;colon /*');
INSERT INTO book VALUES (1, 'CREATE TABLE ghost (x int);', 1);
"""


@pytest.fixture(scope="module")
def mysqldump_text() -> Iterator[str]:
    search = os.pathsep.join(["/usr/sbin", "/usr/bin", os.environ.get("PATH", "")])

    def find(*names: str) -> str:
        for name in names:
            if found := shutil.which(name, path=search):
                return found
        _missing("MariaDB server and client (Debian packages 'mariadb-server', 'mariadb-client')")

    server, install = find("mariadbd", "mysqld"), find("mariadb-install-db", "mysql_install_db")
    client, dump = find("mariadb", "mysql"), find("mariadb-dump", "mysqldump")
    root = Path(tempfile.mkdtemp(prefix="tabret-mysql-"))
    data, sock = root / "data", root / "mysql.sock"
    user = "mysql" if os.geteuid() == 0 else None
    if user:
        shutil.chown(root, user)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    as_user = ["--user=" + user] if user else []
    subprocess.run(
        [
            install,
            "--no-defaults",
            f"--datadir={data}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            *as_user,
        ],
        check=True,
        capture_output=True,
        timeout=120,
        env=env,
    )
    proc = subprocess.Popen(
        [
            server,
            "--no-defaults",
            f"--datadir={data}",
            f"--socket={sock}",
            "--skip-networking",
            f"--pid-file={root / 'mysqld.pid'}",
            f"--log-error={root / 'error.log'}",
            "--skip-grant-tables",
            *as_user,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        for _ in range(600):  # at most 600 polls 0.1 s apart; no clock is read
            if sock.exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        if not sock.exists():
            log = (root / "error.log").read_text(errors="replace")
            pytest.fail(f"mariadbd did not start: {log[-2000:]}")
        base = [f"--socket={sock}", "-uroot"]
        subprocess.run(
            [client, "--no-defaults", *base, "-e", "CREATE DATABASE lib"],
            check=True,
            capture_output=True,
            timeout=60,
            env=env,
        )
        subprocess.run(
            [client, "--no-defaults", *base, "lib"],
            input=MYSQL_SCHEMA.encode(),
            check=True,
            capture_output=True,
            timeout=60,
            env=env,
        )
        out = subprocess.run(
            [dump, "--no-defaults", *base, "lib"],
            check=True,
            capture_output=True,
            timeout=60,
            env=env,
        )
        yield out.stdout.decode()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(root, ignore_errors=True)


def test_mysqldump_with_data_loads_every_table_and_key(mysqldump_text: str, tmp_path: Path) -> None:
    assert "'it\\'s'" in mysqldump_text  # the dump escapes quotes with backslashes
    cat = load_lib_dump(tmp_path, mysqldump_text)
    assert [t.name for t in cat.tables] == LIB_TABLES
    review = cat.tables[cat.find_table("lib", "review") or 0]
    assert review.description == "reviews; it's /* not a comment"
    name = cat.find_column(cat.find_table("lib", "author") or 0, "name")
    assert name is not None
    assert cat.column(name).description == 'it\'s the "name" # here'
