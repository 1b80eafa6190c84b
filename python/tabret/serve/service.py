"""What ``tabret serve`` answers, whatever the transport: an index directory loaded once, swapped
for the new artifact when the directory is saved again, and the four operations over it.

:class:`IndexService` loads the directory the way ``tabret query`` does
(:func:`tabret.cli.query.load_directory`) and builds each pipeline with ``tabret query``'s
:func:`~tabret.cli.query.make_retriever`, once per loaded index. Its methods are thread-safe:
each call reads one :class:`Snapshot`, so an answer comes from the old index or the new one,
never from both."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tabret.cli.query import (
    DEFAULT_K,
    MethodChoice,
    SavedParts,
    fewer_note,
    load_directory,
    make_retriever,
    resolve,
)
from tabret.index import check_questions
from tabret.methods import score_meaning

if TYPE_CHECKING:
    from tabret import _core
    from tabret.index import BaseRetriever, TableIndex
    from tabret.results import Retrieval

__all__ = [
    "MAX_K",
    "MAX_QUESTION_CHARS",
    "ColumnInfo",
    "DatabaseInfo",
    "FoundTable",
    "FoundTables",
    "IndexService",
    "IndexStatus",
    "JoinPath",
    "JoinStep",
    "Reason",
    "Snapshot",
    "TableDescription",
]

log = logging.getLogger("tabret.serve")

#: The most tables one ``find_tables`` call may ask for.
MAX_K = 1000
#: The longest question ``find_tables`` takes, in characters.
MAX_QUESTION_CHARS = 10_000
#: The most tables one ``describe_tables`` call may name.
MAX_DESCRIBE = 100
#: Pipelines kept built per loaded index (the least recently used one goes first).
RETRIEVER_CACHE = 16


@dataclass(frozen=True)
class Reason:
    """One step of the trace that put a table in the answer: which stage, with which query text
    (the question, a sub-query, a database) and which score."""

    step: str
    query: str
    score: float


@dataclass(frozen=True)
class FoundTable:
    name: str  # db.table, as describe_tables and join_path take it
    score: float
    bridge: bool  # added by the join closure on a path between two tables found
    why: list[Reason]


@dataclass(frozen=True)
class FoundTables:
    """The answer of ``find_tables``: the tables best first, what their scores are, and the
    schema text of those tables for a text-to-SQL prompt (``CREATE TABLE`` statements)."""

    question: str
    pipeline: str
    score: str
    tables: list[FoundTable]
    prompt: str
    note: str | None
    generation: int


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    type: str
    description: str
    primary_key: bool
    not_null: bool
    unique: bool
    default: str
    references: str | None  # db.table.column of the foreign key this column is, if any


@dataclass(frozen=True)
class TableDescription:
    name: str
    description: str
    columns: list[ColumnInfo]
    primary_key: list[str]
    referenced_by: list[str]  # db.table.column of the foreign keys that point into this table
    ddl: str


@dataclass(frozen=True)
class JoinStep:
    from_table: str
    to_table: str
    from_column: str  # db.table.column
    to_column: str
    weight: float  # ω: 1 for a declared foreign key, less for an inferred join
    declared: bool


@dataclass(frozen=True)
class JoinPath:
    from_table: str
    to_table: str
    steps: list[JoinStep]
    strength: float  # the product of the steps' ω


@dataclass(frozen=True)
class DatabaseInfo:
    name: str
    description: str
    tables: int


@dataclass(frozen=True)
class IndexStatus:
    path: str
    generation: int  # 1 for the index loaded at start, one more for each reload
    loaded_at: float  # Unix time
    databases: int
    tables: int
    columns: int
    embedder: str
    join_graph: bool
    generated_questions: bool
    default_pipeline: str


Stamp = tuple[int, int, int, int]


def directory_stamp(path: str) -> Stamp | None:
    """What changes when a save swaps the directory in (its inode and its manifest's): two
    ``stat`` calls; ``None`` while it cannot be read."""
    try:
        d = os.stat(path)
        m = os.stat(os.path.join(path, "manifest.json"))
    except OSError:
        return None
    return (d.st_ino, m.st_ino, m.st_mtime_ns, m.st_size)


@dataclass
class Snapshot:
    """One loaded index directory, with the retrievers built over it so far."""

    index: TableIndex
    saved: SavedParts
    generation: int
    stamp: Stamp | None
    #: What find_tables runs when a call names no pipeline: the server's default, resolved for
    #: this index (its tuned pipeline, or the default for what it holds).
    default: MethodChoice = field(default_factory=MethodChoice)
    loaded_at: float = field(default_factory=time.time)
    _retrievers: OrderedDict[MethodChoice, BaseRetriever] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _names: dict[str, int] | None = None

    def retriever(self, choice: MethodChoice) -> BaseRetriever:
        """The retriever ``choice`` names over this index, built on first use (thread-safe)."""
        with self._lock:
            if choice in self._retrievers:
                self._retrievers.move_to_end(choice)
                return self._retrievers[choice]
        built = make_retriever(choice, self.index, self.saved, None)
        with self._lock:
            self._retrievers[choice] = built
            while len(self._retrievers) > RETRIEVER_CACHE:
                self._retrievers.popitem(last=False)
        return built

    def table_id(self, name: str) -> int:
        """The table ``name`` names: ``db.table`` as answers spell it, or a table name only one
        database has; :class:`ValueError` otherwise."""
        if self._names is None:
            cat = self.index.catalog
            self._names = {cat.qualified_name(t): t for t in range(cat.num_tables)}
        found = self._names.get(name)
        if found is not None:
            return found
        matches = [t for qualified, t in self._names.items() if qualified.endswith(f".{name}")]
        if len(matches) == 1:
            return matches[0]
        if matches:
            names = ", ".join(sorted(self.index.catalog.qualified_name(t) for t in matches)[:10])
            raise ValueError(f"table '{name}' is in more than one database: say which ({names})")
        raise ValueError(f"no table '{name}' in the index (name it db.table, as find_tables does)")


class IndexService:
    """The operations of ``tabret serve`` over the index saved in ``path``, loaded now (a missing
    or invalid directory raises here, naming it). ``default``: the pipeline ``find_tables`` runs
    when none is asked for (``tabret query``'s default). :meth:`watch` swaps in the directory's
    new artifact when it is saved again. Thread-safe."""

    def __init__(
        self, path: str, *, default: MethodChoice | None = None, embedder: str | None = None
    ) -> None:
        self.path = path
        self.default = default or MethodChoice()
        self._embedder = embedder
        self._snapshot = self._load(generation=1)
        self._failed: Stamp | None = None
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self._reload_lock = threading.Lock()

    def _load(self, generation: int) -> Snapshot:
        stamp = directory_stamp(self.path)
        index, saved = load_directory(self.path, self._embedder, quiet=True)
        snapshot = Snapshot(index, saved, generation, stamp, resolve(self.default, index, saved))
        snapshot.retriever(snapshot.default)  # an invalid default fails here, before serving
        return snapshot

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def reload_if_changed(self) -> bool:
        """Loads the directory again if a save changed it since the last load, and swaps the
        new index in; a load that fails keeps the old one (logged, not retried until the
        directory changes again). Whether it swapped."""
        with self._reload_lock:
            stamp = directory_stamp(self.path)
            if stamp is None or stamp in (self._snapshot.stamp, self._failed):
                return False
            try:
                fresh = self._load(self._snapshot.generation + 1)
            except Exception as err:  # a bad save must not stop the server: keep the old one
                self._failed = stamp
                log.warning("kept index generation %d: %s", self._snapshot.generation, err)
                return False
            self._snapshot = fresh
            log.info("loaded index generation %d from %s", fresh.generation, self.path)
            return True

    def watch(self, interval: float = 1.0) -> None:
        """Checks the directory every ``interval`` seconds in a daemon thread (two ``stat``
        calls) and reloads it when it changed; :meth:`close` stops it."""
        if self._watcher is not None:
            return

        def loop() -> None:
            while not self._stop.wait(interval):
                self.reload_if_changed()

        self._watcher = threading.Thread(target=loop, name="tabret-serve-reload", daemon=True)
        self._watcher.start()

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join()
            self._watcher = None

    def find_tables(
        self, question: str, k: int = DEFAULT_K, pipeline: str | None = None
    ) -> FoundTables:
        """The ``k`` tables ``question`` needs, best first, by ``pipeline`` (a ``tabret query
        --pipeline`` spec; default: the server's), each with the trace steps that chose it, and
        their schema text for a prompt."""
        _check_question(question)
        if not 1 <= k <= MAX_K:
            raise ValueError(f"k must be between 1 and {MAX_K}, not {k}")
        snap = self._snapshot
        choice = (
            snap.default
            if pipeline is None
            else MethodChoice(pipeline=pipeline.strip(), reranker=self.default.reranker)
        )
        (result,) = snap.retriever(choice).retrieve([question], k)
        return _found(result, choice, k, snap)

    def describe_tables(self, tables: list[str]) -> list[TableDescription]:
        """The columns, keys and ``CREATE TABLE`` text of each named table."""
        if not tables:
            raise ValueError("name at least one table")
        if len(tables) > MAX_DESCRIBE:
            raise ValueError(f"at most {MAX_DESCRIBE} tables a call, not {len(tables)}")
        snap = self._snapshot
        return [_describe(snap.index.catalog, snap.table_id(name)) for name in tables]

    def join_path(self, from_table: str, to_table: str) -> JoinPath:
        """The strongest join path between two tables in the index's join graph."""
        from tabret.join import JoinGraph

        snap = self._snapshot
        a, b = snap.table_id(from_table), snap.table_id(to_table)
        if snap.saved.graph is None:
            raise ValueError(
                f"{self.path} has no join graph: build it with `tabret index --join-graph`"
            )
        graph = JoinGraph(snap.saved.graph, snap.index)
        cat = snap.index.catalog
        steps = [_step(cat, e, t) for e, t in _oriented(graph.path(a, b), a)]
        strength = 1.0
        for s in steps:
            strength *= s.weight
        return JoinPath(cat.qualified_name(a), cat.qualified_name(b), steps, strength)

    def list_databases(self) -> list[DatabaseInfo]:
        cat = self._snapshot.index.catalog
        return [
            DatabaseInfo(db.name, db.description, len(db.tables))
            for db in (cat.database(i) for i in range(cat.num_databases))
        ]

    def status(self) -> IndexStatus:
        snap = self._snapshot
        cat = snap.index.catalog
        return IndexStatus(
            path=self.path,
            generation=snap.generation,
            loaded_at=snap.loaded_at,
            databases=cat.num_databases,
            tables=cat.num_tables,
            columns=cat.num_columns,
            embedder=snap.index.embedder_name,
            join_graph=snap.saved.graph is not None,
            generated_questions=snap.saved.questions is not None,
            default_pipeline=snap.default.label,
        )


def _check_question(question: str) -> None:
    check_questions([question])
    if len(question) > MAX_QUESTION_CHARS:
        raise ValueError(
            f"the question is {len(question)} characters long; at most {MAX_QUESTION_CHARS}"
        )


def _found(result: Retrieval, choice: MethodChoice, k: int, snap: Snapshot) -> FoundTables:
    cat = snap.index.catalog
    why: dict[str, list[Reason]] = {}
    for s in result.trace:
        why.setdefault(s.table, []).append(Reason(s.step, s.query, s.score))
    tables = [
        FoundTable(
            t.name,
            t.score,
            any(r.step == "bridge" for r in why.get(t.name, [])),
            why.get(t.name, []),
        )
        for t in result.selected
    ]
    return FoundTables(
        question=result.question,
        pipeline=choice.label,
        score=score_meaning(choice.spec),
        tables=tables,
        prompt=result.to_prompt(cat),
        note=fewer_note(choice, k, [result], cat.num_tables),
        generation=snap.generation,
    )


def _describe(cat: _core.Catalog, table: int) -> TableDescription:
    t = cat.table(table)
    keys = cat.foreign_keys
    references = {fk.from_column: cat.qualified_column_name(fk.to_column) for fk in keys}
    columns, primary = set(t.columns), set(t.primary_key)
    return TableDescription(
        name=cat.qualified_name(table),
        description=t.description,
        columns=[
            ColumnInfo(
                name=c.name,
                type=c.type,
                description=c.description,
                primary_key=col in primary,
                not_null=c.not_null,
                unique=c.unique,
                default=c.default,
                references=references.get(col),
            )
            for col, c in ((col, cat.column(col)) for col in t.columns)
        ],
        primary_key=[cat.column(c).name for c in t.primary_key],
        referenced_by=[
            cat.qualified_column_name(fk.from_column) for fk in keys if fk.to_column in columns
        ],
        ddl=cat.serialize_table(table, format="ddl", names="original"),
    )


def _oriented(edges: list[_core.JoinEdge], start: int) -> list[tuple[_core.JoinEdge, int]]:
    """Each edge of a path from ``start`` with the table it is entered from."""
    out = []
    at = start
    for e in edges:
        out.append((e, at))
        at = e.b if e.a == at else e.a
    return out


def _step(cat: _core.Catalog, e: _core.JoinEdge, at: int) -> JoinStep:
    """Edge ``e`` walked from table ``at``, its columns named from that side first."""
    other = e.b if e.a == at else e.a
    cols = (e.from_column, e.to_column)
    if cat.column(e.from_column).table != at:
        cols = cols[::-1]
    return JoinStep(
        from_table=cat.qualified_name(at),
        to_table=cat.qualified_name(other),
        from_column=cat.qualified_column_name(cols[0]),
        to_column=cat.qualified_column_name(cols[1]),
        weight=e.weight,
        declared=e.declared,
    )
