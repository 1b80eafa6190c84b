"""A vector index that lives in PostgreSQL with pgvector: a catalog's table and column vectors
and the catalog itself, in a database that many processes and machines share.

``PgVectorIndex.publish(index, url, name)`` copies a built :class:`~tabret.TableIndex` into the
database; ``PgVectorIndex.open(url, name)`` reads it back from any process;
:class:`PgVectorRetriever` is single-hop dense retrieval whose search runs in the server (exact,
or pgvector's HNSW when published with ``hnsw=True``).

What tabret writes there, in the schema given (default ``public``):

- ``tabret_indexes``: one row per published index (name, generation, embedder, the catalog's
  SHA-256, dimension, counts, the catalog as tabret catalog JSON), and
- ``tabret_<name>_t<generation>`` / ``tabret_<name>_c<generation>``: the table and column vectors
  (``item integer``, ``embedding vector(dim)``; the tables' also ``text``, what was embedded).

Every one of them carries a ``COMMENT`` that says tabret wrote it. A publish creates the new
generation, points the registry row at it and drops the previous one **in one transaction**, and
only drops tables the registry names and whose comment is tabret's: a table of the same name that
tabret did not write stops the publish with :class:`StoreError` and is left as it is. A reader
opened before a publish keeps answering from its generation until the publish commits, then gets
:class:`StoreError` (open it again): old or new, never a mix.

Needs ``psycopg`` (``pip install tabret[postgres]``) and a server with the ``vector`` extension.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from tabret import _core
from tabret.embedders import call_resolved
from tabret.index import (
    EmbedderLike,
    RetrievesBatches,
    TableIndex,
    check_embedder_reproduces,
    query_embedder,
)
from tabret.results import Retrieval, ScoredColumn, ScoredTable

if TYPE_CHECKING:
    import psycopg

__all__ = ["PgVectorIndex", "PgVectorRetriever", "StoreError"]

#: Bumped when what tabret writes into the database changes shape.
FORMAT_VERSION = 1
#: The comment on every table tabret writes: what a publish checks before it drops one.
MARKER = "written by tabret (tabret.pgvector); do not edit"
REGISTRY = "tabret_indexes"
#: Vectors per chunk of a publish's COPY stream.
COPY_ROWS = 8192
_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
Kind = Literal["t", "c"]
_KINDS: tuple[Kind, Kind] = ("t", "c")
Hits = list[tuple[int, float]]


class StoreError(_core.Error):
    """A PostgreSQL store that cannot be used: no server, no ``vector`` extension, an index
    name that is not there, a table tabret did not write where it would write, an index
    republished under an open reader."""


@dataclass(frozen=True)
class _Registered:
    generation: int
    embedder: str
    catalog_sha256: str
    dim: int
    tables: int
    columns: int
    hnsw: bool
    catalog_json: str


def _conninfo(url: str) -> str:
    """A libpq URL from ``url``, also in SQLAlchemy's ``postgresql+driver://`` form."""
    return re.sub(r"^postgres(?:ql)?\+\w+://", "postgresql://", url)


def _where(url: str) -> str:
    """The server and database of ``url`` for messages, never its password."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        d = conninfo_to_dict(_conninfo(url))
    except Exception:
        return "the server given"
    return f"{d.get('host', 'localhost')}:{d.get('port', 5432)}/{d.get('dbname', '')}"


def _check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ValueError(
            f"index name {name!r}: 1-40 characters of a-z, 0-9 and _, starting with a letter"
        )
    return name


def _connect(url: str) -> psycopg.Connection[Any]:
    try:
        import psycopg
    except ImportError as err:
        raise ImportError("tabret.pgvector needs psycopg: pip install 'tabret[postgres]'") from err
    try:
        return psycopg.connect(_conninfo(url))
    except psycopg.Error as err:
        reason = str(err).strip().splitlines()[-1] if str(err).strip() else type(err).__name__
        raise StoreError(f"cannot connect to PostgreSQL at {_where(url)}: {reason}") from None


def _vector_literal(v: npt.NDArray[np.float32]) -> str:
    """pgvector's text form; each float32 written so that it reads back exactly."""
    return "[" + ",".join(repr(x) for x in v.tolist()) + "]"


def _copy_chunks(vectors: npt.NDArray[np.float32]) -> Iterator[bytes]:
    """Rows (item, embedding) in PostgreSQL's binary COPY format (pgvector's binary vector:
    uint16 dimension, uint16 unused, big-endian float32s), :data:`COPY_ROWS` at a time so that
    memory stays near one chunk whatever the number of vectors."""
    rows = COPY_ROWS
    n, d = vectors.shape
    rec = np.dtype(
        [
            ("fields", ">i2"),
            ("len_item", ">i4"),
            ("item", ">i4"),
            ("len_vec", ">i4"),
            ("dim", ">u2"),
            ("unused", ">u2"),
            ("v", ">f4", (d,)),
        ]
    )
    yield b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8
    for begin in range(0, n, rows):
        end = min(n, begin + rows)
        chunk = np.zeros(end - begin, dtype=rec)
        chunk["fields"], chunk["len_item"], chunk["item"] = 2, 4, np.arange(begin, end)
        chunk["len_vec"], chunk["dim"], chunk["v"] = 4 + 4 * d, d, vectors[begin:end]
        yield chunk.tobytes()
    yield b"\xff\xff"


class PgVectorIndex:
    """The vectors of one published index, searched in the server. Thread-safe for searches
    (one connection, used under a lock is psycopg's; open one per process)."""

    def __init__(self, conn: psycopg.Connection[Any], schema: str, name: str, reg: _Registered):
        self._conn, self._schema, self.name, self._reg = conn, schema, name, reg
        self.catalog = _core.catalog_from_json_text(reg.catalog_json, f"{REGISTRY} row {name!r}")

    # ---- publishing -------------------------------------------------------------------

    @classmethod
    def publish(
        cls,
        index: TableIndex,
        url: str,
        name: str,
        *,
        schema: str = "public",
        hnsw: bool = False,
        hnsw_m: int = 16,
        ef_construction: int = 64,
    ) -> PgVectorIndex:
        """Copies ``index``'s table and column vectors and catalog into the database as index
        ``name`` (replacing an earlier publish of that name, in one transaction), and opens it.
        ``hnsw``: also build pgvector's HNSW index (``vector_ip_ops``) for approximate search.
        :class:`StoreError` when the server has no ``vector`` extension or a table tabret would
        write exists and is not tabret's."""
        _check_name(name)
        core = index.core
        tables = np.ascontiguousarray(core.table_vectors, dtype=np.float32)
        columns = (
            np.ascontiguousarray(core.column_vectors, dtype=np.float32)
            if core.has_columns
            else np.zeros((0, core.dim), dtype=np.float32)
        )
        texts = [core.table_text(t) for t in range(core.catalog.num_tables)]
        conn = _connect(url)
        try:
            with conn.transaction():
                _ensure_extension(conn, url)
                _ensure_registry(conn, schema)
                # one publisher at a time per database: the next waits for this one to commit
                conn.execute(_sql("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE", schema, REGISTRY))
                old = _registered(conn, schema, name)
                gen = 1 if old is None else old.generation + 1
                for kind, vectors in zip(_KINDS, (tables, columns), strict=True):
                    _create_vectors(conn, schema, _table(name, kind, gen), vectors, core.dim)
                _set_texts(conn, schema, _table(name, "t", gen), texts)
                if hnsw:
                    for kind in _KINDS:
                        conn.execute(
                            _sql(
                                "CREATE INDEX ON {} USING hnsw (embedding vector_ip_ops) "
                                f"WITH (m = {int(hnsw_m)}, "
                                f"ef_construction = {int(ef_construction)})",
                                schema,
                                _table(name, kind, gen),
                            )
                        )
                catalog_json = _core.catalog_to_json_text(core.catalog)
                reg = _Registered(
                    gen,
                    core.embedder_name,
                    _sha256(catalog_json),
                    core.dim,
                    len(tables),
                    len(columns),
                    hnsw,
                    catalog_json,
                )
                _write_registry(conn, schema, name, reg)
                if old is not None:
                    for kind in _KINDS:
                        _drop_ours(conn, schema, _table(name, kind, old.generation))
        except BaseException:
            conn.close()
            raise
        return cls(conn, schema, name, reg)

    @classmethod
    def open(cls, url: str, name: str, *, schema: str = "public") -> PgVectorIndex:
        """The index ``name`` as last published. :class:`StoreError` when it is not there."""
        _check_name(name)
        conn = _connect(url)
        try:
            reg = _registered(conn, schema, name) if _has_registry(conn, schema) else None
            conn.commit()
        except BaseException:
            conn.close()
            raise
        if reg is None:
            conn.close()
            raise StoreError(f"no tabret index {name!r} in schema {schema!r} at {_where(url)}")
        return cls(conn, schema, name, reg)

    @classmethod
    def drop(cls, url: str, name: str, *, schema: str = "public") -> bool:
        """Removes the published index ``name`` (its registry row and its vector tables);
        False when there was none."""
        _check_name(name)
        with _connect(url) as conn, conn.transaction():
            if not _has_registry(conn, schema):
                return False
            conn.execute(_sql("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE", schema, REGISTRY))
            reg = _registered(conn, schema, name)
            if reg is None:
                return False
            for kind in _KINDS:
                _drop_ours(conn, schema, _table(name, kind, reg.generation))
            conn.execute(_sql("DELETE FROM {} WHERE name = %s", schema, REGISTRY), (name,))
        return True

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> PgVectorIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- what it is -------------------------------------------------------------------

    @property
    def embedder_name(self) -> str:
        return self._reg.embedder

    @property
    def generation(self) -> int:
        return self._reg.generation

    @property
    def dim(self) -> int:
        return self._reg.dim

    @property
    def hnsw(self) -> bool:
        return self._reg.hnsw

    def size(self, kind: Kind = "t") -> int:
        return self._reg.tables if kind == "t" else self._reg.columns

    def __repr__(self) -> str:
        r = self._reg
        return (
            f"PgVectorIndex({self.name!r}, generation {r.generation}, {r.tables} tables, "
            f"{r.columns} columns, {r.dim}-d, embedder {r.embedder!r}"
            f"{', hnsw' if r.hnsw else ''})"
        )

    # ---- search -----------------------------------------------------------------------

    def search(
        self,
        queries: npt.ArrayLike,
        k: int,
        *,
        kind: Kind = "t",
        exact: bool | None = None,
        ef_search: int = 40,
    ) -> list[Hits]:
        """For each query row, the ``k`` items (tables, or columns with ``kind="c"``) of largest
        inner product, best first, as (id, score); ties by smaller id in exact search.
        ``exact``: default True unless the index was published with HNSW; ``ef_search`` is
        pgvector's ``hnsw.ef_search`` (1-1000)."""
        q = self._queries(queries, k)
        exact = not self._reg.hnsw if exact is None else exact
        order = "ORDER BY d, item" if exact else "ORDER BY d"
        stmt = _sql(
            f"SELECT item, embedding <#> %s::vector AS d FROM {{}} {order} LIMIT %s",
            self._schema,
            _table(self.name, kind, self._reg.generation),
        )
        with self._session(exact, ef_search) as cur:
            return [self._hits(cur.execute(stmt, (_vector_literal(v), k))) for v in q]

    def search_within(
        self, queries: npt.ArrayLike, candidates: Sequence[int], k: int, *, kind: Kind = "t"
    ) -> list[Hits]:
        """Exact search restricted to ``candidates`` (ids; duplicates count once)."""
        q = self._queries(queries, k)
        ids = sorted({int(c) for c in candidates})
        n = self.size(kind)
        if ids and (ids[0] < 0 or ids[-1] >= n):
            bad = ids[0] if ids[0] < 0 else ids[-1]
            raise ValueError(f"candidate id {bad} out of range for {n} items")
        stmt = _sql(
            "SELECT item, embedding <#> %s::vector AS d FROM {} WHERE item = ANY(%s) "
            "ORDER BY d, item LIMIT %s",
            self._schema,
            _table(self.name, kind, self._reg.generation),
        )
        with self._session() as cur:
            return [self._hits(cur.execute(stmt, (_vector_literal(v), ids, k))) for v in q]

    def vectors(self, ids: Sequence[int], kind: Kind = "t") -> npt.NDArray[np.float32]:
        """The stored vectors of ``ids``, in that order."""
        stmt = _sql(
            "SELECT item, embedding::text FROM {} WHERE item = ANY(%s)",
            self._schema,
            _table(self.name, kind, self._reg.generation),
        )
        with self._session() as cur:
            got = {
                i: np.array(t[1:-1].split(","), dtype=np.float32)
                for i, t in cur.execute(stmt, (list(ids),))
            }
        return np.stack([got[int(i)] for i in ids]) if ids else np.zeros((0, self.dim), np.float32)

    def table_texts(self, ids: Sequence[int]) -> list[str]:
        """What each of ``ids`` was embedded as."""
        stmt = _sql(
            "SELECT item, text FROM {} WHERE item = ANY(%s)",
            self._schema,
            _table(self.name, "t", self._reg.generation),
        )
        with self._session() as cur:
            got = dict(cur.execute(stmt, (list(ids),)).fetchall())
        return [got[int(i)] for i in ids]

    def _queries(self, queries: npt.ArrayLike, k: int) -> npt.NDArray[np.float32]:
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        q = np.asarray(queries, dtype=np.float32)
        if q.ndim == 1:
            q = q[None, :]
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(f"queries must be (n, {self.dim}) vectors, got shape {q.shape}")
        if not np.isfinite(q).all():
            raise ValueError("queries hold NaN or infinity")
        return q

    @staticmethod
    def _hits(cur: psycopg.Cursor[Any]) -> Hits:
        return [(int(item), -float(d)) for item, d in cur.fetchall()]

    @contextmanager
    def _session(self, exact: bool = True, ef_search: int = 40) -> Iterator[psycopg.Cursor[Any]]:
        """A read-only transaction; exact search keeps the planner off the HNSW index."""
        import psycopg

        if not 1 <= ef_search <= 1000:
            raise ValueError(f"ef_search must be in 1..1000, got {ef_search}")
        try:
            with self._conn.transaction(), self._conn.cursor() as cur:
                cur.execute("SET TRANSACTION READ ONLY")
                if exact:
                    cur.execute("SET LOCAL enable_indexscan = off")
                else:
                    cur.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
                yield cur
        except psycopg.errors.UndefinedTable:
            raise StoreError(
                f"tabret index {self.name!r} was published again or dropped after this reader "
                f"opened generation {self._reg.generation}: open it again"
            ) from None


class PgVectorRetriever(RetrievesBatches):
    """Single-hop dense retrieval over a :class:`PgVectorIndex`: questions embedded here, the
    search done by the server. ``embedder`` must be the one the index was built with (default:
    the one its name says); it is checked against stored vectors as :class:`~tabret.TableIndex`
    load does."""

    def __init__(
        self, index: PgVectorIndex, embedder: EmbedderLike = None, *, ef_search: int = 40
    ) -> None:
        self.store, self.ef_search = index, ef_search
        self._embed = query_embedder(index.embedder_name, embedder)
        n = index.size("t")
        ids = sorted({0, n // 2, n - 1})
        check_embedder_reproduces(
            self._embed,
            index.embedder_name,
            index.table_texts(ids),
            index.vectors(ids),
            [index.catalog.qualified_name(i) for i in ids],
        )
        self.catalog = index.catalog

    def __repr__(self) -> str:
        return f"PgVectorRetriever(over {self.store!r})"

    def _retrievals(self, batch: list[str], k: int, k_columns: int) -> list[Retrieval]:
        q = _normalised(call_resolved(self._embed, batch), self.store.dim)
        tables = self.store.search(q, k, ef_search=self.ef_search)
        columns = (
            self.store.search(q, k_columns, kind="c", ef_search=self.ef_search)
            if k_columns
            else [[] for _ in batch]
        )
        cat = self.catalog
        return [
            Retrieval(
                question=question,
                tables=[ScoredTable(t, cat.qualified_name(t), s) for t, s in ts],
                columns=[ScoredColumn(c, cat.qualified_column_name(c), s) for c, s in cs],
            )
            for question, ts, cs in zip(batch, tables, columns, strict=True)
        ]


def _normalised(q: npt.NDArray[np.float32], dim: int) -> npt.NDArray[np.float32]:
    if q.ndim != 2 or q.shape[1] != dim:
        raise _core.EmbeddingError(
            f"the embedder returned shape {q.shape}, expected ({q.shape[0]}, {dim})"
        )
    norms = np.linalg.norm(q.astype(np.float64), axis=1, keepdims=True)
    return (q / np.where(norms > 0, norms, 1.0)).astype(np.float32)


# ---- SQL helpers (identifiers always quoted by psycopg.sql) -------------------------------


def _sql(template: str, schema: str, table: str) -> Any:
    from psycopg import sql

    return sql.SQL(template).format(sql.Identifier(schema, table))


def _table(name: str, kind: Kind, generation: int) -> str:
    return f"tabret_{name}_{kind}{generation}"


def _ensure_extension(conn: psycopg.Connection[Any], url: str) -> None:
    import psycopg

    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as err:
        raise StoreError(
            f"the PostgreSQL server at {_where(url)} has no usable pgvector extension "
            f"('vector'): {str(err).strip().splitlines()[0]}"
        ) from None


def _comment(conn: psycopg.Connection[Any], schema: str, table: str) -> str | None:
    row = conn.execute(
        "SELECT obj_description(c.oid, 'pg_class') FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s",
        (schema, table),
    ).fetchone()
    return None if row is None else (row[0] or "")


def _has_registry(conn: psycopg.Connection[Any], schema: str) -> bool:
    comment = _comment(conn, schema, REGISTRY)
    if comment is None:
        return False
    if comment != MARKER:
        raise StoreError(
            f"table {schema}.{REGISTRY} exists but tabret did not write it: "
            "tabret will not read or change it (use another schema)"
        )
    return True


def _ensure_registry(conn: psycopg.Connection[Any], schema: str) -> None:
    if _has_registry(conn, schema):
        return
    conn.execute(
        _sql(
            "CREATE TABLE {} (name text PRIMARY KEY, generation bigint NOT NULL, "
            "format integer NOT NULL, embedder text NOT NULL, catalog_sha256 text NOT NULL, "
            "dim integer NOT NULL, tables integer NOT NULL, columns integer NOT NULL, "
            "hnsw boolean NOT NULL, catalog text NOT NULL)",
            schema,
            REGISTRY,
        )
    )
    conn.execute(_sql(f"COMMENT ON TABLE {{}} IS '{MARKER}'", schema, REGISTRY))


def _registered(conn: psycopg.Connection[Any], schema: str, name: str) -> _Registered | None:
    row = conn.execute(
        _sql(
            "SELECT generation, format, embedder, catalog_sha256, dim, tables, columns, hnsw, "
            "catalog FROM {} WHERE name = %s",
            schema,
            REGISTRY,
        ),
        (name,),
    ).fetchone()
    if row is None:
        return None
    gen, fmt, *rest = row
    if fmt != FORMAT_VERSION:
        raise StoreError(
            f"tabret index {name!r} was published in store format {fmt}; this tabret reads "
            f"format {FORMAT_VERSION}: publish it again"
        )
    reg = _Registered(int(gen), *rest)
    if _sha256(reg.catalog_json) != reg.catalog_sha256:
        raise StoreError(
            f"tabret index {name!r}: the catalog in {schema}.{REGISTRY} does not match its "
            "checksum (edited or corrupt): publish it again"
        )
    return reg


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _write_registry(conn: psycopg.Connection[Any], schema: str, name: str, r: _Registered) -> None:
    conn.execute(
        _sql(
            "INSERT INTO {} VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (name) "
            "DO UPDATE SET generation = EXCLUDED.generation, format = EXCLUDED.format, "
            "embedder = EXCLUDED.embedder, catalog_sha256 = EXCLUDED.catalog_sha256, "
            "dim = EXCLUDED.dim, tables = EXCLUDED.tables, columns = EXCLUDED.columns, "
            "hnsw = EXCLUDED.hnsw, catalog = EXCLUDED.catalog",
            schema,
            REGISTRY,
        ),
        (
            name,
            r.generation,
            FORMAT_VERSION,
            r.embedder,
            r.catalog_sha256,
            r.dim,
            r.tables,
            r.columns,
            r.hnsw,
            r.catalog_json,
        ),
    )


def _create_vectors(
    conn: psycopg.Connection[Any],
    schema: str,
    table: str,
    vectors: npt.NDArray[np.float32],
    dim: int,
) -> None:
    if _comment(conn, schema, table) is not None:
        raise StoreError(
            f"table {schema}.{table} exists and the registry does not name it: tabret will not "
            "replace a table it cannot prove it wrote (drop or rename it)"
        )
    conn.execute(
        _sql(
            f"CREATE TABLE {{}} (item integer PRIMARY KEY, embedding vector({int(dim)}) "
            "NOT NULL, text text)",
            schema,
            table,
        )
    )
    conn.execute(_sql(f"COMMENT ON TABLE {{}} IS '{MARKER}'", schema, table))
    with conn.cursor().copy(
        _sql("COPY {} (item, embedding) FROM STDIN (FORMAT BINARY)", schema, table)
    ) as copy:
        for chunk in _copy_chunks(vectors):
            copy.write(chunk)


def _set_texts(conn: psycopg.Connection[Any], schema: str, table: str, texts: list[str]) -> None:
    conn.execute(
        _sql(
            "UPDATE {} AS v SET text = t.text "
            "FROM unnest(%s::integer[], %s::text[]) AS t(item, text) WHERE v.item = t.item",
            schema,
            table,
        ),
        (list(range(len(texts))), texts),
    )


def _drop_ours(conn: psycopg.Connection[Any], schema: str, table: str) -> None:
    """Drops a vector table the registry named, when its comment says tabret wrote it."""
    comment = _comment(conn, schema, table)
    if comment is None:
        return
    if comment != MARKER:
        raise StoreError(
            f"table {schema}.{table} is named by the registry but tabret did not write it: "
            "left as it is"
        )
    conn.execute(_sql("DROP TABLE {}", schema, table))
