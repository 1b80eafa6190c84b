"""The ``expand`` post-step (retrieval/post/expansion.hpp) from Python: a top table's
foreign-key neighbours (the hubs it references, the satellites that reference it) move up right
after it when their cosine with the question is at least ``ratio`` times its own, within k."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tabret import Catalog, Error, TableIndex
from tabret.methods import METHODS, Inputs, build_pipeline, method_names, method_table, stage

#: Each table's direction; a question is the direction of the first table it names. With the
#: question "accounts": accounts 1, customers (its hub) 0.8, branches (a hub of customers, two
#: hops away) 0.75, payments (a satellite of accounts) 0.7, products 0.9 (no key to accounts).
VECTORS = {
    "accounts": [1.0, 0.0, 0.0, 0.0],
    "customers": [0.8, 0.6, 0.0, 0.0],
    "branches": [0.75, 0.0, 0.6614, 0.0],
    "payments": [0.7, 0.0, 0.0, 0.7141],
    "products": [0.9, 0.0, 0.0, -0.4359],
}


def _embed(texts: list[str]) -> np.ndarray:
    def vector(text: str) -> list[float]:
        named = [name for name in VECTORS if name in text]
        return VECTORS[min(named, key=text.index)] if named else [0.0, 0.0, 0.0, 1.0]

    return np.array([vector(t) for t in texts], dtype=np.float32)


@pytest.fixture(scope="module")
def index() -> TableIndex:
    cat = Catalog()
    bank = cat.add_database("bank")
    tables = {name: cat.add_table(bank, name) for name in VECTORS}
    ids = {name: cat.add_column(t, "id", "integer") for name, t in tables.items()}
    for name, t in tables.items():
        cat.set_primary_key(t, [ids[name]])
    for table, ref in [
        ("accounts", "customers"),
        ("customers", "branches"),
        ("payments", "accounts"),
    ]:
        col = cat.add_column(tables[table], f"{ref}_id", "integer")
        cat.add_foreign_key(col, ids[ref])
    return TableIndex.build(cat, _embed, progress=False)


def test_neighbours_of_the_top_table_move_up_when_their_cosine_earns_it(index: TableIndex) -> None:
    plain = build_pipeline("single-hop", index).retrieve("accounts", 3)
    assert plain.table_names == ["bank.accounts", "bank.products", "bank.customers"]
    got = build_pipeline("single-hop > expand", index).retrieve("accounts", 3)
    # customers (0.8 >= 0.75 * 1) is a hub, payments (0.7) falls short; branches is two hops away.
    assert got.table_names == ["bank.accounts", "bank.customers", "bank.products"]
    step = next(s for s in got.trace if s.step == "expand")
    assert (step.table, step.query) == ("bank.customers", "bank.accounts -> bank.customers")
    assert step.score == pytest.approx(0.8, abs=1e-5)
    assert got.tables[1].score == got.tables[0].score  # the score of the table it joins


def test_ratio_and_seeds_decide_what_is_kept(index: TableIndex) -> None:
    expand = METHODS["expand"]
    first = build_pipeline("single-hop", index)

    def names(k: int, **options: object) -> list[str]:
        built = expand.after(first, index, Inputs(), replace(expand.options(), **options))
        return built.retrieve("accounts", k).table_names

    # A satellite too at a lower ratio, best cosine first; the list still holds k tables.
    assert names(3, ratio=0.7) == ["bank.accounts", "bank.customers", "bank.payments"]
    assert names(5, ratio=0.7)[:3] == ["bank.accounts", "bank.customers", "bank.payments"]
    assert names(3, ratio=0.9) == ["bank.accounts", "bank.products", "bank.customers"]
    assert names(3, seeds=0, ratio=0.0) == ["bank.accounts", "bank.products", "bank.customers"]
    with pytest.raises(Error, match=r"ratio must lie in \[0, 1\]"):
        names(3, ratio=1.5)


def test_a_pipeline_stage_only() -> None:
    """Like ``closure``, ``expand`` follows a stage (``--pipeline "… > expand"``, which
    test_native_methods.py runs from the command line); ``--method`` does not list it."""
    assert stage("expand").kind == "post"
    assert "expand" not in method_names()
    assert "| `expand` |" in method_table()
