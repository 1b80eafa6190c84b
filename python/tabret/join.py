"""Join-aware retrieval: the join graph, greedy join-aware selection, the exact JAR objective and
the join-closure post-step.

- :class:`JoinGraph`: declared foreign keys (ω = 1) plus compatibility ω(i, j) inferred from
  column pairs (type, uniqueness, value overlap, name and embedding similarity). Build it once
  per index, save it beside the index, load it with the index.
- :class:`GreedyJoinRetriever`: coarse + fine (sub-query x column) + join gains, greedy over the
  top-N dense candidates (Boutaleb et al., 2025).
- :class:`JarExactRetriever`: the JAR objective (Chen et al., 2024) solved exactly.
- :class:`JoinClosure`: wraps any retriever and adds the bridge tables on shortest FK paths.
- :func:`column_stats_from_database`: uniqueness and sample values read from a live database.
- :func:`jar_column_stats`: value statistics of the Spider/BIRD dev databases recorded by JAR.
"""

from __future__ import annotations

import csv
import functools
import heapq
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tabret import _core
from tabret.datasets import data_dir as _default_data_dir
from tabret.index import BaseRetriever, Progress, TableIndex, _NativeRetriever, _progress
from tabret.llms import CallableLLM, ReplaySource
from tabret.rewriting import DecompositionRewriter, LLMLike

if TYPE_CHECKING:
    from tabret._core import FloatMatrix

__all__ = [
    "JAR_WEIGHTS",
    "ColumnStats",
    "GreedyJoinRetriever",
    "JarExactRetriever",
    "JoinClosure",
    "JoinGraph",
    "automatic_graph",
    "column_pairs",
    "column_stats_from_database",
    "jar_column_stats",
    "lenient_replay",
]

ColumnStats = _core.ColumnStats
PathLike = str | os.PathLike[str]
Decomposer = LLMLike | _core.DecompositionRewriter | _core.RecordedRewriter

#: JAR's reference weights [w1 fine, w2 coverage, w3 join, w4 coarse, w5 assignment budget].
JAR_WEIGHTS: dict[str, tuple[float, float, float, float, float]] = {
    "spider": (2, 8, 1, 10, 1),
    "bird": (3, 8, 1, 3, 1),
}
#: Greedy λ weights (coarse, coverage, join): the paper's and the reference code's.
GREEDY_WEIGHTS: dict[str, tuple[float, float, float]] = {
    "paper": (4, 2, 1),
    "reference": (3, 2, 1),
}

_BUILD = _core.JoinGraph.build_defaults
_GREEDY = _core.GreedyJoinRetriever.defaults
_JAR = _core.JarExactRetriever.defaults
_CLOSURE = _core.JoinClosure.defaults


#: The most column pairs within databases (:func:`column_pairs`) for which
#: :func:`automatic_graph` picks the compatibility graph: scoring pairs runs at a few million a
#: second here (bench/join_scale.py), so this is about 20 seconds (SpiderUnion has 137 thousand;
#: Spider 2.0-lite, with five databases of about 70,000 columns, 13 billion: hours).
AUTOMATIC_PAIRS = 100_000_000


def column_pairs(catalog: _core.Catalog) -> int:
    """The pairs of columns within each database: what the compatibility graph scores."""
    counts: dict[int, int] = {}
    for t in range(catalog.num_tables):
        table = catalog.table(t)
        counts[table.database] = counts.get(table.database, 0) + len(table.columns)
    return sum(n * (n - 1) // 2 for n in counts.values())


def automatic_graph(catalog: _core.Catalog) -> Literal["compatibility", "keys"]:
    """The join graph ``tabret index`` builds by default: ω inferred for every column pair
    (``compatibility``) where the catalog has at most :data:`AUTOMATIC_PAIRS` of them within its
    databases, else its foreign keys only (``keys``)."""
    return "compatibility" if column_pairs(catalog) <= AUTOMATIC_PAIRS else "keys"


def _preset(presets: Mapping[str, Sequence[float]], weights: Sequence[float]) -> Any:
    """The name of the preset that is ``weights`` (a compiled default), else ``weights``."""
    return next((name for name, w in presets.items() if list(w) == list(weights)), weights)


class JoinGraph:
    """Which tables of a database join, and how well. Immutable; safe to share."""

    def __init__(self, core: _core.JoinGraph, index: TableIndex) -> None:
        if core.embedder_name != index.embedder_name:
            raise ValueError(
                f"the join graph was built with embedder '{core.embedder_name}', "
                f"the index with '{index.embedder_name}'"
            )
        self._core = core
        self.index = index

    @classmethod
    def build(
        cls,
        index: TableIndex,
        stats: _core.ColumnStats | None = None,
        *,
        names: Literal["natural", "original"] = _BUILD["names"],
        default_uniqueness: float = _BUILD["default_uniqueness"],
        exhaustive_max_tables: int = _BUILD["exhaustive_max_tables"],
        max_block_tables: int = _BUILD["max_block_tables"],
        max_edges_per_table: int = _BUILD["max_edges_per_table"],
        infer_compatibility: bool = _BUILD["infer_compatibility"],
        progress: Progress = True,
    ) -> JoinGraph:
        """Embeds every column's ``table:column`` text with the index's embedder and scores
        the table pairs of each database; ``stats`` adds uniqueness and values.

        A database of at most ``exhaustive_max_tables`` tables scores every pair (the exact
        graph). A larger one scores only pairs of tables sharing a (type family, name word) of
        a column, skipping words shared by more than ``max_block_tables`` tables, and keeps the
        ``max_edges_per_table`` heaviest inferred edges of each table plus every declared
        foreign key: memory and edges linear in the tables. ``infer_compatibility=False``: the
        declared foreign keys only (ω = 1), a sparse key graph; on a catalog that declares
        none, add inferred ones first (:func:`tabret.with_foreign_keys`). ``progress``: a bar
        while the
        columns are embedded (False: none; or a callable ``(stage, done, total)``). Ctrl-C
        stops the build."""
        core = _core.JoinGraph.build(
            index.core,
            index._embed,
            index.embedder_name,
            stats,
            names=names,
            default_uniqueness=default_uniqueness,
            exhaustive_max_tables=exhaustive_max_tables,
            max_block_tables=max_block_tables,
            max_edges_per_table=max_edges_per_table,
            infer_compatibility=infer_compatibility,
            progress=_progress(progress),
        )
        return cls(core, index)

    @property
    def embedder_name(self) -> str:
        return self._core.embedder_name

    def _embedded(self) -> list[tuple[list[str], FloatMatrix]]:
        """Each column text the graph embedded (``table:column``), with its vector
        (:func:`tabret.index.reusing`)."""
        return [(self._core.column_texts(self.index.core), self._core.column_vectors)]

    @classmethod
    def load(cls, path: PathLike, index: TableIndex) -> JoinGraph:
        """Loads the graph saved in the index directory ``path`` (or a ``join_graph.tjg`` file
        taken out of one) for ``index``'s catalog. Raises :class:`tabret.FileError` for a
        corrupt file, a directory without a graph, or a graph of another catalog."""
        return cls(_core.JoinGraph.load(path, index.core), index)

    def save(self, path: PathLike) -> None:
        """Saves the graph into the index directory ``path``, which must hold its index (saved,
        replaced and loaded with it; ``index.save(path, join_graph=graph)`` does both at once)."""
        self._core.save(path)

    @property
    def core(self) -> _core.JoinGraph:
        return self._core

    def weight(self, a: int, b: int) -> float:
        """ω(a, b) for two table ids: 1 for a declared foreign key, 0 without an edge."""
        return self._core.weight(a, b)

    @property
    def edges(self) -> list[_core.JoinEdge]:
        return self._core.edges

    @functools.cached_property
    def _neighbours(self) -> dict[int, list[tuple[int, _core.JoinEdge]]]:
        """Each table's edges, with the table at their other end (built on first use)."""
        out: dict[int, list[tuple[int, _core.JoinEdge]]] = {}
        for e in self._core.edges:
            if e.weight > 0:
                out.setdefault(e.a, []).append((e.b, e))
                out.setdefault(e.b, []).append((e.a, e))
        return out

    def path(self, a: int, b: int) -> list[_core.JoinEdge]:
        """The edges of the strongest join path from table ``a`` to table ``b``: the greatest
        product of ω over its edges (the fewest edges among equals); ``[]`` when ``a == b``.
        :class:`ValueError` when no path joins them (another database, or no edge reaches)."""
        n = self.index.catalog.num_tables
        for t in (a, b):
            if not 0 <= t < n:
                raise ValueError(f"no table {t}: the catalog has {n}")
        best: dict[int, tuple[float, int]] = {a: (0.0, 0)}
        via: dict[int, tuple[int, _core.JoinEdge]] = {}
        heap: list[tuple[float, int, int]] = [(0.0, 0, a)]
        while heap:
            cost, hops, t = heapq.heappop(heap)
            if t == b:
                break
            if (cost, hops) > best[t]:
                continue
            for other, e in self._neighbours.get(t, []):
                step = (cost - math.log(e.weight), hops + 1)
                if other not in best or step < best[other]:
                    best[other] = step
                    via[other] = (t, e)
                    heapq.heappush(heap, (*step, other))
        if b not in best:
            names = self.index.catalog.qualified_name
            raise ValueError(f"no join path from {names(a)} to {names(b)} in the join graph")
        edges: list[_core.JoinEdge] = []
        while b != a:
            b, e = via[b]
            edges.append(e)
        return edges[::-1]

    def __len__(self) -> int:
        return len(self._core)

    def __repr__(self) -> str:
        return f"JoinGraph({len(self)} edges, embedder {self._core.embedder_name!r})"


def _no_decomposition(prompts: list[str]) -> list[str]:
    """No answer: the decomposition parser then keeps each question as its only sub-query."""
    return [""] * len(prompts)


#: The decomposer of ``decompositions=None``: no LLM, each question its own only sub-query.
NO_DECOMPOSITION = CallableLLM(_no_decomposition, "no LLM")


def _rewriter(
    decompositions: Decomposer | None,
) -> _core.DecompositionRewriter | _core.RecordedRewriter:
    if isinstance(decompositions, _core.DecompositionRewriter | _core.RecordedRewriter):
        return decompositions
    return DecompositionRewriter(NO_DECOMPOSITION if decompositions is None else decompositions)


def _first_stage(first: BaseRetriever | None) -> _core.FirstStageFn | None:
    """What a native selector calls for its candidates (None: its own dense ones)."""
    return None if first is None else first._stage()


class GreedyJoinRetriever(_NativeRetriever):
    """Greedy join-aware retrieval over the top ``candidates`` tables of ``first`` (any tabret
    retriever; default: the dense ranking): seed by coarse + fine relevance, then add the table
    with the best coarse + new sub-query coverage + join gain. The coarse relevance is always
    the question's table cosine, whatever ranked the candidates.
    ``decompositions``: an LLM (e.g. ``ReplayLLM.jar("spider")``) or a decomposition rewriter;
    ``None`` (default): no LLM, each question is its own only sub-query.
    ``weights``: "paper" (λ_coarse 4), "reference" (3) or (coarse, coverage, join)."""

    ranks_columns = True

    def __init__(
        self,
        index: TableIndex,
        graph: JoinGraph,
        decompositions: Decomposer | None = None,
        *,
        candidates: int = _GREEDY["candidates"],
        weights: Literal["paper", "reference"] | Sequence[float] = _preset(
            GREEDY_WEIGHTS, (_GREEDY["coarse"], _GREEDY["coverage"], _GREEDY["join"])
        ),
        first: BaseRetriever | None = None,
    ) -> None:
        w = GREEDY_WEIGHTS[weights] if isinstance(weights, str) else tuple(weights)
        if len(w) != 3:
            raise ValueError(f"greedy weights are (coarse, coverage, join), got {w}")
        self.index = index
        self._core = _core.GreedyJoinRetriever(
            index.core,
            graph.core,
            index._embed,
            index.embedder_name,
            _rewriter(decompositions),
            candidates,
            w[0],
            w[1],
            w[2],
            _first_stage(first),
        )


class JarExactRetriever(_NativeRetriever):
    """The JAR objective over the top ``candidates`` tables of ``first`` (default: the dense
    ranking), solved exactly per question
    (branch-and-bound over connected table subsets with a maximum spanning join tree). The
    optimum for k is not a prefix of the optimum for k + 1: evaluate each k on its own run
    (``tabret.eval.evaluate``'s default). ``weights``: "spider", "bird" or five numbers.
    ``connectivity``: "soft" (default; zero-weight edges may complete the join tree, so tables
    of other databases can fill up k) or "strict" (JAR's hard constraint over ω > 0 edges, with
    a greedy fill where no connected set of k tables exists). ``max_nodes`` bounds the search
    per question (default 2^22: the whole search tree of 21 candidates, so the default 20 are
    always searched to the end; 40 candidates could take 2^40): where it stops the search, the
    best set found so far comes back, each of its tables traced ``jar-exact:bounded``."""

    ranks_columns = True

    def __init__(
        self,
        index: TableIndex,
        graph: JoinGraph,
        decompositions: Decomposer | None = None,
        *,
        candidates: int = _JAR["candidates"],
        weights: Literal["spider", "bird"] | Sequence[float] = _preset(
            JAR_WEIGHTS, _JAR["weights"]
        ),
        connectivity: Literal["soft", "strict"] = _JAR["connectivity"],
        first: BaseRetriever | None = None,
        max_nodes: int = _JAR["max_nodes"],
    ) -> None:
        w = list(JAR_WEIGHTS[weights] if isinstance(weights, str) else weights)
        self.index = index
        self._core = _core.JarExactRetriever(
            index.core,
            graph.core,
            index._embed,
            index.embedder_name,
            _rewriter(decompositions),
            candidates,
            w,
            connectivity,
            _first_stage(first),
            max_nodes,
        )


class JoinClosure(BaseRetriever):
    """Any retriever plus bridge tables: for the top ``k`` tables, the tables on shortest
    declared-FK paths between selected tables of the same database (at most ``max_between``
    per path, ``budget`` per question), marked ``"bridge"`` in the trace. ``mode="append"``
    returns up to ``k + budget`` tables; ``"within_k"`` keeps ``k`` (the largest prefix whose
    closure fits)."""

    def __init__(
        self,
        retriever: BaseRetriever,
        *,
        budget: int = _CLOSURE["budget"],
        max_between: int = _CLOSURE["max_between"],
        mode: Literal["append", "within_k"] = _CLOSURE["mode"],
    ) -> None:
        self.index = retriever.index
        self.retriever = retriever
        self.ranks_columns = retriever.ranks_columns
        self._core = _core.JoinClosure(retriever.index.core, budget, max_between, mode)

    def _raw(self, batch: list[str], k: int, k_columns: int) -> list[_core.Retrieval]:
        return self._core.apply(self.retriever._raw(batch, k, k_columns), k)


def jar_column_stats(
    catalog: _core.Catalog,
    dataset: Literal["spider", "bird"],
    data_dir: PathLike | None = None,
) -> _core.ColumnStats:
    """Uniqueness ratios (``jar/data/<dataset>/dev_uniqueness.json``) and sample values
    (``tapas/test_t.csv``) of the dev databases, for the columns of ``catalog`` they name
    (matched case-insensitively by database, table and column; others stay unknown)."""
    root = (Path(data_dir) if data_dir is not None else _default_data_dir()) / "jar/data" / dataset
    stats = _core.ColumnStats(catalog.num_columns)
    uniqueness: dict[int, float] = {}
    for key, value in json.loads((root / "dev_uniqueness.json").read_text("utf-8")).items():
        c = _column(catalog, *key.split("#sep#"))
        if c is not None:
            uniqueness[c] = float(value)
    values: dict[int, list[str]] = {}
    with (root / "tapas/test_t.csv").open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            db, table = row["schema"].split(",")[:2]
            for column, sample in json.loads(row["instance_tapas"]).items():
                c = _column(catalog, db, table, column)
                if c is not None:
                    values[c] = [str(v) for v in sample if v is not None]
    for c in uniqueness.keys() | values.keys():
        stats.set(c, uniqueness.get(c), values.get(c, []))
    return stats


def column_stats_from_database(
    catalog: _core.Catalog,
    bind: str | Any,
    db_name: str,
    *,
    schema: str | None = None,
    max_values: int = 100,
    sample_rows: int | None = 100_000,
    stats: _core.ColumnStats | None = None,
) -> _core.ColumnStats:
    """Uniqueness (distinct / rows) and up to ``max_values`` distinct values of every column of
    database ``db_name`` of ``catalog``, read through SQLAlchemy from ``bind`` (a URL such as
    ``sqlite:///shop.db`` or ``postgresql+psycopg://…``, or an ``Engine``; needs the
    ``sqlalchemy`` extra). Counts look at the first ``sample_rows`` rows of each table (``None``:
    all). Fills and returns ``stats`` (new when ``None``), so several databases can share one;
    pass the result to :meth:`JoinGraph.build`. A failing query raises :class:`tabret.Error`
    naming the table."""
    from tabret._sqlalchemy import collect_stats

    out = stats if stats is not None else _core.ColumnStats(catalog.num_columns)
    collect_stats(
        catalog,
        out,
        bind,
        db_name,
        schema=schema,
        max_values=max_values,
        sample_rows=sample_rows,
    )
    return out


def _column(catalog: _core.Catalog, db: str, table: str, column: str) -> int | None:
    t = catalog.find_table(db, table)
    return None if t is None else catalog.find_column(t, column)


def lenient_replay(source: ReplaySource) -> CallableLLM:
    """An LLM answering from ``source`` like :class:`tabret.llms.ReplayLLM`, except that a
    question without a recording gets an empty answer (which a rewriter's ``use_question``
    policy turns into the question itself) instead of an error. For benchmarks whose revision
    differs from the recordings' (BirdUnion vs JAR's BIRD dev); count the misses first."""

    def answer(prompts: list[str]) -> list[str]:
        out = []
        for prompt in prompts:
            q = _core.extract_question(prompt)
            out.append(source.completion(q) if q is not None and q in source else "")
        return out

    return CallableLLM(answer, f"{source.name} (lenient)")
