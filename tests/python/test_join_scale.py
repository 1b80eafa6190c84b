"""Join graphs of one very large database: blocked scoring, bounded edges, Ctrl-C."""

from __future__ import annotations

from interrupting import assert_stops_on_sigint
from tabret import Catalog, HashingEmbedder
from tabret.index import TableIndex
from tabret.join import JoinGraph

_LONG_BUILD = """
import sys
from tabret import Catalog, HashingEmbedder
from tabret.index import TableIndex
from tabret.join import JoinGraph

tables = int(sys.argv[1])
ddl = "".join(
    f"CREATE TABLE t{i} (id int, name_{i % 97} text, value_{i % 89} int);\\n"
    for i in range(tables)
)
cat = Catalog()
cat.add_ddl_text(ddl, "big")
index = TableIndex.build(cat, HashingEmbedder(dim=4), columns=False, progress=False)
print("started", flush=True)
try:
    # Every pair scored: minutes of native work, far past the SIGINT.
    JoinGraph.build(index, exhaustive_max_tables=10**9)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(42)
print("finished", flush=True)
"""


def _catalog(tables: int) -> Catalog:
    cat = Catalog()
    cat.add_ddl_text(
        "".join(
            f"CREATE TABLE t{i} (id int PRIMARY KEY, t{(i * 7 + 1) % tables}_id int, "
            f"name_{i % 13} text);\n"
            for i in range(tables)
        ),
        "big",
    )
    return cat


def test_a_large_database_is_blocked_with_bounded_edges() -> None:
    tables, cap = 3000, 8
    index = TableIndex.build(
        _catalog(tables), HashingEmbedder(dim=16), columns=False, progress=False
    )
    blocked = JoinGraph.build(index, max_edges_per_table=cap)
    assert 0 < len(blocked) <= cap * tables
    for e in blocked.edges:
        assert e.a < e.b
        assert 0.0 < e.weight <= 1.0


def test_a_small_database_is_unchanged_by_the_threshold() -> None:
    index = TableIndex.build(_catalog(40), HashingEmbedder(dim=16), columns=False, progress=False)
    default = JoinGraph.build(index)
    exhaustive = JoinGraph.build(index, exhaustive_max_tables=10**6)
    key = [(e.a, e.b, e.weight, e.from_column, e.to_column, e.declared) for e in default.edges]
    assert key == [
        (e.a, e.b, e.weight, e.from_column, e.to_column, e.declared) for e in exhaustive.edges
    ]
    blocked = JoinGraph.build(index, exhaustive_max_tables=10, max_edges_per_table=4)
    for e in blocked.edges:
        assert exhaustive.weight(e.a, e.b) == e.weight


def test_building_a_join_graph_stops_on_ctrl_c() -> None:
    """SIGINT must end a long JoinGraph.build with KeyboardInterrupt (before: the quadratic
    scoring never looked at signals and ran to its end)."""
    assert_stops_on_sigint(_LONG_BUILD, "20000", what="JoinGraph.build")
