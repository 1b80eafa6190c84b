"""The schema catalog: databases, tables, columns and keys, with loaders for every format."""

from __future__ import annotations

import os
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

    def save_json(self, path: PathLike) -> None:
        """Writes tabret catalog JSON atomically (temp file, fsync, rename) to a new or regular
        file; a symbolic link, directory, FIFO, socket or device at ``path`` is a
        :class:`tabret.FileError` and left as it is."""
        _core.save_catalog_json(self, path)

    def to_json(self) -> str:
        return _core.catalog_to_json_text(self)
