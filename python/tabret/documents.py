"""Documents attached to a database: the passages that name a table join its description.

Warehouses ship documentation beside their schemas: metric definitions, code tables, data
models. :func:`attach_documents` takes each database's documents and returns a copy of the
catalog in which every table of that database gains, after its own description, the passages
of those documents that name it, so that an index built with the ``described`` table format
embeds them (``TableIndex.build(format="described")``, ``--format described``).

A passage is a paragraph (blank-line separated; a Markdown heading stays with the paragraph
below it). A passage names a table when it contains, as a whole word and in any case, the
table's name (the last dotted part of a qualified name), its natural name, or, for a
date-sharded or numbered table such as ``events_20210131``, its stem ``events``; only names of
at least 4 characters count, so that short words do not match everywhere. What a table gains
is capped at ``max_chars``: whole passages in document order, skipping one that would not fit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from tabret import _core
from tabret.catalog import Catalog

__all__ = ["attach_documents", "passages"]

_SHARD = re.compile(r"_?(\d{4,8}|\*)$")
_MIN_NAME = 4


def passages(text: str) -> list[str]:
    """The paragraphs of ``text``, whitespace collapsed; a heading joins the next paragraph."""
    out: list[str] = []
    heading = ""
    for block in re.split(r"\n\s*\n", text):
        words = " ".join(block.split())
        if not words:
            continue
        if words.startswith("#") and "\n" not in block.strip():
            heading = f"{heading} {words}".strip()
            continue
        out.append(f"{heading} {words}".strip())
        heading = ""
    if heading:
        out.append(heading)
    return out


def _names(table: Mapping[str, object]) -> list[re.Pattern[str]]:
    """Whole-word patterns for the ways a passage may name ``table`` (catalog JSON)."""
    name = str(table["name"]).rsplit(".", 1)[-1].lower()
    forms = {name, _SHARD.sub("", name), str(table.get("nl_name") or "").lower()}
    return [
        re.compile(r"(?<![\w])" + re.escape(f) + r"(?![\w])", re.IGNORECASE)
        for f in sorted(forms)
        if len(f) >= _MIN_NAME
    ]


def attach_documents(
    catalog: _core.Catalog, documents: Mapping[str, Sequence[str]], *, max_chars: int = 1000
) -> Catalog:
    """A copy of ``catalog`` in which each table of a database in ``documents`` (database name
    -> document texts) has the passages that name it appended to its description (at most
    ``max_chars`` characters of them). Other databases and every column are unchanged.

    Raises :class:`tabret.SchemaError` naming a database that is not in the catalog or a
    document that is not a string, and ``ValueError`` for ``max_chars`` below 1."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, not {max_chars}")
    raw = json.loads(_core.catalog_to_json_text(catalog))
    by_name = {db["name"].lower(): db for db in raw["databases"]}
    for db_name, texts in documents.items():
        db = by_name.get(db_name.lower())
        if db is None:
            raise _core.SchemaError(f"documents for database '{db_name}': not in the catalog")
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise _core.SchemaError(
                f"documents for database '{db_name}': expected a list of document texts"
            )
        found = [p for text in texts for p in passages(text)]
        for table in db["tables"]:
            _attach(table, found, max_chars)
    return Catalog(_core.catalog_from_json_text(json.dumps(raw), "<attach_documents>"))


def _attach(table: dict[str, object], found: list[str], max_chars: int) -> None:
    patterns = _names(table)
    gained: list[str] = []
    used = 0
    for p in found:
        if used + len(p) <= max_chars and any(pattern.search(p) for pattern in patterns):
            gained.append(p)
            used += len(p) + 1
    if gained:
        own = str(table.get("description") or "")
        table["description"] = " ".join([own, *gained]).strip()
