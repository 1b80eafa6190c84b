"""The bundled demo catalog and the benchmark data directory."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tabret import _core
from tabret.catalog import Catalog

__all__ = ["Question", "data_dir", "demo_catalog", "demo_questions"]


@dataclass(frozen=True)
class Question:
    """A question with the tables its SQL uses (``db.table``, original names)."""

    id: str
    db: str
    question: str
    gold_tables: tuple[str, ...]
    sql: str = ""


def _demo_file(name: str) -> Path:
    return Path(str(resources.files("tabret") / "data" / "demo" / name))


def demo_catalog() -> Catalog:
    """Six small databases in different domains (69 tables), written for tabret."""
    return Catalog.from_json(_demo_file("catalog.json"))


def demo_values(catalog: Catalog | None = None) -> _core.ValueIndex:
    """The cell values of :func:`demo_catalog`'s text columns (``data/demo/values.json``: a few
    per column, with the literals the demo questions' SQL compares with), as a value index of
    ``catalog`` (default: the demo catalog)."""
    cat = catalog if catalog is not None else demo_catalog()
    path = _demo_file("values.json")
    raw = json.loads(path.read_text(encoding="utf-8"))
    values = _core.ValueIndex(cat)
    for key, column_values in raw["values"].items():
        db, table, column = key.split(".")
        t = cat.find_table(db, table)
        c = cat.find_column(t, column) if t is not None else None
        if c is None:
            raise _core.SchemaError(f"{path}: '{key}' is no column of the catalog")
        values.add(c, column_values)
    return values


def demo_questions() -> list[Question]:
    """36 questions over :func:`demo_catalog` with gold tables and gold SQL."""
    raw = json.loads(_demo_file("questions.json").read_text(encoding="utf-8"))
    return [
        Question(q["id"], q["db"], q["question"], tuple(q["gold_tables"]), q.get("sql", ""))
        for q in raw
    ]


def data_dir() -> Path:
    """The benchmark data directory: ``$TABRET_DATA_DIR``, default ``../shared/data``.

    Raises FileNotFoundError naming the directory when it does not exist.
    """
    given = os.environ.get("TABRET_DATA_DIR")
    path = Path(given or "../shared/data")
    if not path.is_dir():
        where = f"TABRET_DATA_DIR={given}" if given else "the default ../shared/data"
        raise FileNotFoundError(
            f"benchmark data directory not found: {path.resolve()} ({where}, relative to the "
            "current directory); set TABRET_DATA_DIR or pass --data-dir to the directory that "
            "holds spider/, bird/, ..."
        )
    return path
