"""Copies: one physical table registered under several databases of a catalog.

A warehouse catalog lists a shared dataset under every database that reads it: Spider 2.0-lite
registers ``bigquery-public-data.census_bureau_acs.blockgroup_2010_5yr`` (and 277 more tables)
under census_bureau_acs_1, covid19_usa, fec and sdoh alike — 2,886 of its 8,255 tables are in
1,059 such groups. Over the union of databases the copies take several of the top k slots, and
a benchmark that names the gold table by database counts another database's copy as a miss,
though the SQL would be the same.

Rules (:func:`find_copies`), all of them must hold:

- equal table names, compared case-insensitively, that are **qualified** (contain a ``.``,
  such as ``project.dataset.table``): the name says which physical table it is. Bare names
  (``users`` in two SQLite files) are different tables and never copies;
- different databases (a database's table names are unique anyway);
- identical column names, in the same order (case-insensitively).

Two ways to use them:

- :func:`copies_as_gold` (``tabret eval --score-copies``): retrieval unchanged; a gold table's
  copies count as it when scored (each becomes a family item, as Spider 2.0-lite's wildcards are).
- :func:`collapse_copies` (``--copies collapse``): each group as one table for retrieval, in its
  first member's database, through :func:`tabret.families.collapse_families`; the prompt's
  comment names the databases. :func:`tabret.families.collapse_benchmark` maps the gold.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from tabret import _core
from tabret.families import Families, Family, collapse_families

if TYPE_CHECKING:
    from tabret.benchmarks import Benchmark, BenchmarkQuestion

__all__ = ["collapse_copies", "copies_as_gold", "find_copies"]


def find_copies(catalog: _core.Catalog) -> list[Family]:
    """The copy groups of ``catalog`` (see the module's rules), each named by its first member,
    members in catalog order, groups in the order of their first members."""
    groups: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    columns = catalog.columns
    for t_id, table in enumerate(catalog.tables):
        if "." not in table.name:
            continue
        names = tuple(columns[c].name.casefold() for c in table.columns)
        groups.setdefault((table.name.casefold(), names), []).append(t_id)
    found = sorted((ids for ids in groups.values() if len(ids) > 1), key=lambda ids: ids[0])
    return [Family(catalog.table(ids[0]).name, tuple(ids)) for ids in found]


def collapse_copies(catalog: _core.Catalog) -> Families:
    """``catalog`` with each copy group (:func:`find_copies`) as one table."""
    collapsed = collapse_families(catalog, families=find_copies(catalog))
    return replace(collapsed, groups=("copy group", "copy groups"))


def _with_copies(q: BenchmarkQuestion, copies_of: dict[int, tuple[int, ...]]) -> BenchmarkQuestion:
    """``q`` with each gold table that has copies as a family item (the gold table first), and
    each wildcard family grown by its members' copies. A gold table whose copy is also gold
    stays strict (the question names both)."""
    gold = set(q.gold_tables)
    wildcards = {f[0]: f for f in q.families}
    families: list[tuple[int, ...]] = []
    for t in q.gold_tables:
        members = wildcards.get(t, (t,))
        grown = list(members)
        for m in members:
            grown += [c for c in copies_of.get(m, ()) if c != m and c not in grown]
        if any(c in gold and c != t for c in grown):
            grown = list(members)
        if len(grown) > 1:
            families.append(tuple(grown))
    return replace(q, families=tuple(families))


def copies_as_gold(bench: Benchmark) -> Benchmark:
    """``bench`` scored so that a gold table's copies in other databases count as it, its
    source saying for how many questions that matters. Raises ``ValueError`` for a
    benchmark searched per database (a question's own database has no copies)."""
    if bench.per_database:
        raise ValueError(
            f"benchmark '{bench.name}' searches each question's own database, which holds no "
            "copies of its tables: copies matter over a union of databases"
        )
    copies_of = {t: f.members for f in find_copies(bench.catalog) for t in f.members}
    questions = [_with_copies(q, copies_of) for q in bench.questions]
    touched = sum(1 for q, new in zip(bench.questions, questions, strict=True) if q != new)
    source = (
        f"{bench.source}; a gold table's copies in other databases count as it "
        f"({touched} of {len(questions)} questions read a table with copies)"
    )
    return replace(bench, questions=questions, source=source)
