"""Composed retrieval: a first stage, an optional selector, post-steps.

>>> Pipeline(
...     first=ReverseRetriever(index, questions),
...     select=GreedyJoin(graph, ReplayLLM.jar("spider")),
...     post=[Closure()],
... ).retrieve("How many singers are there?", k=5)

- A **first stage** is any tabret retriever (:class:`tabret.Retriever`): dense, hybrid, BM25,
  reverse, MURRE, CRUSH, a :class:`Fusion` of two of them, or a :class:`DatabaseRouter` over
  one.
- A **selector** chooses k tables among the first stage's top candidates: :class:`GreedyJoin`,
  :class:`JarExact` (both score the candidates with the question's table cosine, sub-query
  coverage and join ω, whatever ranked them).
- A **post-step** wraps what comes before it: :class:`Closure` (bridge tables),
  :class:`AdaptiveCut` (ATR's window re-ranking and cut), :class:`Route` (database routing),
  :class:`Rerank` (a cross-encoder re-ranks the candidates).

Each stage is a C++ retriever; the stage before it is called once per batch. A result's trace
lists, per table, the entries of every stage that placed it (e.g. ``greedy-join`` with the
sub-query, then ``reverse`` with the first stage's score, then ``bridge``).
``tabret.methods.build_pipeline("reverse > greedy-join > closure", ...)`` builds the same from
names (the command line's ``--pipeline``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tabret import _core
from tabret.adaptive import AdaptiveRetriever
from tabret.index import BaseRetriever, DenseRetriever, Retriever, _NativeRetriever, as_stage
from tabret.join import (
    Decomposer,
    GreedyJoinRetriever,
    JarExactRetriever,
    JoinClosure,
    JoinGraph,
)
from tabret.rerank import PairScorer, RerankRetriever

__all__ = [
    "AdaptiveCut",
    "Closure",
    "DatabaseRouter",
    "Fusion",
    "GreedyJoin",
    "JarExact",
    "Pipeline",
    "Rerank",
    "Route",
    "Stage",
]


_ROUTING = _core.RoutingOptions()


class DatabaseRouter(_NativeRetriever):
    """Database routing over any first stage: asks ``first`` for ``depth`` tables (and
    ``column_depth`` columns; from a dense column search when ``first`` ranks none), each hit at
    rank r voting ``1 / (rank_constant + r)`` for its database, and returns the tables of the
    ``databases`` databases with the most votes (each counting its best ``per_database``) first,
    in ``first``'s order, then (``others=True``) the others. In a catalog of many databases,
    choosing the database is most of the error; this stage does it. Column votes need an index
    with column vectors. Trace: a ``route`` entry per routed table (its database and votes),
    then the first stage's. Defaults: ``_core.RoutingOptions()``."""

    def __init__(
        self,
        first: BaseRetriever,
        *,
        databases: int = _ROUTING.databases,
        depth: int = _ROUTING.depth,
        column_depth: int = _ROUTING.column_depth,
        rank_constant: float = _ROUTING.rank_constant,
        per_database: int = _ROUTING.per_database,
        others: bool = _ROUTING.others,
    ) -> None:
        self.index = first.index
        self.first = first
        if column_depth > 0 and not self.index.core.has_columns:
            raise ValueError(
                "database routing takes column votes from column vectors: build the index with "
                "columns=True, or pass column_depth=0"
            )
        self.ranks_columns = True
        self._columns = first if first.ranks_columns else DenseRetriever(first.index)
        options = _core.RoutingOptions()
        options.databases, options.depth, options.column_depth = databases, depth, column_depth
        options.rank_constant, options.per_database = rank_constant, per_database
        options.others = others
        candidates = first._stage() if self._columns is first else self._candidates
        self._core = _core.DatabaseRouter(self.index.core, candidates, options)

    def _candidates(self, batch: list[str], k: int, k_columns: int) -> list[_core.Retrieval]:
        if self._columns is self.first or k_columns == 0:
            return self.first._raw(batch, k, k_columns)
        tables = self.first._raw(batch, k, 0)
        if not isinstance(tables, list) or len(tables) != len(batch):
            return tables  # the native router names what is wrong with it
        columns = self._columns._raw(batch, 1, k_columns)
        return [t.with_columns(c.columns) for t, c in zip(tables, columns, strict=True)]


class Fusion(_NativeRetriever):
    """Two first stages as one: their table rankings fused by reciprocal rank (``mode="rrf"``,
    ``rrf_k``) or by weighted min-max scores (``"weighted"``, ``alpha``), each asked for
    ``depth`` tables; columns come from ``a``. Trace: a ``fused`` entry per table, then both
    stages' entries. Options and defaults: ``_core.FusedRetriever``."""

    def __init__(self, a: BaseRetriever, b: BaseRetriever, **options: Any) -> None:
        if a.index is not b.index:
            raise ValueError("fused stages must search the same index")
        self.index, self.a, self.b = a.index, a, b
        self.ranks_columns = a.ranks_columns
        self._core = _core.FusedRetriever(a._stage(), b._stage(), **options)


class Stage:
    """A selector or post-step: ``over(previous)`` builds the retriever that runs it over the
    stage before it. Options are the keyword arguments of that retriever (its defaults)."""

    name = ""

    def __init__(self, **options: Any) -> None:
        self.options = options

    def over(self, previous: BaseRetriever) -> BaseRetriever:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.options.items())})"


class GreedyJoin(Stage):
    """Selector: :class:`~tabret.GreedyJoinRetriever` over the stage before it.
    ``decompositions`` (an LLM or a decomposition rewriter) splits each question into
    sub-queries; ``None`` (the default): each question is its own only sub-query."""

    name = "greedy-join"

    def __init__(
        self, graph: JoinGraph, decompositions: Decomposer | None = None, **options: Any
    ) -> None:
        super().__init__(**options)
        self.graph, self.decompositions = graph, decompositions

    def over(self, previous: BaseRetriever) -> BaseRetriever:
        return GreedyJoinRetriever(
            previous.index, self.graph, self.decompositions, first=previous, **self.options
        )


class JarExact(GreedyJoin):
    """Selector: :class:`~tabret.JarExactRetriever` over the stage before it."""

    name = "jar-exact"

    def over(self, previous: BaseRetriever) -> BaseRetriever:
        return JarExactRetriever(
            previous.index, self.graph, self.decompositions, first=previous, **self.options
        )


class Route(Stage):
    """Routing over the stage before it: :class:`DatabaseRouter`."""

    name = "route"

    def over(self, previous: BaseRetriever) -> BaseRetriever:
        return DatabaseRouter(previous, **self.options)


class Closure(Stage):
    """Post-step: :class:`~tabret.JoinClosure` (bridge tables) over the stage before it."""

    name = "closure"

    def over(self, previous: BaseRetriever) -> BaseRetriever:
        return JoinClosure(previous, **self.options)


class AdaptiveCut(Stage):
    """Post-step: :class:`~tabret.AdaptiveRetriever` (ATR) over the stage before it."""

    name = "adaptive"

    def over(self, previous: BaseRetriever) -> BaseRetriever:
        return AdaptiveRetriever(previous, **self.options)


class Rerank(Stage):
    """Post-step: :class:`~tabret.rerank.RerankRetriever` (``scorer``, e.g. a
    :class:`~tabret.rerank.CrossEncoderScorer`) over the stage before it."""

    name = "rerank"

    def __init__(self, scorer: PairScorer, **options: Any) -> None:
        super().__init__(**options)
        self.scorer = scorer

    def over(self, previous: BaseRetriever) -> BaseRetriever:
        return RerankRetriever(previous, self.scorer, **self.options)


class Pipeline(BaseRetriever):
    """``first`` (any :class:`~tabret.Retriever`: a tabret one, or one written in Python that
    returns the :class:`~tabret.Retrieval` objects it makes), then ``select`` over its
    candidates, then each of ``post`` over what came before. A retriever itself: ``retrieve``,
    ``index``, usable as the first stage of another pipeline, in integrations and in
    ``tabret.eval``."""

    def __init__(
        self,
        first: Retriever,
        select: Stage | None = None,
        post: Sequence[Stage] = (),
        *,
        name: str | None = None,
    ) -> None:
        self.first = first
        self.stages: list[Stage] = ([select] if select is not None else []) + list(post)
        composed = as_stage(first)
        for stage in self.stages:
            composed = stage.over(composed)
        self.composed = composed
        self.index = composed.index
        self.ranks_columns = composed.ranks_columns
        self.name = name or " > ".join([type(first).__name__, *(s.name for s in self.stages)])

    def _raw(self, batch: list[str], k: int, k_columns: int) -> list[_core.Retrieval]:
        return self.composed._raw(batch, k, k_columns)

    def __repr__(self) -> str:
        return f"Pipeline({self.name})"
