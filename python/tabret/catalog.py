"""The schema catalog: databases, tables, columns and keys, with loaders for every format."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tabret import _core

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Catalog"]

PathLike = str | os.PathLike[str]


class Catalog(_core.Catalog):
    """Databases, tables and columns with dense, stable ids (their insertion order).

    Build one with a ``from_*`` class method, or start empty and ``add_*`` sources into it;
    every ``add_*`` is all or nothing: on error the catalog is unchanged. A built catalog is
    read-only in practice and safe to share between threads.
    """

    @classmethod
    def from_spider_json(cls, path: PathLike) -> Self:
        """Spider/BIRD ``tables.json``: many databases, natural-language names included."""
        cat = cls()
        cat.add_spider_json(path)
        return cat

    @classmethod
    def from_ddl(cls, path: PathLike, db_name: str = "") -> Self:
        """A SQL DDL file (SQLite, PostgreSQL, MySQL or Db2 dialect) as one database."""
        cat = cls()
        cat.add_ddl(path, db_name)
        return cat

    @classmethod
    def from_sqlite(cls, path: PathLike, db_name: str = "") -> Self:
        """The schema of a SQLite database file, foreign keys included, as one database."""
        cat = cls()
        cat.add_sqlite(path, db_name)
        return cat

    @classmethod
    def from_json(cls, path: PathLike) -> Self:
        """tabret's own catalog JSON, as written by :meth:`save_json`."""
        return cls(_core.load_catalog_json(path))

    @classmethod
    def from_sqlalchemy(
        cls, bind: str | Any, db_name: str = "", *, schema: str | None = None
    ) -> Self:
        """Any database SQLAlchemy can reflect, from a URL or an ``Engine`` (needs the
        ``sqlalchemy`` extra)."""
        cat = cls()
        cat.add_sqlalchemy(bind, db_name, schema=schema)
        return cat

    @classmethod
    def from_duckdb(cls, path: PathLike, db_name: str = "") -> Self:
        """The schema of a DuckDB database file, keys and comments included, as one database
        (needs the ``duckdb`` extra)."""
        cat = cls()
        cat.add_duckdb(path, db_name)
        return cat

    @classmethod
    def from_dbt(
        cls, manifest: PathLike, db_name: str = "", *, catalog: PathLike | None = None
    ) -> Self:
        """The models, seeds, snapshots and sources of a dbt ``manifest.json`` (or of a dbt
        ``target/`` directory, its ``catalog.json`` included when there), as one database."""
        cat = cls()
        cat.add_dbt(manifest, db_name, catalog=catalog)
        return cat

    @classmethod
    def from_information_schema(
        cls, columns: PathLike, db_name: str = "", *, keys: PathLike | None = None
    ) -> Self:
        """A warehouse's ``INFORMATION_SCHEMA.COLUMNS`` exported as CSV or JSON (Snowflake,
        BigQuery), with its keys from an optional keys export, as one database; ``columns``
        may be a directory holding ``columns.<csv|json|jsonl>`` and ``keys.<…>``."""
        cat = cls()
        cat.add_information_schema(columns, db_name, keys=keys)
        return cat

    def add_spider_json(self, path: PathLike) -> None:
        _core.add_spider_json(self, path)

    def add_ddl(self, path: PathLike, db_name: str = "") -> int:
        """Adds a DDL file as one database (default name: the file stem); returns its id."""
        return _core.add_ddl(self, path, db_name)

    def add_ddl_text(self, sql: str, db_name: str, source: str = "<string>") -> int:
        return _core.add_ddl_text(self, sql, db_name, source)

    def add_sqlite(self, path: PathLike, db_name: str = "") -> int:
        """Adds a SQLite file as one database (default name: the file stem); returns its id."""
        return _core.add_sqlite(self, path, db_name)

    def add_sqlalchemy(
        self, bind: str | Any, db_name: str = "", *, schema: str | None = None
    ) -> int:
        """Adds one reflected database (default name: the schema or the URL's database)."""
        from tabret._sqlalchemy import add_reflected

        return add_reflected(self, bind, db_name, schema=schema)

    def add_duckdb(self, path: PathLike, db_name: str = "") -> int:
        """Adds a DuckDB file as one database (default name: the file stem), read-only;
        returns its id."""
        from tabret._duckdb import add_duckdb

        return add_duckdb(self, path, db_name)

    def add_dbt(
        self, manifest: PathLike, db_name: str = "", *, catalog: PathLike | None = None
    ) -> int:
        """Adds a dbt project's tables as one database (default name: the project's); returns
        its id."""
        from tabret._dbt import add_dbt

        return add_dbt(self, manifest, db_name, catalog)

    def add_information_schema(
        self, columns: PathLike, db_name: str = "", *, keys: PathLike | None = None
    ) -> int:
        """Adds an ``INFORMATION_SCHEMA`` export as one database (default name: its one
        ``TABLE_CATALOG``, else the file stem); returns its id."""
        from tabret._information_schema import add_information_schema, export_files

        path = Path(columns)
        if path.is_dir():
            path, found = export_files(path)
            keys = found if keys is None else keys
        return add_information_schema(self, path, keys, db_name)

    def save_json(self, path: PathLike) -> None:
        """Writes tabret catalog JSON atomically (temp file, fsync, rename) to a new or regular
        file; a symbolic link, directory, FIFO, socket or device at ``path`` is a
        :class:`tabret.FileError` and left as it is."""
        _core.save_catalog_json(self, path)

    def to_json(self) -> str:
        return _core.catalog_to_json_text(self)
