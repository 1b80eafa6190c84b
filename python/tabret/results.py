"""Typed results: what a retriever returns for one question."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tabret import _core

if TYPE_CHECKING:
    from tabret._core import NameStyle, TableFormat
    from tabret.families import Families

__all__ = ["Retrieval", "ScoredColumn", "ScoredTable", "TraceStep"]


@dataclass(frozen=True)
class ScoredTable:
    id: int
    name: str  # db.table, original names
    score: float


@dataclass(frozen=True)
class ScoredColumn:
    id: int
    name: str  # db.table.column, original names
    score: float


@dataclass(frozen=True)
class TraceStep:
    """Which step put a table in the result, with which query text and score; ``value`` is
    the cell value it matched (the ``values`` stage: ``query`` reads "'France' in country"),
    empty for the other steps."""

    table: str
    step: str
    query: str
    score: float
    value: str = ""


@dataclass(frozen=True)
class Retrieval:
    """The answer for one question: tables best first (and columns when asked for)."""

    question: str
    tables: list[ScoredTable]
    columns: list[ScoredColumn] = field(default_factory=list)
    cut: int | None = None
    trace: list[TraceStep] = field(default_factory=list)

    @property
    def table_names(self) -> list[str]:
        return [t.name for t in self.tables]

    @property
    def selected(self) -> list[ScoredTable]:
        """The tables before the adaptive cut (all of them when there is no cut)."""
        return self.tables if self.cut is None else self.tables[: self.cut]

    def to_prompt(
        self,
        catalog: _core.Catalog,
        *,
        format: TableFormat = "ddl",
        samples: int = 0,
        stats: _core.ColumnStats | None = None,
        names: NameStyle = "original",
        families: Families | None = None,
        matches: bool = False,
    ) -> str:
        """The schema text of the :attr:`selected` tables for a text-to-SQL prompt, best first.

        ``format="ddl"`` writes each table's ``CREATE TABLE`` with ``NOT NULL``, ``UNIQUE``,
        ``DEFAULT``, the keys, and the descriptions as ``--`` comments; ``samples=n`` adds up to
        ``n`` values per column from ``stats`` (:func:`tabret.column_stats_from_database`). When
        the tables come from more than one database, a ``-- database: name`` line comes before
        each run of tables of one database. Tables are separated by a blank line. With
        ``families`` (:func:`tabret.families.collapse_families`; ``catalog`` is its collapsed
        catalog), a family's table comes after a ``--`` line naming its member tables
        (:meth:`~tabret.families.Families.comment`). With ``matches=True``, each cell value the
        ``values`` stage matched in a table comes before it as ``-- matched 'France' in country``
        (the stored spelling: a value of the database, so off unless asked for)."""
        if families is not None and families.catalog.num_tables != catalog.num_tables:
            raise ValueError("to_prompt: families= is not of this catalog (its collapsed one)")
        dbs = [catalog.table(t.id).database for t in self.selected]
        parts = [
            catalog.serialize_table(t.id, format=format, names=names, samples=samples, stats=stats)
            for t in self.selected
        ]
        if matches:
            parts = [
                "\n".join([*(f"-- matched {m}" for m in self._matches(t.name)), text])
                for t, text in zip(self.selected, parts, strict=True)
            ]
        if families is not None:
            comments = [families.comment(t.id) for t in self.selected]
            parts = [f"{c}\n{text}" if c else text for c, text in zip(comments, parts, strict=True)]
        if len(set(dbs)) > 1:  # name the database where a run of its tables starts
            parts = [
                f"-- database: {catalog.database(db).name}\n{text}"
                if i == 0 or dbs[i - 1] != db
                else text
                for i, (db, text) in enumerate(zip(dbs, parts, strict=True))
            ]
        return "\n\n".join(parts)

    def _matches(self, table: str) -> list[str]:
        """The trace entries of ``table`` that matched a value ("'France' in country"), each
        once."""
        found = (s.query for s in self.trace if s.table == table and s.value)
        return list(dict.fromkeys(found))

    def to_core(self, cat: _core.Catalog, source: str = "a retriever") -> _core.Retrieval:
        """This answer as native stages take it (the inverse of :meth:`from_core`), for a
        stage written in Python that feeds a native one. :class:`ValueError` naming ``source``
        where a table's or column's id is not in ``cat`` or names another one than its
        ``name``, or a trace step names a table that is not in the answer."""
        ids: dict[str, int] = {}
        for t in self.tables:
            _check_id(t.id, t.name, cat.num_tables, cat.qualified_name, "table", source)
            ids[t.name] = t.id
        for c in self.columns:
            _check_id(c.id, c.name, cat.num_columns, cat.qualified_column_name, "column", source)
        trace = []
        for s in self.trace:
            if s.table not in ids:
                raise ValueError(
                    f"{source}: a trace step ({s.step!r}) names {s.table!r}, which is not "
                    "among the tables it returned"
                )
            trace.append(_core.TraceEntry(ids[s.table], s.step, s.query, s.score, s.value))
        return _core.Retrieval(
            [_core.ScoredTable(t.id, t.score) for t in self.tables],
            [_core.ScoredColumn(c.id, c.score) for c in self.columns],
            self.cut,
            trace,
        )

    @classmethod
    def from_core(cls, question: str, r: _core.Retrieval, cat: _core.Catalog) -> Retrieval:
        return cls(
            question=question,
            tables=[ScoredTable(t.table, cat.qualified_name(t.table), t.score) for t in r.tables],
            columns=[
                ScoredColumn(c.column, cat.qualified_column_name(c.column), c.score)
                for c in r.columns
            ],
            cut=r.cut,
            trace=[
                TraceStep(cat.qualified_name(s.table), s.step, s.query, s.score, s.value)
                for s in r.trace
            ],
        )


def _check_id(
    id: int, name: str, count: int, name_of: Callable[[int], str], kind: str, source: str
) -> None:
    if not 0 <= id < count:
        raise ValueError(f"{source}: {kind} id {id} ({name!r}) is not in the catalog ({count})")
    if name_of(id) != name:
        raise ValueError(f"{source}: {kind} id {id} is {name_of(id)!r}, not {name!r}")
