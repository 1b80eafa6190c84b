"""Issue 51 item 2: an index updated after a schema change (``TableIndex.update``, ``tabret
index --update``) embeds only the new and changed texts and equals a full rebuild."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tabret
from tabret import _core
from tabret.catalog import Catalog
from tabret.cli import main
from tabret.embedders import HashingEmbedder
from tabret.index import DenseRetriever, TableIndex, reusing

HASHING = HashingEmbedder(dim=256)

SCHEMA = """
CREATE TABLE cust (id INTEGER PRIMARY KEY, nm TEXT, ctry TEXT);
CREATE TABLE shp (id INTEGER PRIMARY KEY, cust_id INTEGER REFERENCES cust(id), carrier TEXT);
CREATE TABLE prd (id INTEGER PRIMARY KEY, title TEXT, price REAL);
CREATE TABLE staff (id INTEGER PRIMARY KEY, name TEXT, hired TEXT);
"""
#: The change: a table added, one dropped, a column added to one (its text changes).
CHANGE = """
DROP TABLE staff;
CREATE TABLE invoice (id INTEGER PRIMARY KEY, cust_id INTEGER REFERENCES cust(id), total REAL);
ALTER TABLE prd ADD COLUMN stock INTEGER;
"""
QUESTIONS = ["invoice totals per customer", "price of each product in stock", "DHL shipments"]


class _Counting:
    """The hashing embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        self.name, self.texts = HASHING.name, 0

    def embed(self, texts: list[str]) -> Any:
        self.texts += len(texts)
        return HASHING.embed(texts)


def _database(path: Path, *scripts: str) -> Path:
    con = sqlite3.connect(path)
    for script in scripts:
        con.executescript(script)
    con.commit()
    con.close()
    return path


def _same_index(a: TableIndex, b: TableIndex) -> None:
    assert a.catalog.to_json() == b.catalog.to_json()
    assert a.core.table_texts() == b.core.table_texts()
    assert a.core.column_texts() == b.core.column_texts()
    np.testing.assert_allclose(a.core.table_vectors, b.core.table_vectors, atol=1e-6)
    np.testing.assert_allclose(a.core.column_vectors, b.core.column_vectors, atol=1e-6)
    for x, y in zip(
        DenseRetriever(a).retrieve(QUESTIONS, 4, k_columns=3),
        DenseRetriever(b).retrieve(QUESTIONS, 4, k_columns=3),
        strict=True,
    ):
        assert x.table_names == y.table_names
        assert [c.name for c in x.columns] == [c.name for c in y.columns]


def test_an_update_embeds_only_what_changed_and_equals_a_full_build(tmp_path: Path) -> None:
    db = _database(tmp_path / "shop.db", SCHEMA)
    before = TableIndex.build(Catalog.from_sqlite(db), HASHING, progress=False)
    _database(db, CHANGE)
    changed = Catalog.from_sqlite(db)
    counting = _Counting()
    updated = TableIndex.build(changed, reusing(counting, before), progress=False)
    # the new table and its 3 columns, and prd (its text names the new column) and that column;
    # cust's text changes too (the "related" format names the tables referencing it)
    assert counting.texts == 3 + 4
    _same_index(updated, TableIndex.build(changed, HASHING, progress=False))
    _same_index(before.update(changed, progress=False), updated)


def test_an_update_needs_the_same_embedder() -> None:
    index = TableIndex.build(tabret.demo_catalog(), HASHING, progress=False)
    with pytest.raises(ValueError, match=r"reusing: TableIndex's vectors are .*, not 'hashing"):
        reusing(HashingEmbedder(dim=128), index)


def test_cached_embedder_seeds_are_checked() -> None:
    memo = _core.CachedEmbedder(HASHING, HASHING.name)
    with pytest.raises(tabret.Error, match="2 vectors for 1 texts"):
        memo.seed(["a"], np.zeros((2, 256), np.float32))
    memo.seed(["a"], np.ones((1, 256), np.float32))
    with pytest.raises(tabret.Error, match="vectors of 8 dimensions, the cache holds 256"):
        memo.seed(["b"], np.zeros((1, 8), np.float32))
    assert (memo(["a"]) == 1).all()
    assert memo.embedded == 0


def test_cli_update(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _database(tmp_path / "shop.db", SCHEMA)
    idx, full = tmp_path / "idx", tmp_path / "full"
    argv = ["--embedder", "hashing", "--quiet", "--join-graph", "keys"]
    assert main(["index", "sqlite", str(db), str(idx), *argv]) == 0
    _database(db, CHANGE)
    capsys.readouterr()
    assert main(["index", "sqlite", str(db), str(idx), "--update", *argv]) == 0
    out = capsys.readouterr().out
    # the index's 3 tables and 4 columns (as above), the join graph's texts of the 4 new
    # columns, the generated questions of the 2 tables whose first columns changed
    assert "update: 13 new or changed texts embedded" in out
    assert main(["index", "sqlite", str(db), str(full), *argv]) == 0
    _same_index(TableIndex.load(idx), TableIndex.load(full))
    refused = {
        "--text 'related', not 'signature'": [*argv, "--text", "signature"],
        "--embedder 'hashing": ["--quiet"],  # the default model: another embedder
    }
    for says, options in refused.items():
        capsys.readouterr()
        assert main(["index", "sqlite", str(db), str(idx), "--update", *options]) != 0
        assert f"--update: {idx} was built with {says}" in capsys.readouterr().err
    assert main(["index", "sqlite", str(db), str(tmp_path / "none"), "--update", *argv]) != 0
    assert "none" in capsys.readouterr().err
