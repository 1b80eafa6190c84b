"""Catalog from a dbt project's ``manifest.json`` (manifest schema v7 to v12, dbt Core 1.3 to
1.11, and dbt Fusion's v20, identical to v12), optionally with the ``catalog.json`` of
``dbt docs generate`` for the columns and types the YAML does not declare.

Every model, seed, snapshot (not ephemeral models: they are no table) and source is a table
of one tabret database; docs/catalog.md says how names map. Descriptions become descriptions;
``relationships`` tests and ``foreign_key`` constraints become foreign keys, ``not_null`` and
``unique`` tests and constraints column constraints, ``primary_key`` constraints primary keys.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tabret import _json
from tabret._core import SchemaError
from tabret._tables import (
    ColumnSpec,
    Relation,
    TableSpec,
    add_tables,
    qualified_names,
    single_database,
)

if TYPE_CHECKING:
    from tabret._core import Catalog

#: Manifest schema versions read: dbt Core 1.3 (v7) to 1.11 (v12); Fusion writes v20 (= v12).
VERSIONS = (7, 8, 9, 10, 11, 12, 20)
_VERSION = re.compile(r"/manifest/v(\d+)\.json$")
_TABLE_TYPES = ("model", "seed", "snapshot")
_Q = r"""\s*(['"])(.*?)\{}\s*"""  # a quoted argument; {} is the group of its quote
_REF = re.compile(
    r"\bref\(" + _Q.format(1) + r"(?:," + _Q.format(3) + r")?"
    r"""(?:,\s*v(?:ersion)?\s*=\s*['"]?([^'")\s]+)['"]?\s*)?\)"""
)
_SOURCE = re.compile(r"\bsource\(" + _Q.format(1) + r"," + _Q.format(3) + r"\)")


@dataclass
class _Node:
    uid: str
    raw: dict[str, Any]
    relation: Relation
    table: TableSpec


class _Manifest:
    """The manifest's tables by unique id, and the errors that name its file and nodes."""

    def __init__(self, path: Path, data: Any) -> None:
        self.path = path
        if not isinstance(data, dict) or not isinstance(data.get("metadata"), dict):
            raise SchemaError(f"{path}: not a dbt manifest (no 'metadata' object)")
        self.version = self._version(data["metadata"])
        self.data = data
        self.nodes = self._section("nodes")
        self.sources = self._section("sources")
        self.tables: dict[str, _Node] = {}
        #: Ephemeral models: no table, so no key to or from them.
        self.skipped: set[str] = set()

    def _version(self, metadata: dict[str, Any]) -> int:
        text = metadata.get("dbt_schema_version")
        found = _VERSION.search(text) if isinstance(text, str) else None
        if found is None:
            raise SchemaError(f"{self.path}: not a dbt manifest (no metadata.dbt_schema_version)")
        version = int(found.group(1))
        if version not in VERSIONS:
            raise SchemaError(
                f"{self.path}: dbt manifest schema v{version}; tabret reads v7 to v12 "
                f"(dbt Core 1.3 to 1.11) and v20 (dbt Fusion)"
            )
        return version

    def _section(self, key: str) -> dict[str, dict[str, Any]]:
        section = self.data.get(key, {})
        if not isinstance(section, dict):
            raise SchemaError(f"{self.path}: '{key}' is not an object")
        for uid, node in section.items():
            if not isinstance(node, dict):
                raise SchemaError(f"{self.path}: {key[:-1]} '{uid}' is not an object")
        return section

    def fail(self, uid: str, what: str) -> SchemaError:
        return SchemaError(f"{self.path}: node '{uid}': {what}")

    def text(self, uid: str, node: dict[str, Any], key: str, *, required: bool = False) -> str:
        """The string field ``key`` of a node (``""`` when absent or null, unless required)."""
        value = node.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, str) or (required and not value):
            raise self.fail(uid, f"field '{key}' is {_what(value)}, not a name")
        return value

    def field(self, uid: str, node: dict[str, Any], key: str, kind: type) -> Any:
        """The field ``key`` of a node, of type ``kind`` (empty when absent or null)."""
        value = node.get(key)
        if value is None:
            return kind()
        if not isinstance(value, kind):
            raise self.fail(uid, f"field '{key}' is {_what(value)}, not a {kind.__name__}")
        return value


def _what(value: Any) -> str:
    return "missing" if value is None else f"{type(value).__name__} {value!r}"[:80]


def _unquoted(name: str) -> str:
    """A column name as dbt's YAML may quote it (``'"Order ID"'``)."""
    name = name.strip()
    if len(name) > 1 and name[0] == name[-1] and name[0] in "\"`'":
        return name[1:-1]
    return name


def _relation_nodes(m: _Manifest) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(unique id, node, the field naming its relation) of every table node."""
    for uid, node in m.nodes.items():
        if node.get("resource_type") in _TABLE_TYPES:
            config = m.field(uid, node, "config", dict)
            if config.get("materialized") == "ephemeral":
                m.skipped.add(uid)
                continue
            yield uid, node, "alias"
    for uid, node in m.sources.items():
        yield uid, node, "identifier"


def _read_tables(m: _Manifest) -> None:
    nodes = []
    for uid, node, alias in _relation_nodes(m):
        name = m.text(uid, node, alias) or m.text(uid, node, "name", required=True)
        relation = Relation(m.text(uid, node, "database"), m.text(uid, node, "schema"), name)
        columns = [
            _column(m, uid, key, c) for key, c in m.field(uid, node, "columns", dict).items()
        ]
        table = TableSpec("", m.text(uid, node, "description"), columns, [])
        nodes.append(_Node(uid, node, relation, table))
    names = qualified_names([n.relation for n in nodes])
    for n in nodes:
        n.table.name = names[n.relation.key()]
        m.tables[n.uid] = n


def _column(m: _Manifest, uid: str, key: str, column: Any) -> ColumnSpec:
    if not isinstance(column, dict):
        raise m.fail(uid, f"column '{key}' is {_what(column)}, not an object")
    name = m.text(uid, column, "name") or key
    return ColumnSpec(
        _unquoted(name),
        m.text(uid, column, "data_type").lower(),
        m.text(uid, column, "description"),
    )


def _merge_catalog(m: _Manifest, catalog: Any, path: Path) -> None:
    """Columns, types and comments from ``catalog.json`` (what the warehouse holds): its
    columns in their order, then those only the manifest names; the manifest's descriptions
    and declared types win."""
    if not isinstance(catalog, dict):
        raise SchemaError(f"{path}: not a dbt catalog.json (not an object)")
    for key in ("nodes", "sources"):
        section = catalog.get(key) or {}
        if not isinstance(section, dict):
            raise SchemaError(f"{path}: '{key}' is not an object")
        for uid, entry in section.items():
            if uid in m.tables:
                _merge_entry(m.tables[uid].table, entry, path, uid)


def _merge_entry(table: TableSpec, entry: Any, path: Path, uid: str) -> None:
    columns = entry.get("columns") if isinstance(entry, dict) else None
    if not isinstance(columns, dict):
        raise SchemaError(f"{path}: node '{uid}': no 'columns' object")
    merged = []
    for key, c in sorted(columns.items(), key=lambda kv: _index(kv[1])):
        name = str(c.get("name") or key) if isinstance(c, dict) else str(key)
        spec = table.column(name) or ColumnSpec(name, "", "")
        info = c if isinstance(c, dict) else {}
        spec.type = spec.type or str(info.get("type") or "").lower()
        spec.description = spec.description or str(info.get("comment") or "")
        merged.append(spec)
    seen = {c.name.lower() for c in merged}
    table.columns = merged + [c for c in table.columns if c.name.lower() not in seen]
    metadata = entry.get("metadata")
    if not table.description and isinstance(metadata, dict):
        table.description = str(metadata.get("comment") or "")


def _index(column: Any) -> int:
    index = column.get("index") if isinstance(column, dict) else None
    return index if isinstance(index, int) else 0


def _target(m: _Manifest, uid: str, field: str, text: Any, near: list[str]) -> str | None:
    """The unique id that ``ref('x')`` / ``ref('pkg', 'x', v=2)`` / ``source('s', 't')`` in
    ``text`` names (one of ``near``, the test's dependencies, first); None for an ephemeral
    model."""
    if not isinstance(text, str):
        raise m.fail(uid, f"'{field}' is {_what(text)}, not ref(...) or source(...)")
    if ref := _REF.search(text):
        package, name = (ref.group(2), ref.group(4)) if ref.group(4) else (None, ref.group(2))
        found = [
            u
            for u, n in m.nodes.items()
            if (u in m.tables or u in m.skipped)
            and n.get("name") == name
            and package in (None, n.get("package_name"))
            and ref.group(5) in (None, str(n.get("version")))
        ]
    elif source := _SOURCE.search(text):
        found = [
            u
            for u, n in m.sources.items()
            if n.get("source_name") == source.group(2) and n.get("name") == source.group(4)
        ]
    else:
        raise m.fail(uid, f"'{field}' is {text!r}, not ref(...) or source(...)")
    found = [u for u in found if u in near] or found
    if len(found) != 1:
        what = "names nothing in the manifest" if not found else f"is ambiguous: {found}"
        raise m.fail(uid, f"'{field}' {text!r} {what}")
    return None if found[0] in m.skipped else found[0]


def _column_of(m: _Manifest, owner: str, name: Any, uid: str, field: str) -> str:
    """The table ``owner``'s column ``name``, added when the manifest does not list it (a test
    on it says it exists)."""
    if not isinstance(name, str) or not name.strip():
        raise m.fail(uid, f"'{field}' is {_what(name)}, not a column name")
    table = m.tables[owner].table
    column = _unquoted(name)
    if table.column(column) is None:
        table.columns.append(ColumnSpec(column, "", ""))
    return column


def _tested_node(m: _Manifest, uid: str, node: dict[str, Any], kwargs: dict[str, Any]) -> Any:
    """The table a test is attached to: ``attached_node`` (v10 and later), else the ref or
    source in its ``model`` argument (``{{ get_where_subquery(ref('orders')) }}``)."""
    attached = node.get("attached_node")
    if isinstance(attached, str) and attached:
        return attached if attached not in m.skipped else None
    near = m.field(uid, m.field(uid, node, "depends_on", dict), "nodes", list)
    return _target(m, uid, "test_metadata.kwargs.model", kwargs.get("model"), near)


def _apply_test(m: _Manifest, uid: str, node: dict[str, Any]) -> None:
    meta = m.field(uid, node, "test_metadata", dict)
    kind = meta.get("name")
    if kind not in ("relationships", "not_null", "unique"):
        return
    kwargs = m.field(uid, meta, "kwargs", dict)
    owner = _tested_node(m, uid, node, kwargs)
    if owner is None:
        return
    if owner not in m.tables:
        raise m.fail(uid, f"the tested node '{owner}' is not a table of the manifest")
    named = node.get("column_name") or kwargs.get("column_name")
    column = _column_of(m, owner, named, uid, "column_name")
    if kind != "relationships":
        spec = m.tables[owner].table.column(column)
        assert spec is not None
        setattr(spec, "not_null" if kind == "not_null" else "unique", True)
        return
    near = m.field(uid, m.field(uid, node, "depends_on", dict), "nodes", list)
    target = _target(m, uid, "test_metadata.kwargs.to", kwargs.get("to"), near)
    if target is not None:
        field = _column_of(m, target, kwargs.get("field"), uid, "test_metadata.kwargs.field")
        _add_key(m, owner, [column], target, [field])


def _add_key(m: _Manifest, owner: str, columns: list[str], target: str, fields: list[str]) -> None:
    key = (columns, m.tables[target].table.name, fields)
    if key not in m.tables[owner].table.foreign_keys:  # a test and a constraint may both say it
        m.tables[owner].table.foreign_keys.append(key)


def _apply_constraints(m: _Manifest, n: _Node) -> None:
    """Model contracts (v9 and later): ``constraints`` on the model and on its columns."""
    declared: list[tuple[str | None, Any]]
    declared = [(None, c) for c in m.field(n.uid, n.raw, "constraints", list)]
    for key, column in m.field(n.uid, n.raw, "columns", dict).items():
        name = _unquoted(str(column.get("name") or key))
        declared += [(name, c) for c in m.field(n.uid, column, "constraints", list)]
    for column_name, c in declared:
        if not isinstance(c, dict):
            raise m.fail(n.uid, f"a constraint is {_what(c)}, not an object")
        columns = [column_name] if column_name else [_unquoted(x) for x in c.get("columns") or []]
        _apply_constraint(m, n, str(c.get("type")), columns, c)


def _apply_constraint(
    m: _Manifest, n: _Node, kind: str, columns: list[str], c: dict[str, Any]
) -> None:
    table = n.table
    if kind == "primary_key":
        table.primary_key = [_column_of(m, n.uid, x, n.uid, "constraints.columns") for x in columns]
    elif kind in ("not_null", "unique") and len(columns) == 1:
        spec = table.column(_column_of(m, n.uid, columns[0], n.uid, "constraints.columns"))
        assert spec is not None
        setattr(spec, kind, True)
    elif kind == "foreign_key" and c.get("to"):  # dbt 1.9: to and to_columns
        target = _target(m, n.uid, "constraints.to", c["to"], [])
        if target is not None:
            fields = [
                _column_of(m, target, x, n.uid, "constraints.to_columns")
                for x in c.get("to_columns") or []
            ]
            owned = [_column_of(m, n.uid, x, n.uid, "constraints.columns") for x in columns]
            _add_key(m, n.uid, owned, target, fields)


def _project(m: _Manifest) -> str:
    name = m.data["metadata"].get("project_name")
    if isinstance(name, str) and name:
        return name
    packages = [n.raw.get("package_name") for n in m.tables.values() if n.uid.startswith("model.")]
    first = next((p for p in packages if isinstance(p, str) and p), "")
    return first or single_database([n.relation for n in m.tables.values()]) or "dbt"


def manifest_files(path: Path) -> tuple[Path, Path | None]:
    """A dbt ``target/`` directory's ``manifest.json`` and, when there, ``catalog.json``; a
    file is the manifest alone."""
    if not path.is_dir():
        return path, None
    catalog = path / "catalog.json"
    return path / "manifest.json", catalog if catalog.exists() else None


def add_dbt(
    cat: Catalog,
    manifest: str | os.PathLike[str],
    db_name: str,
    catalog: str | os.PathLike[str] | None,
) -> int:
    """Adds the tables of a dbt manifest as one database (default name: the dbt project's)."""
    path, found = manifest_files(Path(manifest))
    m = _Manifest(path, _json.read_file(path))
    _read_tables(m)
    catalog_path = Path(catalog) if catalog is not None else found
    if catalog_path is not None:
        _merge_catalog(m, _json.read_file(catalog_path), catalog_path)
    for n in list(m.tables.values()):
        _apply_constraints(m, n)
    for uid, node in m.nodes.items():
        if node.get("resource_type") == "test":
            _apply_test(m, uid, node)
    tables = [n.table for n in m.tables.values()]
    return add_tables(cat, db_name or _project(m), tables, str(path))
