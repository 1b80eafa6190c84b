"""The table index and the single-hop dense retriever."""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, overload, runtime_checkable

import numpy as np

from tabret import _core
from tabret.catalog import Catalog
from tabret.embedders import (
    Embedder,
    HashingEmbedder,
    call_resolved,
    resolve_embedder,
    saved_embedder,
)
from tabret.results import Retrieval

if TYPE_CHECKING:
    from tabret._core import FloatMatrix
    from tabret.join import JoinGraph
    from tabret.reverse import GeneratedQuestions

__all__ = ["DenseRetriever", "LexicalRetriever", "TableIndex", "load_saved", "reusing"]

EmbedderLike = Embedder | HashingEmbedder | Callable[[list[str]], Any] | str | None
Progress = bool | Callable[[str, int, int], None]
#: How a table is written for embedding (:meth:`TableIndex.build`'s ``format``).
TableFormat = Literal["signature", "words", "ddl", "described", "related"]
#: The default table text: the signature, then the tables it references and is referenced by
#: (chosen on Spider train; docs/results.md "The table text").
DEFAULT_TABLE_FORMAT: TableFormat = "related"


def _progress(progress: Progress) -> Callable[[str, int, int], None] | None:
    if progress is False:
        return None
    if callable(progress):
        return progress
    from tqdm import tqdm

    bars: dict[str, Any] = {}

    def report(stage: str, done: int, total: int) -> None:
        bar = bars.get(stage)
        if bar is None:
            what = (
                f"HNSW graph of {stage[5:]}" if stage.startswith("hnsw ") else f"embedding {stage}"
            )
            bar = bars[stage] = tqdm(
                total=total, desc=what, unit="item", file=sys.stderr, leave=False
            )
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return report


class TableIndex:
    """Table (and column) vectors and BM25 over one catalog, for one embedder.

    Build once, save, load: ``TableIndex.build(catalog, embedder)``, ``index.save(dir)``,
    ``TableIndex.load(dir, embedder)``. Immutable and safe to share between threads.
    """

    def __init__(
        self,
        core: _core.TableIndex,
        embedder: EmbedderLike = None,
        values: _core.ValueIndex | None = None,
    ) -> None:
        """``core`` with ``embedder``; ``None``: the embedder ``core`` was saved with
        (:func:`tabret.embedders.saved_embedder`). ``values``: the cell values of its catalog
        (:mod:`tabret.values`), for the ``values`` stage."""
        self._core = core
        self._embed = query_embedder(core.embedder_name, embedder)
        _check_probes(core, self._embed)
        self.catalog = Catalog(core.catalog)
        self.values = _checked_values(core, values)

    @classmethod
    def build(
        cls,
        catalog: _core.Catalog,
        embedder: EmbedderLike = None,
        *,
        format: TableFormat = DEFAULT_TABLE_FORMAT,
        names: Literal["natural", "original"] = "natural",
        columns: bool = True,
        kind: Literal["auto", "exact", "hnsw", "sparse", "int8", "pca"] = "auto",
        sparse_max_postings: int | None = None,
        sparse_rescore: int | None = None,
        pca_dims: int | None = None,
        pca_scan_dims: int | None = None,
        pca_shortlist: int | None = None,
        pca_rescore: int | None = None,
        batch_size: int = 512,
        values: _core.ValueIndex | None = None,
        progress: Progress = True,
    ) -> TableIndex:
        """Embeds every table (and column) of ``catalog`` and keeps ``values``, the catalog's
        cell values (:func:`tabret.values.read_values`), when given. After a schema change,
        :meth:`update` (or an ``embedder`` made by :func:`reusing`) embeds only what changed.
        The index's :attr:`catalog` numbers tables by database and columns by table, as a save
        and a load do: a column added to a table after a later table's columns gets another id
        there than in ``catalog`` (names are the same).
        ``embedder`` defaults to all-MiniLM-L6-v2; ``"hashing"`` is the built-in model-free
        embedder. ``format`` is how
        a table is written: ``related`` (the default: the signature ``db.table(col, …)``, then
        ``references A; referenced by B``, the tables its foreign keys point to and those whose
        keys point to it), ``signature`` (the papers' text), words, DDL, or ``described`` (the
        signature, then the table's and its columns' descriptions; column texts get
        ``: description``). ``kind``: ``auto`` (the default: the tables' and the columns'
        vectors each get ``exact`` up to 8 MiB of float32 rows, above that ``sparse`` for
        sparse vectors and ``pca`` for dense ones; :attr:`search_kinds` says which),
        ``exact`` (a dense scan), ``sparse`` (an inverted index,
        for the hashing embedder's sparse vectors; :class:`tabret.Error` for dense ones), ``int8``
        (exact: a scan of int8 codes, then the rows that may reach the top k re-scored exactly;
        for dense vectors) or ``hnsw`` (approximate). A ``sparse`` search is exact while the
        query's posting lists hold at most ``sparse_max_postings`` entries (default 1,000,000:
        catalogs up to about 50,000 hashed columns); beyond that it reads the query's most
        informative dimensions up to that budget and re-scores the best ``sparse_rescore``
        (default 4,000) items exactly. ``sparse_max_postings=0`` keeps it exact always.
        ``pca`` (approximate, for dense vectors such as MiniLM's on large catalogs) codes the
        vectors' ``pca_dims`` (default 256) leading principal components in 4 bits and the
        first ``pca_scan_dims`` (128) in 2 bits, scans the 2-bit codes of every row, scores
        the best ``pca_shortlist`` (10,000) rows on their 4-bit codes and re-scores the best
        ``pca_rescore`` (1,000) of those exactly: every returned score is exact, an item is
        missed when its codes rank it below those."""
        embed, name = resolve_embedder(embedder)
        tuning = {
            key: value
            for key, value in (
                ("sparse_max_postings", sparse_max_postings),
                ("sparse_rescore", sparse_rescore),
                ("pca_dims", pca_dims),
                ("pca_scan_dims", pca_scan_dims),
                ("pca_shortlist", pca_shortlist),
                ("pca_rescore", pca_rescore),
            )
            if value is not None
        }
        core = _core.TableIndex.build(
            catalog,
            embed,
            name,
            format=format,
            names=names,
            columns=columns,
            kind=kind,
            batch_size=batch_size,
            progress=_progress(progress),
            **tuning,
        )
        index = cls.__new__(cls)
        index._core, index._embed, index.catalog = core, embed, Catalog(core.catalog)
        index.values = _checked_values(core, values)
        return index

    def update(self, catalog: _core.Catalog, *, progress: Progress = True) -> TableIndex:
        """The index of ``catalog`` (this one's catalog, changed) with this index's embedder,
        text format, names, columns and kind, embedding only the tables and columns whose text
        this index does not hold (:func:`reusing`). Equal to a full :meth:`build` where the
        embedder gives a text the same vector in any batch (the hashing embedder); a model's
        vectors may differ from a full build's in the last float bits. The cell values are not
        carried over: pass them to :meth:`with_values`."""
        core = self._core
        kind: Any = core.kind
        updated = TableIndex.build(
            catalog,
            reusing(self._embed, self),
            format=core.format,  # type: ignore[arg-type]
            names=core.names,  # type: ignore[arg-type]
            columns=core.has_columns,
            kind=kind,
            progress=progress,
        )
        updated._embed = self._embed  # queries: the embedder itself, not the memo
        return updated

    def _embedded(self) -> list[tuple[list[str], FloatMatrix]]:
        """Each text this index embedded, with its vector (tables, then columns)."""
        out = [(self._core.table_texts(), self._core.table_vectors)]
        if self._core.has_columns:
            out.append((self._core.column_texts(), self._core.column_vectors))
        return out

    def with_question_memo(self) -> TableIndex:
        """This index (sharing its vectors) with its query embedder behind an in-memory cache
        (:class:`tabret.CachedEmbedder`, same name): a text embedded once, by any retriever
        built over the copy, is not embedded again. For running many pipelines over the same
        questions (:func:`tabret.tuning.tune`); the cache grows with every distinct text."""
        index = copy.copy(self)
        index._embed = _core.CachedEmbedder(self._embed, self.embedder_name)
        return index

    def with_values(self, values: _core.ValueIndex | None) -> TableIndex:
        """This index (sharing its vectors) with ``values`` as its cell values (``None``:
        without). :class:`tabret.Error` when they were read for another catalog."""
        index = copy.copy(self)
        index.values = _checked_values(self._core, values)
        return index

    @classmethod
    def load(cls, path: str | os.PathLike[str], embedder: EmbedderLike = None) -> TableIndex:
        """Loads a saved index; ``embedder`` must be the one it was built with (default: the one
        its saved name says: the hashing embedder with its parameters, or that
        sentence-transformers model). The cell values saved with it come too."""
        core, _, _, values, _ = _core.load_index(path, graph=False, questions=False)
        return cls(core, embedder, values)

    def save(
        self,
        path: str | os.PathLike[str],
        *,
        join_graph: JoinGraph | None = None,
        questions: GeneratedQuestions | None = None,
        replace: bool = False,
    ) -> None:
        """Writes the index (with its :attr:`values`, and ``join_graph`` and ``questions`` when
        given) into one versioned, checksummed directory; an interrupted save keeps the old one.

        ``path`` must be missing, empty, or a directory tabret saved: anything else (a directory
        holding files tabret did not write, a file, a symbolic link) raises
        :class:`tabret.FileError` and is left untouched. A join graph, questions or values
        already saved there for the same catalog and embedder are kept; ones made for another raise
        :class:`tabret.FileError` unless ``replace=True``, which discards them."""
        _core.save_index(
            path,
            self._core,
            join_graph.core if join_graph is not None else None,
            questions.core if questions is not None else None,
            replace,
            self.values,
        )

    @property
    def embedder_name(self) -> str:
        return self._core.embedder_name

    @property
    def search_kinds(self) -> dict[str, str]:
        """The index kind the tables' (``"tables"``) and, when indexed, the columns'
        (``"columns"``) vectors are searched with: ``kind``, or what ``auto`` picked."""
        return self._core.search_kinds

    def __repr__(self) -> str:
        cat = self.catalog
        return (
            f"TableIndex({cat.num_databases} databases, {cat.num_tables} tables, "
            f"{cat.num_columns} columns, embedder {self.embedder_name!r})"
        )

    @property
    def core(self) -> _core.TableIndex:
        return self._core

    def table_text(self, table: int) -> str:
        return self._core.table_text(table)


#: The least cosine between a table vector the index stores and the same table's text embedded
#: again at load: the same model gives 1 up to float noise, another model far less.
PROBE_MIN_COSINE = 0.99


def query_embedder(built_with: str, embedder: EmbedderLike) -> Any:
    """What :func:`~tabret.embedders.resolve_embedder` makes of ``embedder`` (``None``: the
    embedder named ``built_with``), for an index built with embedder ``built_with``:
    :class:`ValueError` when its name is another."""
    if embedder is None:
        embedder = saved_embedder(built_with)
    fn, name = resolve_embedder(embedder)
    if name != built_with:
        raise ValueError(
            f"the index was built with embedder '{built_with}', "
            f"but '{name}' was given: queries must use the same embedder"
        )
    return fn


def _check_probes(core: _core.TableIndex, embed: Any) -> None:
    """Embeds the texts of (up to) three tables again and compares them with the stored vectors:
    a different embedder under the same name (a changed callable, another endpoint model) is a
    :class:`ValueError` at load, not silently wrong rankings."""
    n = core.catalog.num_tables
    if n == 0:
        return
    ids = sorted({0, n // 2, n - 1})
    check_embedder_reproduces(
        embed,
        core.embedder_name,
        [core.table_text(t) for t in ids],
        np.asarray(core.table_vectors)[ids],
        [core.catalog.qualified_name(t) for t in ids],
    )


def check_embedder_reproduces(
    embed: Any, name: str, texts: list[str], stored: Any, labels: list[str]
) -> None:
    """:class:`ValueError` unless ``embed`` (what :func:`~tabret.embedders.resolve_embedder`
    returned) gives ``texts`` vectors of ``stored``'s shape at cosine at least
    :data:`PROBE_MIN_COSINE` with them; ``labels`` name the texts' tables in the message."""
    got = call_resolved(embed, texts).astype(np.float64)
    stored = np.asarray(stored, dtype=np.float64)
    if got.shape != stored.shape:
        raise ValueError(
            f"the embedder given as '{name}' returns vectors of shape "
            f"{got.shape[1:] or got.shape}, the index stores {stored.shape[1]}-d ones: it is not "
            "the embedder the index was built with"
        )
    norms = np.linalg.norm(got, axis=1) * np.linalg.norm(stored, axis=1)
    cosines = np.einsum("ij,ij->i", got, stored) / np.where(norms > 0, norms, 1.0)
    worst = int(np.argmin(cosines))
    if cosines[worst] < PROBE_MIN_COSINE:
        raise ValueError(
            f"the embedder given as '{name}' does not reproduce the index's "
            f"vectors (cosine {cosines[worst]:.3f} for table '{labels[worst]}'): it is not the "
            "embedder the index was built with, although its name is the same"
        )


def _checked_values(
    core: _core.TableIndex, values: _core.ValueIndex | None
) -> _core.ValueIndex | None:
    if values is not None and values.catalog_fingerprint != core.catalog_fingerprint:
        raise _core.Error("the values were read for another catalog than the index's")
    return values


def load_saved(
    path: str | os.PathLike[str], embedder: EmbedderLike = None
) -> tuple[TableIndex, JoinGraph | None, GeneratedQuestions | None]:
    """The index saved in ``path`` with its join graph and generated questions (``None`` where
    none was saved), from one consistent read of the directory: they belong together even while
    another process saves to it."""
    index, graph, questions, _ = load_all(path, embedder)
    return index, graph, questions


def load_all(
    path: str | os.PathLike[str], embedder: EmbedderLike = None
) -> tuple[TableIndex, JoinGraph | None, GeneratedQuestions | None, str | None]:
    """:func:`load_saved` with the pipeline ``tabret tune`` saved there (its JSON text, read
    by :func:`tabret.tuning.saved`; ``None`` where none was)."""
    from tabret.join import JoinGraph
    from tabret.reverse import GeneratedQuestions

    core, graph, questions, values, tuning = _core.load_index(path)
    index = TableIndex(core, embedder, values)
    return (
        index,
        JoinGraph(graph, index) if graph is not None else None,
        GeneratedQuestions(questions, index) if questions is not None else None,
        tuning,
    )


@runtime_checkable
class Retriever(Protocol):
    """What every tabret retriever is: the ``index`` it searches and
    ``retrieve(question or questions, k, k_columns=0)``, one :class:`~tabret.Retrieval` per
    question (a single one for a ``str``). Integrations, :class:`~tabret.pipeline.Pipeline` and
    ``tabret.eval`` take any object of this shape."""

    @property
    def index(self) -> TableIndex: ...

    @overload
    def retrieve(  # type: ignore[overload-overlap]  # a str is also a Sequence[str]
        self, questions: str, k: int = 10, *, k_columns: int = 0
    ) -> Retrieval: ...
    @overload
    def retrieve(
        self, questions: Sequence[str], k: int = 10, *, k_columns: int = 0
    ) -> list[Retrieval]: ...


def check_questions(batch: Sequence[str]) -> None:
    """:class:`ValueError` for an empty or whitespace-only question in ``batch``: it has
    nothing to rank tables by (every table would score 0)."""
    for i, question in enumerate(batch):
        if isinstance(question, str) and not question.strip():
            which = f" {i + 1} of {len(batch)}" if len(batch) > 1 else ""
            blank = " (whitespace only)" if question else ""
            raise ValueError(f"question{which} is empty{blank}: there is nothing to retrieve by")


class RetrievesBatches:
    """``retrieve(question or questions, k, k_columns=0)`` over ``_retrievals``, a batch in,
    one :class:`~tabret.Retrieval` per question out: the shape every retriever shares."""

    def _retrievals(self, batch: list[str], k: int, k_columns: int) -> list[Retrieval]:
        raise NotImplementedError

    @overload
    def retrieve(  # type: ignore[overload-overlap]  # a str is also a Sequence[str]
        self, questions: str, k: int = 10, *, k_columns: int = 0
    ) -> Retrieval: ...
    @overload
    def retrieve(
        self, questions: Sequence[str], k: int = 10, *, k_columns: int = 0
    ) -> list[Retrieval]: ...
    def retrieve(
        self, questions: str | Sequence[str], k: int = 10, *, k_columns: int = 0
    ) -> Retrieval | list[Retrieval]:
        """Top-``k`` tables (and ``k_columns`` columns) per question, best first (fewer where
        the method finds fewer: BM25 returns only tables that share a term with the question).
        :class:`ValueError` for ``k`` < 1 or an empty or whitespace-only question."""
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        batch = [questions] if isinstance(questions, str) else list(questions)
        check_questions(batch)
        out = self._retrievals(batch, k, k_columns)
        return out[0] if isinstance(questions, str) else out


class BaseRetriever(RetrievesBatches):
    """The base of tabret's retrievers (and of your own): ``retrieve(question or questions, k,
    k_columns=0)`` over ``_raw``, a batch in, native results out, which is also how one stage
    calls the stage before it; ``ranks_columns`` says whether ``k_columns`` > 0 is answered."""

    index: TableIndex
    ranks_columns: bool = False

    def _raw(self, batch: list[str], k: int, k_columns: int) -> list[_core.Retrieval]:
        raise NotImplementedError

    def _stage(self) -> _Stage:
        """What a native stage built over this one calls for its candidates: ``_raw``, or a
        native retriever's own C++ retriever (no trip through Python between the two)."""
        return self._raw

    def _native_unless_overridden(
        self, owner: type[BaseRetriever], native: Callable[[], _Stage]
    ) -> _Stage:
        """``native()``, or ``_raw`` where a subclass overrides ``owner``'s (then ``_raw`` does
        more than the native call, and a native stage must go through it)."""
        return self._raw if type(self)._raw is not owner._raw else native()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(over {self.index!r})"

    def _retrievals(self, batch: list[str], k: int, k_columns: int) -> list[Retrieval]:
        raw = self._raw(batch, k, k_columns)
        cat = self.index.catalog
        return [Retrieval.from_core(q, r, cat) for q, r in zip(batch, raw, strict=True)]


class _PythonStage(BaseRetriever):
    """A :class:`Retriever` that is not a :class:`BaseRetriever` (a stage written in Python
    that returns the :class:`~tabret.Retrieval` objects it makes) as native stages call it."""

    def __init__(self, retriever: Retriever) -> None:
        self.retriever, self.index = retriever, retriever.index
        self.ranks_columns = bool(getattr(retriever, "ranks_columns", False))
        self._name = type(retriever).__name__

    def __repr__(self) -> str:
        return repr(self.retriever)

    def _raw(self, batch: list[str], k: int, k_columns: int) -> list[_core.Retrieval]:
        out = self.retriever.retrieve(batch, k, k_columns=k_columns)
        if (
            not isinstance(out, list)
            or len(out) != len(batch)
            or not all(isinstance(r, Retrieval) for r in out)
        ):
            raise TypeError(
                f"{self._name}.retrieve(questions, k, k_columns=...) returned "
                f"{type(out).__name__} for {len(batch)} questions: expected a list of "
                f"{len(batch)} tabret.Retrieval, one per question"
            )
        return [r.to_core(self.index.catalog, f"{self._name}.retrieve") for r in out]


def as_stage(retriever: Retriever) -> BaseRetriever:
    """``retriever`` as the stage before a native one: itself for a tabret retriever, any other
    object of the :class:`Retriever` shape through its ``retrieve``. :class:`TypeError` for an
    object without that shape."""
    if isinstance(retriever, BaseRetriever):
        return retriever
    if not isinstance(getattr(retriever, "index", None), TableIndex) or not callable(
        getattr(retriever, "retrieve", None)
    ):
        raise TypeError(
            f"{type(retriever).__name__} is not a tabret.Retriever: it needs an `index` "
            "(the tabret.TableIndex it searches) and `retrieve(questions, k, k_columns=0)`"
        )
    return _PythonStage(retriever)


class _Embedded(Protocol):
    """What :func:`reusing` takes: something built with an embedder, and the vectors it made."""

    @property
    def embedder_name(self) -> str: ...
    def _embedded(self) -> list[tuple[list[str], FloatMatrix]]: ...


def reusing(embedder: EmbedderLike, *built: _Embedded) -> _core.CachedEmbedder:
    """``embedder`` behind an in-memory cache that already holds the vectors of ``built``
    (indexes, join graphs, generated questions made with it; e.g. those of a catalog before a
    schema change): building the changed catalog's index, graph and questions with it embeds
    only the texts none of them holds (``embedded`` counts them). :class:`ValueError` for one
    built with another embedder."""
    embed, name = resolve_embedder(embedder)
    memo = _core.CachedEmbedder(embed, name)
    for b in built:
        if b.embedder_name != name:
            raise ValueError(
                f"reusing: {type(b).__name__}'s vectors are {b.embedder_name!r}'s, not {name!r}'s"
            )
        for texts, vectors in b._embedded():
            memo.seed(texts, vectors)
    return memo


_RawResults = list[_core.Retrieval]  # (an alias: ``_core`` is also an attribute name below)
if TYPE_CHECKING:  # what a native stage calls for its candidates (BaseRetriever._stage)
    _Stage: TypeAlias = _core.FirstStageFn


class _NativeRetrieve(Protocol):
    def retrieve(self, questions: list[str], k: int, k_columns: int, /) -> _RawResults: ...
    def as_stage(self) -> _core.NativeRetriever: ...


class _NativeRetriever(BaseRetriever):
    """A retriever whose whole work is one native ``retrieve`` call."""

    _core: _NativeRetrieve

    def _raw(self, batch: list[str], k: int, k_columns: int) -> _RawResults:
        return self._core.retrieve(batch, k, k_columns)

    def _stage(self) -> _Stage:
        return self._native_unless_overridden(_NativeRetriever, self._core.as_stage)


_DENSE = _core.DenseRetriever.defaults


class DenseRetriever(_NativeRetriever):
    """Single-hop dense retrieval (optionally fused with BM25): tables ranked by cosine with
    the question. A batch of questions costs one embedder call."""

    ranks_columns = True

    def __init__(
        self,
        index: TableIndex,
        *,
        hybrid: bool = _DENSE["hybrid"],
        fusion: Literal["rrf", "weighted"] = _DENSE["fusion"],
        alpha: float = _DENSE["alpha"],
    ) -> None:
        self.index = index
        self._core = _core.DenseRetriever(
            index.core,
            index._embed,
            index.embedder_name,
            hybrid=hybrid,
            fusion=fusion,
            alpha=alpha,
        )


class LexicalRetriever(BaseRetriever):
    """BM25 over the index's table texts: no model at all (the lexical floor). Only tables that
    share a term with the question score, so a question may get fewer than ``k`` tables (none
    when it shares no term with any table)."""

    def __init__(self, index: TableIndex) -> None:
        self.index = index
        self._core = _core.BM25Retriever(index.core)

    def _raw(self, batch: list[str], k: int, k_columns: int) -> list[_core.Retrieval]:
        if k_columns:
            raise ValueError("LexicalRetriever ranks tables only (k_columns must be 0)")
        return self._core.retrieve(batch, k)
