"""An embedder wrapper that keeps every vector it has computed on disk, so that repeated runs
(e.g. the ablations of one method over one benchmark) embed each distinct text once.

The store is one SQLite database, ``<directory>/embeddings.sqlite`` (format
``tabret-embedding-cache`` 1: ``PRAGMA application_id`` 0x74627265, ``user_version`` 1), with
one table ``vectors(embedder BLOB, text BLOB, dim INTEGER, vector BLOB, checksum INTEGER)``
keyed by (embedder name, text); ``checksum`` is the CRC-32 of name, text and vector, checked on
every read (SQLite does not checksum its pages), and opening runs ``PRAGMA quick_check``.
Names and texts are stored as their exact UTF-8 bytes (lone surrogates kept with
``surrogatepass``), so ``"a"`` and ``"a\\x00"`` are two keys; a vector is ``dim`` little-endian
float32. The database runs in WAL mode with a busy timeout; each batch of new
vectors is one transaction, so any number of instances, threads and processes may share a
directory and nothing committed is lost.

Earlier versions kept ``<directory>/<hash>/shard-*.npz`` files, which could not tell ``"a"``
from ``"a\\x00"``; such a directory is refused with :class:`tabret.FileError` naming a shard
(move or delete the old shards; they are never modified). So is a file at
``embeddings.sqlite`` that is not such a database, or a damaged one (also a stored vector
that fails its checksum).

A cache this process cannot write (the database or its directory is read-only, or lies on a
read-only filesystem) is opened read-only (``read_only``): vectors are read from it, new ones
are computed and not stored, with a warning when it is opened.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import urllib.parse
import warnings
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tabret import FileError
from tabret.embedders import Embedder, FloatArray, HashingEmbedder, resolve_embedder

__all__ = ["DiskCachedEmbedder"]

APPLICATION_ID = 0x74627265  # "tbre"
FORMAT_VERSION = 1
BUSY_TIMEOUT_S = 60.0
DATABASE_NAME = "embeddings.sqlite"
_CHUNK = 500  # keys per SELECT … IN (…), under SQLite's parameter limit


def _key(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _checksum(name: bytes, text: bytes, vector: bytes) -> int:
    crc = zlib.crc32(len(name).to_bytes(8, "little") + name)
    crc = zlib.crc32(len(text).to_bytes(8, "little") + text, crc)
    return zlib.crc32(vector, crc)


def _header(db: sqlite3.Connection) -> tuple[int, int, int]:
    """application_id, user_version and the number of schema entries, read in one snapshot
    (another process may be creating the cache between two separate reads)."""
    db.execute("BEGIN")
    try:
        app = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = db.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0]
    finally:
        db.execute("COMMIT")
    return int(app), int(version), int(tables)


def _set_wal(db: sqlite3.Connection) -> None:
    """Switches to WAL mode. SQLite answers "database is locked" at once, without waiting, when
    another process holds a write lock while this one holds a read lock; retry until
    BUSY_TIMEOUT_S."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL").fetchone()
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _writable(path: Path) -> bool:
    """Whether this process may write ``path`` and make its -wal, -shm and journal beside it
    (false on a read-only filesystem, as root too)."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _read_only_uris(path: Path) -> list[str]:
    """The read-only SQLite URIs to try for ``path``: ``immutable=1`` on a read-only
    filesystem, where nobody can change the file (no locks, no -shm needed); elsewhere
    ``mode=ro``, then ``immutable=1`` where that cannot read it (a WAL database whose -shm cannot
    be made in a directory this process cannot write)."""
    base = f"file://{urllib.parse.quote(str(path.resolve()))}"
    if os.statvfs(path).f_flag & os.ST_RDONLY:
        return [f"{base}?immutable=1"]
    return [f"{base}?mode=ro", f"{base}?immutable=1"]


class DiskCachedEmbedder:
    """Wraps ``inner`` (same ``name``): texts already seen come from ``directory``, the others
    go to ``inner`` in one batch and are committed to ``<directory>/embeddings.sqlite`` in one
    transaction. Vectors are stored as ``inner`` returned them (tabret normalises them
    afterwards). Safe for many threads and processes sharing a directory; ``inner`` is called
    without any lock held, so it may itself call this cache."""

    def __init__(
        self, inner: Embedder | HashingEmbedder | str, directory: str | os.PathLike[str]
    ) -> None:
        self._embed, self._name = resolve_embedder(inner)
        self._dir = Path(directory)
        self._path = self._dir / DATABASE_NAME
        self._read_only = self._path.is_file() and not _writable(self._path)
        if not self._read_only:
            self._dir.mkdir(parents=True, exist_ok=True)
        old = next(iter(sorted(self._dir.glob("*/shard-*.npz"))), None)
        if old is not None:
            raise FileError(
                f"{old}: an embedding cache in the old shard format, which cannot tell texts "
                f"that differ by trailing NULs apart; move or delete the shards under "
                f"{old.parent} to start a new cache in {self._dir} (they were left untouched)"
            )
        self._lock = threading.Lock()
        self._db = self._open()
        self.misses = 0
        if self._read_only:
            warnings.warn(
                f"{self._path}: the embedding cache is read-only: cached vectors are used, "
                "new vectors are not stored",
                stacklevel=2,
            )

    def _fail(self, what: str, err: Exception) -> FileError:
        return FileError(f"{self._path}: embedding cache: {what}: {err}")

    def _open(self) -> sqlite3.Connection:
        if not self._read_only:
            return self._connect(str(self._path), uri=False)
        *first, last = _read_only_uris(self._path)
        for target in first:
            try:
                return self._connect(target, uri=True)
            except FileError:
                continue
        return self._connect(last, uri=True)

    def _connect(self, target: str, *, uri: bool) -> sqlite3.Connection:
        path = self._path
        if path.exists():
            if not path.is_file():
                raise FileError(f"{path}: not a regular file (an embedding cache is a SQLite file)")
            with path.open("rb") as f:
                head = f.read(16)
            if head and head != b"SQLite format 3\x00":
                raise FileError(
                    f"{path}: not a tabret embedding cache (not a SQLite database); "
                    "the file was left untouched"
                )
        try:
            db = sqlite3.connect(
                target,
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
                uri=uri,
            )
        except sqlite3.Error as err:
            raise self._fail("cannot open", err) from err
        try:
            app, version, tables = _header(db)
            if app == APPLICATION_ID:
                if version != FORMAT_VERSION:
                    raise FileError(
                        f"{path}: embedding cache format version {version}; this tabret reads "
                        f"version {FORMAT_VERSION}"
                    )
                check = db.execute("PRAGMA quick_check(1)").fetchone()[0]
                if check != "ok":
                    raise FileError(
                        f"{path}: embedding cache: the database is damaged ({check}); "
                        "the file was left untouched"
                    )
            elif app != 0 or tables != 0:
                raise FileError(
                    f"{path}: a SQLite database that is not a tabret embedding cache "
                    f"(application_id {app}); the file was left untouched"
                )
            if self._read_only and app == 0:
                raise FileError(
                    f"{path}: embedding cache: an empty file that cannot be written (it or its "
                    "directory is read-only), so no cache can be made in it"
                )
            if not self._read_only:
                _set_wal(db)
            if app == 0:
                db.execute("BEGIN IMMEDIATE")
                try:
                    if db.execute("PRAGMA application_id").fetchone()[0] == 0:
                        db.execute(
                            "CREATE TABLE vectors(embedder BLOB NOT NULL, text BLOB NOT NULL, "
                            "dim INTEGER NOT NULL, vector BLOB NOT NULL, "
                            "checksum INTEGER NOT NULL, "
                            "PRIMARY KEY(embedder, text)) WITHOUT ROWID"
                        )
                        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                        db.execute(f"PRAGMA user_version = {FORMAT_VERSION}")
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
            db.execute("SELECT count(*) FROM vectors WHERE 0").fetchone()
        except sqlite3.Error as err:
            db.close()
            raise self._fail("cannot read the database", err) from err
        except BaseException:
            db.close()
            raise
        return db

    @contextmanager
    def _locked(self, what: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._db
            except sqlite3.Error as err:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise self._fail(what, err) from err

    @property
    def name(self) -> str:
        return self._name

    @property
    def allows_zero_rows(self) -> bool:
        """As the wrapped embedder: whether a zero vector is a legitimate answer (the hashing
        embedder's, for a text without features) rather than an error."""
        owner = getattr(self._embed, "__self__", None)
        return bool(
            getattr(self._embed, "allows_zero_rows", False)
            or getattr(owner, "allows_zero_rows", False)
        )

    @property
    def path(self) -> Path:
        """The SQLite database file."""
        return self._path

    @property
    def read_only(self) -> bool:
        """True for an existing cache this process cannot write: it is only read."""
        return self._read_only

    def close(self) -> None:
        """Closes the database (also done when the object is collected)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> DiskCachedEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        # sqlite3 connections sit in a reference cycle (their statement cache): close it now,
        # so that the -wal and -shm files go away when the last reference does.
        db = getattr(self, "_db", None)
        if db is not None:
            db.close()

    def __len__(self) -> int:
        with self._locked("cannot read") as db:
            row = db.execute(
                "SELECT count(*) FROM vectors WHERE embedder = ?", (_key(self._name),)
            ).fetchone()
        return int(row[0])

    def _lookup(self, texts: list[str]) -> dict[str, FloatArray]:
        by_key = {_key(t): t for t in texts}
        keys = list(by_key)
        name = _key(self._name)
        rows: list[tuple[bytes, int, bytes, int]] = []
        with self._locked("cannot read") as db:
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows += db.execute(
                    "SELECT text, dim, vector, checksum FROM vectors "
                    f"WHERE embedder = ? AND text IN ({marks})",
                    (name, *chunk),
                ).fetchall()
        found: dict[str, FloatArray] = {}
        for key, dim, blob, checksum in rows:
            key, blob = bytes(key), bytes(blob)
            vector = np.frombuffer(blob, dtype="<f4")
            if vector.shape[0] != dim or _checksum(name, key, blob) != checksum:
                raise FileError(
                    f"{self._path}: embedding cache: the vector of {by_key.get(key, key)!r} "
                    "is damaged (checksum mismatch)"
                )
            found[by_key[key]] = vector.astype(np.float32)
        return found

    def _store(self, texts: list[str], vectors: FloatArray) -> None:
        name = _key(self._name)
        dim = int(vectors.shape[1]) if vectors.ndim == 2 else 0
        rows = []
        for t, v in zip(texts, vectors, strict=True):
            key, blob = _key(t), np.ascontiguousarray(v, dtype="<f4").tobytes()
            rows.append((name, key, dim, blob, _checksum(name, key, blob)))
        with self._locked("cannot write") as db:
            db.execute("BEGIN IMMEDIATE")
            db.executemany(
                "INSERT OR REPLACE INTO vectors(embedder, text, dim, vector, checksum) "
                "VALUES (?, ?, ?, ?, ?)",
                rows,
            )
            db.execute("COMMIT")

    def embed(self, texts: list[str]) -> Any:
        distinct = list(dict.fromkeys(texts))
        have = self._lookup(distinct)
        missing = [t for t in distinct if t not in have]
        if missing:
            # No lock is held here: ``inner`` may call this cache (or another thread may).
            fn = self._embed.embed if isinstance(self._embed, HashingEmbedder) else self._embed
            vectors = np.asarray(fn(missing), dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape[0] != len(missing):
                return vectors  # let tabret report the wrong shape
            if not self._read_only:
                self._store(missing, vectors)
            have.update(zip(missing, vectors, strict=True))
            self.misses += len(missing)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([have[t] for t in texts])
