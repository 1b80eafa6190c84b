"""Table families: date- or number-sharded tables collapsed into one logical table.

Warehouses shard a table by date or number: Spider 2.0-lite has ``ga_sessions_20160801`` …
``ga_sessions_20170801`` (366 tables, 334 of them with the same columns), ``events_20201101`` …,
``storms_1950`` …, ``gsod1929`` …. Such near-duplicates crowd the top k of a catalog-wide
ranking. :func:`collapse_families` replaces each family by one table for retrieval;
:class:`Families` maps ids both ways, and :meth:`Families.comment` (or
``Retrieval.to_prompt(…, families=…)``) names the members in the schema text a prompt gets.

Rules (:func:`find_families`), all of them must hold:

- same database;
- equal names after replacing the trailing digit run, with one optional ``_`` or ``-`` before
  it, by ``*`` (``ga_sessions_20160801`` and ``ga_sessions_20170801`` -> ``ga_sessions_*``,
  ``gsod1929`` -> ``gsod*``, ``1990_q1`` -> ``1990_q*``; dates, years, months, numbers and
  versions such as ``_r3`` alike); only the last digit run counts (``1990_q1`` and
  ``1991_q1`` are in different families) and something must come before it; names are
  compared case-insensitively, as the catalog compares them;
- identical column names, in the same order (case-insensitively); types may differ, the
  family shows its first member's;
- at least ``min_members`` tables (default 2).

The family's table is named by the pattern (``ga_sessions_*``); a pattern that two families
of one database share (same name pattern, different columns: 32 of the ``ga_sessions_*``
shards have a ``clientId`` column more), or that a table already has, gets ``#2``, ``#3`` …
appended (``ga_sessions_*#2``). Its natural name is its first member's without the digit run
(``ga sessions``), its description says how many tables it stands for, first … last, followed
by the first member description there is. Its columns are its first member's (names, types,
natural names, constraints; per column the first non-empty description among the members),
with the first member's primary key; every foreign key of a member is mapped onto the
collapsed tables (duplicates and ones from a column to itself dropped). Every other table is
copied as it is, with its keys. Collapsed ids follow the original order of each family's first
member.

``collapse_families`` also takes groups that span databases (:func:`tabret.copies.find_copies`:
one table registered under several databases); such a group keeps its first member's name,
natural name and description, lives in its first member's database, and its comment names the
databases.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tabret import _core
from tabret.catalog import Catalog

if TYPE_CHECKING:
    from tabret.benchmarks import Benchmark, BenchmarkQuestion

__all__ = [
    "Families",
    "Family",
    "collapse_benchmark",
    "collapse_families",
    "find_families",
    "name_pattern",
]

_SUFFIX = re.compile(r"[_-]?[0-9]+$")


def name_pattern(name: str) -> str | None:
    """``name`` with its trailing digit run (and one ``_``/``-`` before it) as ``*``, or None
    when it has none or nothing comes before it: ``ga_sessions_20160801`` -> ``ga_sessions_*``.
    """
    m = _SUFFIX.search(name)
    if m is None:
        return None
    digits = m.group().lstrip("_-")
    stem = name[: m.end() - len(digits)]
    return f"{stem}*" if name[: m.start()] else None


@dataclass(frozen=True)
class Family:
    """Tables of one database that :func:`find_families` groups: ``name``, the collapsed
    table's name (the pattern, e.g. ``ga_sessions_*``), and the ``members``' original ids in
    catalog order."""

    name: str
    members: tuple[int, ...]


def find_families(catalog: _core.Catalog, *, min_members: int = 2) -> list[Family]:
    """The families of ``catalog`` (see the module's rules), in the order of their first
    members."""
    if min_members < 2:
        raise ValueError(f"min_members must be at least 2, not {min_members}")
    groups: dict[tuple[int, str, tuple[str, ...]], list[int]] = {}
    patterns: dict[tuple[int, str, tuple[str, ...]], str] = {}
    columns = catalog.columns
    for t_id, table in enumerate(catalog.tables):
        pattern = name_pattern(table.name)
        if pattern is None:
            continue
        names = tuple(columns[c].name.casefold() for c in table.columns)
        key = (table.database, pattern.casefold(), names)
        groups.setdefault(key, []).append(t_id)
        patterns.setdefault(key, pattern)
    found = sorted(
        ((key, ids) for key, ids in groups.items() if len(ids) >= min_members),
        key=lambda item: item[1][0],
    )
    # a family's name must not be taken in its database (by a table or another family)
    taken: dict[int, set[str]] = {}
    out = []
    for key, ids in found:
        db = key[0]
        if db not in taken:
            taken[db] = {catalog.table(t).name.casefold() for t in catalog.database(db).tables}
        name = base = patterns[key]
        n = 1
        while name.casefold() in taken[db]:
            n += 1
            name = f"{base}#{n}"
        taken[db].add(name.casefold())
        out.append(Family(name, tuple(ids)))
    return out


def _natural_name(member: _core.Table) -> str:
    """The member's natural name without its digit run: its last word when that is the run
    (``ga sessions 20160801`` -> ``ga sessions``), else the run at the end of its last word
    (``1990 q1`` -> ``1990 q``); unchanged when it does not end with the run."""
    m = _SUFFIX.search(member.name)
    digits = m.group().lstrip("_-") if m else ""
    words = member.nl_name.split()
    if not digits or not words or not words[-1].endswith(digits):
        return member.nl_name
    last = words[-1][: -len(digits)].rstrip("_-")
    return " ".join(words[:-1] + ([last] if last else []))


def _spans_databases(cat: _core.Catalog, members: Sequence[int]) -> bool:
    """Whether ``members`` lie in several databases: copies of one table
    (:mod:`tabret.copies`), not shards."""
    return len({cat.table(m).database for m in members}) > 1


def _family_description(cat: _core.Catalog, members: Sequence[int]) -> str:
    first, last = cat.table(members[0]).name, cat.table(members[-1]).name
    text = f"{len(members)} tables with these columns, {first} … {last}"
    described = next((cat.table(t).description for t in members if cat.table(t).description), "")
    return f"{text}. {described}" if described else text


@dataclass(frozen=True)
class Families:
    """A catalog with its table families collapsed (:func:`collapse_families`).

    ``catalog`` is the collapsed catalog, ``original`` the one it came from; ``members[t]``
    the original table ids of collapsed table ``t`` (one for a table in no family),
    ``family_of[t]`` the collapsed id of original table ``t``; ``column_of[c]`` the collapsed
    column of original column ``c`` (same name), ``column_members[c]`` the original columns of
    collapsed column ``c`` (one per member, member order); ``groups`` what one group and
    several are called in :meth:`summary` (copy groups from :func:`tabret.collapse_copies`)."""

    original: Catalog
    catalog: Catalog
    members: list[list[int]]
    family_of: list[int]
    column_of: list[int]
    column_members: list[list[int]]
    groups: tuple[str, str] = ("family", "families")

    @property
    def num_families(self) -> int:
        """How many collapsed tables stand for more than one table."""
        return sum(1 for m in self.members if len(m) > 1)

    def is_family(self, table: int) -> bool:
        """Whether collapsed table ``table`` stands for more than one table."""
        return len(self.members[table]) > 1

    def expand(self, table_ids: Iterable[int]) -> list[int]:
        """Collapsed table ids -> the original ids of their members, in the order given
        (members in catalog order)."""
        return [t for c in table_ids for t in self.members[c]]

    def collapse_ids(self, table_ids: Iterable[int]) -> list[int]:
        """Original table ids -> collapsed ids, first-seen order, each once (several shards
        of one family are one table)."""
        return list(dict.fromkeys(self.family_of[t] for t in table_ids))

    def expand_columns(self, column_ids: Iterable[int]) -> list[int]:
        """Collapsed column ids -> the original columns (one per member), order kept."""
        return [c for col in column_ids for c in self.column_members[col]]

    def collapse_column_ids(self, column_ids: Iterable[int]) -> list[int]:
        """Original column ids -> collapsed ids, first-seen order, each once."""
        return list(dict.fromkeys(self.column_of[c] for c in column_ids))

    def comment(self, table: int, *, max_listed: int = 6) -> str:
        """A ``--`` line naming the members of collapsed table ``table`` for a prompt ("" for
        a table in no family): all of them when at most ``max_listed``, else the first
        ``max_listed - 1``, "…" and the last, with the count."""
        members = self.members[table]
        if len(members) < 2:
            return ""
        if _spans_databases(self.original, members):
            dbs = [self.original.database(self.original.table(t).database).name for t in members]
            return (
                f"-- {self.catalog.table(table).name} is one table registered in "
                f"{len(dbs)} databases: {', '.join(dbs)}"
            )
        names = [self.original.table(t).name for t in members]
        if len(names) > max_listed:
            names = [*names[: max(max_listed - 1, 1)], "…", names[-1]]
        return (
            f"-- {self.catalog.table(table).name} stands for {len(members)} tables with these "
            f"columns (query them by name): {', '.join(names)}"
        )

    def summary(self) -> str:
        """``8,255 tables -> 5,506 (265 families of 3,014 tables)``."""
        in_families = sum(len(m) for m in self.members if len(m) > 1)
        return (
            f"{self.original.num_tables:,} tables -> {self.catalog.num_tables:,} "
            f"({self.num_families:,} {self.groups[self.num_families != 1]} of "
            f"{in_families:,} tables)"
        )


def collapse_families(
    catalog: _core.Catalog,
    *,
    min_members: int = 2,
    families: Sequence[Family] | None = None,
) -> Families:
    """``catalog`` with each family (``families``, default :func:`find_families`) as one
    table; see the module's rules."""
    found = find_families(catalog, min_members=min_members) if families is None else families
    original = catalog if isinstance(catalog, Catalog) else Catalog(catalog)
    family_by_first = {f.members[0]: f for f in found}
    in_family = {t for f in found for t in f.members}
    cat = Catalog()
    for db in original.databases:
        cat.add_database(db.name, db.description)
    columns = original.columns
    tables = original.tables
    members: list[list[int]] = []
    family_of = [-1] * original.num_tables
    column_of = [-1] * original.num_columns
    column_members: list[list[int]] = []
    for t_id, t in enumerate(tables):
        family = family_by_first.get(t_id)
        if family is None and t_id in in_family:
            continue  # a later member: its family's table was added with the first
        ids = list(family.members) if family else [t_id]
        if family is None or _spans_databases(original, ids):  # a table, or copies of one
            name = t.name if family is None else family.name
            new = cat.add_table(t.database, name, t.nl_name, t.description)
        else:
            description = _family_description(original, ids)
            new = cat.add_table(t.database, family.name, _natural_name(t), description)
        members.append(ids)
        for m in ids:
            family_of[m] = new
        member_columns = [tables[m].columns for m in ids]
        for i, c_id in enumerate(t.columns):
            c = columns[c_id]
            originals = [cols[i] for cols in member_columns]
            description = next(
                (columns[o].description for o in originals if columns[o].description), ""
            )
            new_col = cat.add_column(new, c.name, c.type, c.nl_name, description)
            if c.not_null or c.unique or c.default:
                cat.set_constraints(
                    new_col, not_null=c.not_null, unique=c.unique, default=c.default
                )
            for o in originals:
                column_of[o] = new_col
            column_members.append(originals)
        if t.primary_key:
            cat.set_primary_key(new, [column_of[c] for c in t.primary_key])
    seen: set[tuple[int, int]] = set()
    for fk in original.foreign_keys:
        pair = (column_of[fk.from_column], column_of[fk.to_column])
        touches = in_family.intersection(
            (columns[fk.from_column].table, columns[fk.to_column].table)
        )
        if not touches:
            cat.add_foreign_key(*pair)  # as it is, even a duplicate the source has
        elif pair[0] != pair[1] and pair not in seen:
            seen.add(pair)
            cat.add_foreign_key(*pair)
    return Families(original, cat, members, family_of, column_of, column_members)


def _collapse_question(q: BenchmarkQuestion, fam: Families) -> BenchmarkQuestion:
    gold = fam.collapse_ids(q.gold_tables)
    families: list[tuple[int, ...]] = []
    for f in q.families:
        ids = tuple(fam.collapse_ids(f))  # its first is family_of[f[0]], in gold already
        if len(ids) > 1 and all(ids[0] != g[0] for g in families):
            families.append(ids)
    return replace(
        q,
        gold_tables=tuple(gold),
        gold_columns=tuple(fam.collapse_column_ids(q.gold_columns)),
        families=tuple(families),
    )


def collapse_benchmark(
    bench: Benchmark, families: Families | None = None, *, what: str = "table families"
) -> Benchmark:
    """``bench`` over the collapsed catalog of ``families`` (default: ``collapse_families`` of
    its catalog), its source saying so.

    Each gold table becomes its family's table; a wildcard gold item
    (``BenchmarkQuestion.families``, e.g. ``ga_sessions_2017*``) becomes the collapsed tables of
    its members: one gold table when they all fall in one family (the usual case), else a
    family item over those tables. Gold items that fall together are merged: a question that
    reads 16 ``storms_*`` shards by name has ONE gold table, ``storms_*``, whose prompt text
    names all the shards (:meth:`Families.comment`). Gold columns map by name to the family
    table's columns, likewise merged. ``what`` names the groups in the source ("copies" for
    :func:`tabret.copies.collapse_copies`)."""
    fam = families or collapse_families(bench.catalog)
    if fam.original.num_tables != bench.catalog.num_tables:
        raise ValueError("collapse_benchmark: the families are of another catalog")
    questions = [_collapse_question(q, fam) for q in bench.questions]
    source = f"{bench.source}; {what} collapsed: {fam.summary()}"
    return replace(bench, catalog=fam.catalog, questions=questions, source=source)
