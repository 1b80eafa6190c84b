"""Key discovery for catalogs that declare no keys (warehouses, Spider 2.0-lite).

- :func:`infer_foreign_keys`: foreign keys inferred from column names (and values, with
  statistics): same name as another table's key, ``<table>_id`` → ``<table>.id``, and both
  after a role prefix or a copy number. The rules are those of the C++ header
  ``tabret/join/key_discovery.hpp``.
- :func:`with_foreign_keys`: a copy of a catalog with inferred keys added as foreign keys, so
  that ``JoinGraph.build(..., infer_compatibility=False)`` builds a sparse key graph from them.
- :func:`catalog_without_keys`: a copy with the declared keys hidden, to measure discovery
  against them.
"""

from __future__ import annotations

from collections.abc import Iterable

from tabret import _core
from tabret.catalog import Catalog

__all__ = ["InferredKey", "catalog_without_keys", "infer_foreign_keys", "with_foreign_keys"]

InferredKey = _core.InferredKey

_DEFAULTS = _core.infer_foreign_keys_defaults


def infer_foreign_keys(
    catalog: _core.Catalog,
    stats: _core.ColumnStats | None = None,
    *,
    use_primary_keys: bool = _DEFAULTS["use_primary_keys"],
    min_uniqueness: float = _DEFAULTS["min_uniqueness"],
    min_inclusion: float = _DEFAULTS["min_inclusion"],
    first_column_keys: bool = _DEFAULTS["first_column_keys"],
    role_prefixed: bool = _DEFAULTS["role_prefixed"],
) -> list[_core.InferredKey]:
    """Foreign keys inferred within each database of ``catalog``, sorted by (from, to).

    Key candidates of a table are its declared single-column primary key and UNIQUE columns
    (``use_primary_keys=False``: ignored, as if undeclared), else columns named ``id``,
    ``<table>_id`` / ``<table>id`` / ``<table>_key`` / ``<table>_code``, an identifier-looking
    first column (``first_column_keys``) and, with ``stats``, columns whose uniqueness is at
    least ``min_uniqueness``. With ``stats`` holding values for both columns, the share of the
    referencing column's values among the key's raises the confidence, and an edge below
    ``min_inclusion`` is dropped (default 0: none is; raise it only when the values are
    complete, not samples, which veto true keys). Each key has
    ``rule`` ("same_name", "table_name_id", "role_prefixed") and ``confidence``.
    Raises :class:`tabret.Error` for statistics of another (larger) catalog."""
    return _core.infer_foreign_keys(
        catalog,
        stats,
        use_primary_keys=use_primary_keys,
        min_uniqueness=min_uniqueness,
        min_inclusion=min_inclusion,
        first_column_keys=first_column_keys,
        role_prefixed=role_prefixed,
    )


def with_foreign_keys(catalog: _core.Catalog, keys: Iterable[_core.InferredKey]) -> Catalog:
    """A copy of ``catalog`` (same ids) with ``keys`` added as foreign keys; pairs already
    declared are added once."""
    return Catalog(_core.with_foreign_keys(catalog, list(keys)))


def catalog_without_keys(catalog: _core.Catalog, *, keep_primary_keys: bool = False) -> Catalog:
    """A copy of ``catalog`` (same ids, names, types, descriptions) without foreign keys and,
    unless ``keep_primary_keys``, without primary keys and UNIQUE constraints."""
    return Catalog(_core.catalog_without_keys(catalog, keep_primary_keys))
