"""Every retrieval method by name: ``METHODS["greedy-join"]`` says what the method is, what it
needs besides the index, its options (a dataclass whose defaults are the constructor's) and how
to build it.

>>> from tabret.methods import METHODS, Inputs
>>> method = METHODS["greedy-join"]
>>> retriever = method.build(index, Inputs(graph=graph, llm=llm), method.options())

The command line (``tabret eval --method``, ``tabret query --method``) and the method table of
docs/choosing-a-method.md are read from this registry. Each method has a stage ``kind`` so that
a pipeline spelling such as ``"reverse > greedy-join > closure"`` can look its stages up by
name (:func:`stage`): a ``first`` stage ranks the index itself, a ``select`` stage chooses
among the candidates of a first stage, a ``post`` stage adds to or reorders the result of the
stage before it. :meth:`Method.after` builds a stage over the one before it (``Inputs.first``)
and refuses a stage that cannot take one (``takes_first``). :func:`build_pipeline` does this
for a spelling such as ``"reverse > greedy-join > closure"`` (the command line's
``--pipeline``); :mod:`tabret.pipeline` composes the same stages as objects.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, make_dataclass, replace
from functools import reduce
from typing import Any, Generic, Literal, TypeVar, cast

from tabret import _core
from tabret.adaptive import AdaptiveRetriever, SimilarityScorer, ThresholdRule
from tabret.crush import CrushCandidates, CrushObjective, CrushRetriever, ProbeContext
from tabret.index import (
    BaseRetriever,
    DenseRetriever,
    LexicalRetriever,
    TableIndex,
    _NativeRetriever,
)
from tabret.join import GreedyJoinRetriever, JarExactRetriever, JoinClosure, JoinGraph
from tabret.murre import MurreRetriever
from tabret.pipeline import DatabaseRouter, Fusion, Pipeline
from tabret.rerank import PairScorer, RerankRetriever, reverse_reranker, window_scorer
from tabret.reverse import GeneratedQuestions, ReverseRetriever
from tabret.rewriting import (
    LexicalRemovalRewriter,
    LLMLike,
    MurreRewriter,
    QueryRewriter,
    RemovalOutput,
)

__all__ = [
    "METHODS",
    "AdaptiveOptions",
    "ClosureOptions",
    "CrushOptions",
    "GreedyJoinOptions",
    "Inputs",
    "JarExactOptions",
    "Method",
    "MurreOptions",
    "NativeMethodRetriever",
    "Need",
    "NoOptions",
    "RerankOptions",
    "ReverseOptions",
    "RouteOptions",
    "StageKind",
    "build_pipeline",
    "compose",
    "is_prefix",
    "method_help",
    "method_names",
    "method_table",
    "pipeline_stages",
    "stage",
]

#: Where a method sits in a pipeline (see the module docstring).
StageKind = Literal["first", "select", "post"]
#: What a method may need besides the index.
Need = Literal["llm", "join-graph", "questions", "decomposition", "values", "reranker"]
#: Builds the rewriter a method uses; ``output`` is what a removal rewriter writes (MURRE),
#: others ignore it.
RewriterFactory = Callable[[RemovalOutput], QueryRewriter]


def _default(fn: Callable[..., object], name: str) -> Any:
    """The default of parameter ``name`` of ``fn`` (never re-typed here); for an extension
    class, from its ``defaults``."""
    if isinstance(fn, type) and fn.__module__ == _core.__name__:
        return cast(Any, fn).defaults[name]
    return inspect.signature(fn).parameters[name].default


@dataclass(frozen=True)
class Inputs:
    """What the caller has besides the index. ``llm`` answers the method's prompts (a live
    model or recorded answers); ``rewriter``, when given, replaces the rewriter a method would
    build from ``llm`` (CRUSH's probes, MURRE's removal); ``first`` is the stage before a
    ``select`` or ``post`` stage; ``reranker`` scores (question, table text) pairs
    (:class:`tabret.rerank.CrossEncoderScorer`: ``rerank``, and ATR's window scorer)."""

    llm: LLMLike | None = None
    graph: JoinGraph | None = None
    questions: GeneratedQuestions | None = None
    rewriter: RewriterFactory | None = None
    first: BaseRetriever | None = None
    reranker: PairScorer | None = None


@dataclass(frozen=True)
class NoOptions:
    """A method without options."""


@dataclass(frozen=True)
class ReverseOptions:
    candidates: int = field(default=_default(ReverseRetriever, "candidates"))


@dataclass(frozen=True)
class CrushOptions:
    probe: ProbeContext = field(default=_default(CrushRetriever, "probe"))
    candidates: CrushCandidates = field(default=_default(CrushRetriever, "candidates"))
    candidate_depth: int = field(default=_default(CrushRetriever, "candidate_depth"))
    objective: CrushObjective = field(default=_default(CrushRetriever, "objective"))
    entropy: bool = field(default=_default(CrushRetriever, "entropy"))
    connectivity: bool = field(default=_default(CrushRetriever, "connectivity"))


@dataclass(frozen=True)
class GreedyJoinOptions:
    candidates: int = field(default=_default(GreedyJoinRetriever, "candidates"))
    weights: Literal["paper", "reference"] | Sequence[float] = field(
        default=_default(GreedyJoinRetriever, "weights")
    )


@dataclass(frozen=True)
class JarExactOptions:
    candidates: int = field(default=_default(JarExactRetriever, "candidates"))
    weights: Literal["spider", "bird"] | Sequence[float] = field(
        default=_default(JarExactRetriever, "weights")
    )
    connectivity: Literal["soft", "strict"] = field(
        default=_default(JarExactRetriever, "connectivity")
    )
    max_nodes: int = field(default=_default(JarExactRetriever, "max_nodes"))


@dataclass(frozen=True)
class AdaptiveOptions:
    rule: ThresholdRule = field(default=_default(SimilarityScorer, "rule"))
    value: float = field(default=_default(SimilarityScorer, "value"))
    depth: int = field(default=_default(SimilarityScorer, "depth"))
    candidates: int = field(default=_default(AdaptiveRetriever, "candidates"))
    window: int = field(default=_default(AdaptiveRetriever, "window"))
    retain: int = field(default=_default(AdaptiveRetriever, "retain"))

    def scorer(self) -> SimilarityScorer:
        return SimilarityScorer(self.rule, self.value, self.depth)


@dataclass(frozen=True)
class RerankOptions:
    candidates: int = field(default=_default(RerankRetriever, "candidates"))


@dataclass(frozen=True)
class MurreOptions:
    beam: int = field(default=_default(MurreRetriever, "beam"))
    hops: int = field(default=_default(MurreRetriever, "hops"))
    per_beam: int = field(default=_default(MurreRetriever, "per_beam"))
    removal: bool = field(default=_default(MurreRetriever, "removal"))
    early_stop: bool = field(default=_default(MurreRetriever, "early_stop"))
    output: RemovalOutput = field(default=_default(LexicalRemovalRewriter, "output"))
    #: The reference code's options (:meth:`MurreRetriever.reference`; ``per_beam`` unused).
    reference: bool = False


@dataclass(frozen=True)
class RouteOptions:
    databases: int = field(default=_default(DatabaseRouter, "databases"))
    depth: int = field(default=_default(DatabaseRouter, "depth"))
    column_depth: int = field(default=_default(DatabaseRouter, "column_depth"))
    rank_constant: float = field(default=_default(DatabaseRouter, "rank_constant"))
    per_database: int = field(default=_default(DatabaseRouter, "per_database"))
    others: bool = field(default=_default(DatabaseRouter, "others"))


@dataclass(frozen=True)
class ClosureOptions:
    budget: int = field(default=_default(JoinClosure, "budget"))
    max_between: int = field(default=_default(JoinClosure, "max_between"))
    mode: Literal["append", "within_k"] = field(default=_default(JoinClosure, "mode"))


OptionsT = TypeVar("OptionsT")


@dataclass(frozen=True)
class Method(Generic[OptionsT]):
    """One retrieval method: ``build(index, inputs, options)`` returns its retriever."""

    name: str
    description: str
    kind: StageKind
    options: Callable[[], OptionsT]
    build: Callable[[TableIndex, Inputs, OptionsT], BaseRetriever]
    #: What it cannot run without.
    needs: frozenset[Need] = frozenset()
    #: What it uses when given (an LLM, decompositions) ...
    uses: frozenset[Need] = frozenset()
    #: ... and what it does instead without it.
    offline: str | None = None
    #: In the method lists of the command line (``post`` stages are flags there).
    cli: bool = field(default=True)
    #: The name in results tables (``tabret eval``), when not the method's name.
    label: str = ""
    #: Ranks columns too (``tabret eval --level column``).
    columns: bool = False
    #: Builds over the stage before it (``Inputs.first``), so it can follow any first stage.
    takes_first: bool = False
    #: Searches the index's column vectors (the index must be built with ``columns=True``).
    column_index: bool = False
    #: Its answer at k is the first k tables of its answer at any larger k, whatever the catalog
    #: (tests/python/test_prefix.py proves it): ``tabret eval`` may then score one run at the
    #: largest k at every k. Every other method is run once per k, so that what it returns at k
    #: never depends on the other k asked for.
    prefix: bool = False
    #: What the score of a returned table is (``tabret query`` prints it above the ranks).
    score: str = "the method's own score; the rank is the order"

    @property
    def display(self) -> str:
        return self.label or self.name

    def after(
        self, previous: BaseRetriever, index: TableIndex, inputs: Inputs, options: OptionsT
    ) -> BaseRetriever:
        """This stage over ``previous`` (a pipeline's next stage)."""
        if not self.takes_first:
            raise ValueError(f"{self.name} cannot follow another stage (it ranks the index)")
        return self.build(index, replace(inputs, first=previous), options)


def _missing(name: str, what: str) -> ValueError:
    return ValueError(f"{name} needs {what}")


def _graph(inputs: Inputs, name: str) -> JoinGraph:
    if inputs.graph is None:
        raise _missing(name, "a join graph")
    return inputs.graph


def _first(index: TableIndex, inputs: Inputs) -> BaseRetriever:
    return inputs.first if inputs.first is not None else DenseRetriever(index)


def _single_hop(index: TableIndex, inputs: Inputs, options: NoOptions) -> BaseRetriever:
    return DenseRetriever(index)


def _hybrid(index: TableIndex, inputs: Inputs, options: NoOptions) -> BaseRetriever:
    return DenseRetriever(index, hybrid=True)


def _bm25(index: TableIndex, inputs: Inputs, options: NoOptions) -> BaseRetriever:
    return LexicalRetriever(index)


def _reverse(index: TableIndex, inputs: Inputs, options: ReverseOptions) -> BaseRetriever:
    if inputs.questions is None:
        raise _missing("reverse", "generated questions")
    reranker = None if inputs.reranker is None else reverse_reranker(inputs.reranker)
    return ReverseRetriever(
        index, inputs.questions, reranker=reranker, candidates=options.candidates
    )


def _crush(index: TableIndex, inputs: Inputs, options: CrushOptions) -> BaseRetriever:
    rewriter = None if inputs.rewriter is None else inputs.rewriter("tabulated")
    if rewriter is None and inputs.llm is None:
        raise _missing("crush", "an LLM (it hallucinates a schema)")
    return CrushRetriever(
        index,
        rewriter,
        llm=None if rewriter is not None else inputs.llm,
        probe=options.probe,
        candidates=options.candidates,
        candidate_depth=options.candidate_depth,
        objective=options.objective,
        entropy=options.entropy,
        connectivity=options.connectivity,
    )


def _greedy_join(index: TableIndex, inputs: Inputs, options: GreedyJoinOptions) -> BaseRetriever:
    graph = _graph(inputs, "greedy-join")
    return GreedyJoinRetriever(
        index,
        graph,
        inputs.llm,
        candidates=options.candidates,
        weights=options.weights,
        first=inputs.first,
    )


def _jar_exact(index: TableIndex, inputs: Inputs, options: JarExactOptions) -> BaseRetriever:
    graph = _graph(inputs, "jar-exact")
    return JarExactRetriever(
        index,
        graph,
        inputs.llm,
        candidates=options.candidates,
        weights=options.weights,
        connectivity=options.connectivity,
        first=inputs.first,
        max_nodes=options.max_nodes,
    )


def _adaptive(index: TableIndex, inputs: Inputs, options: AdaptiveOptions) -> BaseRetriever:
    return AdaptiveRetriever(
        _first(index, inputs),
        options.scorer() if inputs.reranker is None else window_scorer(inputs.reranker),
        candidates=options.candidates,
        window=options.window,
        retain=options.retain,
    )


def _rerank(index: TableIndex, inputs: Inputs, options: RerankOptions) -> BaseRetriever:
    if inputs.reranker is None:
        raise _missing(
            "rerank", "a reranker (a cross-encoder, tabret train --cross-encoder: --reranker DIR)"
        )
    return RerankRetriever(_first(index, inputs), inputs.reranker, candidates=options.candidates)


def _murre_rewriter(index: TableIndex, inputs: Inputs, output: RemovalOutput) -> QueryRewriter:
    if inputs.rewriter is not None:
        return inputs.rewriter(output)
    if inputs.llm is None:
        return LexicalRemovalRewriter(index.catalog, output)
    if output != "tabulated":
        raise ValueError("an LLM rewriter writes tabulated queries only (no murre-no-tabulation)")
    return MurreRewriter(index.catalog, inputs.llm)


def _murre(index: TableIndex, inputs: Inputs, options: MurreOptions) -> BaseRetriever:
    rewriter = _murre_rewriter(index, inputs, options.output)
    if options.reference:
        return MurreRetriever.reference(index, rewriter, beam=options.beam, hops=options.hops)
    return MurreRetriever(
        index,
        rewriter,
        beam=options.beam,
        hops=options.hops,
        per_beam=options.per_beam,
        removal=options.removal,
        early_stop=options.early_stop,
    )


def _route(index: TableIndex, inputs: Inputs, options: RouteOptions) -> BaseRetriever:
    return DatabaseRouter(
        _first(index, inputs),
        databases=options.databases,
        depth=options.depth,
        column_depth=options.column_depth,
        rank_constant=options.rank_constant,
        per_database=options.per_database,
        others=options.others,
    )


def _closure(index: TableIndex, inputs: Inputs, options: ClosureOptions) -> BaseRetriever:
    if inputs.first is None:
        raise _missing("closure", "a retriever to add bridge tables to")
    return JoinClosure(
        inputs.first, budget=options.budget, max_between=options.max_between, mode=options.mode
    )


def _murre_variant(
    name: str, label: str, description: str, options: Callable[[], MurreOptions]
) -> Method[Any]:
    return Method(
        name,
        description,
        "first",
        options,
        _murre,
        uses=frozenset({"llm"}),
        offline="offline lexical removal rewrites each hop's question",
        label=label,
        prefix=True,
        score="the best score of a beam path that contains the table",
    )


_JOIN_OFFLINE = "each question is its own only sub-query"
_RRF = "reciprocal-rank fusion of the fused rankings"

_ALL: list[Method[Any]] = [
    Method(
        "single-hop",
        "dense cosine",
        "first",
        NoOptions,
        _single_hop,
        columns=True,
        prefix=True,
        score="cosine similarity with the question",
    ),
    Method(
        "hybrid",
        "dense fused with BM25 (RRF)",
        "first",
        NoOptions,
        _hybrid,
        score=_RRF,
    ),
    Method("bm25", "lexical only", "first", NoOptions, _bm25, prefix=True, score="BM25 score"),
    Method(
        "reverse",
        "Reverse Engineering: schema and generated-question similarity, dynamic alpha",
        "first",
        ReverseOptions,
        _reverse,
        needs=frozenset({"questions"}),
        uses=frozenset({"reranker"}),
        prefix=True,
        score="Reverse Engineering's fused score of schema and generated-question similarity "
        "(with a reranker: its logit for the top candidates)",
    ),
    Method(
        "crush",
        "CRUSH4SQL: collective selection of columns near an LLM-hallucinated schema",
        "first",
        CrushOptions,
        _crush,
        needs=frozenset({"llm"}),
        columns=True,
        column_index=True,
        score="the collective-selection score of the table's first selected column "
        "(tables in selection order)",
    ),
    Method(
        "adaptive",
        "ATR: sliding-window re-ranking of first-stage candidates with a window scorer, "
        "cut at its threshold (an adaptive number of tables)",
        "select",
        AdaptiveOptions,
        _adaptive,
        uses=frozenset({"reranker"}),
        offline="the training-free similarity scorer scores the windows",
        takes_first=True,
        prefix=True,
        score="the scorer's logit in the window that placed the table (comparable only within "
        "a window: the order is the ranking; the cut is where the threshold fell)",
    ),
    Method(
        "greedy-join",
        "greedy join-aware re-ranking of a first stage's top candidates (dense by default) with "
        "per-question decompositions",
        "select",
        GreedyJoinOptions,
        _greedy_join,
        needs=frozenset({"join-graph"}),
        uses=frozenset({"decomposition"}),
        offline=_JOIN_OFFLINE,
        columns=True,
        takes_first=True,
        score="its gain in the join-aware objective when picked (greedy: gains need not "
        "fall with rank)",
    ),
    Method(
        "jar-exact",
        "the JAR objective solved exactly over a first stage's top candidates (dense by default)",
        "select",
        JarExactOptions,
        _jar_exact,
        needs=frozenset({"join-graph"}),
        uses=frozenset({"decomposition"}),
        offline=_JOIN_OFFLINE,
        columns=True,
        takes_first=True,
        score="its own contribution to the JAR objective of the selected set",
    ),
    _murre_variant(
        "murre", "MURRE", "MURRE multi-hop beam search with removal rewrites", MurreOptions
    ),
    _murre_variant(
        "murre-no-removal",
        "MURRE w/o removal",
        "MURRE ablation: the next query is the question and the path",
        lambda: MurreOptions(removal=False),
    ),
    _murre_variant(
        "murre-no-tabulation",
        "MURRE w/o tabulation",
        "MURRE ablation: rewrites as plain words (offline removal only)",
        lambda: MurreOptions(output="terms"),
    ),
    _murre_variant(
        "murre-no-early-stop",
        "MURRE w/o early stop",
        "MURRE ablation: every beam runs all hops",
        lambda: MurreOptions(early_stop=False),
    ),
    _murre_variant(
        "murre-reference",
        "MURRE (reference-code options)",
        "MURRE with the reference code's options",
        lambda: MurreOptions(reference=True),
    ),
    Method(
        "route",
        "database routing: the tables of the database with the most rank votes from a first "
        "stage's tables and columns (dense by default) come first",
        "first",
        RouteOptions,
        _route,
        columns=True,
        takes_first=True,
        column_index=True,
        score="the first stage's score; the routed database's tables come first whatever "
        "their score",
    ),
    Method(
        "rerank",
        "the stage before's top candidates re-ranked by a cross-encoder's logit",
        "post",
        RerankOptions,
        _rerank,
        needs=frozenset({"reranker"}),
        cli=False,
        takes_first=True,
        score="the reranker's logit for the question and the table's text",
    ),
    Method(
        "closure",
        "bridge tables on shortest foreign-key paths between the tables found",
        "post",
        ClosureOptions,
        _closure,
        cli=False,
        takes_first=True,
        score="the stage before's score; a bridge table gets the score of the selected table "
        "it links",
    ),
]


class NativeMethodRetriever(_NativeRetriever):
    """The retriever of a method defined in C++ (``bindings/methods/``), built with ``options``
    (a dataclass made from the method's C++ defaults) over ``first`` when it takes one."""

    def __init__(
        self,
        method: _core.NativeMethod,
        index: TableIndex,
        options: object,
        first: BaseRetriever | None = None,
    ) -> None:
        self.index = index
        self.ranks_columns = method.columns
        self._core = method.build(
            index.core,
            index._embed,
            index.embedder_name,
            None if first is None else first._stage(),
            asdict(cast(Any, options)),
            index.values,
        )


def _native(method: _core.NativeMethod) -> Method[Any]:
    """A registry entry for a method defined in C++: its options dataclass has the C++
    defaults; a ``select`` or ``post`` method takes the stage before it (dense by default), and
    a ``post`` method is a pipeline stage only (not in ``--method``, as ``closure``)."""
    options = make_dataclass(
        "".join(w.title() for w in method.name.split("-")) + "Options",
        [(k, type(v), field(default=v)) for k, v in method.defaults().items()],
        frozen=True,
    )
    if method.kind not in ("first", "select", "post"):
        raise ImportError(f"native method {method.name}: unknown stage kind '{method.kind}'")
    takes_first = method.kind != "first"

    def build(index: TableIndex, inputs: Inputs, opts: object) -> BaseRetriever:
        first = _first(index, inputs) if takes_first else None
        return NativeMethodRetriever(method, index, opts, first)

    kind = cast(StageKind, method.kind)
    return Method(
        method.name,
        method.description,
        kind,
        options,
        build,
        columns=method.columns,
        needs=frozenset(cast(Need, n) for n in method.needs),
        cli=kind != "post",
        takes_first=takes_first,
        column_index=method.column_index,
        score=method.score or Method.score,
    )


# By name: the order in which C++ files register their methods at load is unspecified (it
# changed between the optimised and the sanitized build), and lists and docs must not depend on it.
_ALL += [_native(m) for m in sorted(_core.native_methods(), key=lambda m: m.name)]

#: Every method by name, in the order the command line and the docs list them.
METHODS: dict[str, Method[Any]] = {m.name: m for m in _ALL}
if len(METHODS) != len(_ALL):
    raise ImportError("two retrieval methods share a name (tabret.methods)")


def method_names() -> list[str]:
    """The names ``tabret eval --method`` and ``tabret query --method`` accept."""
    return [m.name for m in METHODS.values() if m.cli]


def _help(m: Method[Any]) -> str:
    wants = [f"{what}: {_names(n)}" for what, n in (("needs", m.needs), ("uses", m.uses)) if n]
    return f"{m.name}: {m.description}" + (f" [{'; '.join(wants)}]" if wants else "")


def method_help() -> str:
    """``--method`` help: each name with its description and what it needs or uses."""
    return "; ".join(_help(m) for m in METHODS.values() if m.cli)


def stage(name: str, kind: StageKind | None = None) -> Method[Any]:
    """The method called ``name`` (a pipeline stage), checked to be of ``kind`` when given."""
    try:
        method = METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method '{name}' (one of: {', '.join(METHODS)})") from None
    if kind is not None and method.kind != kind:
        raise ValueError(f"'{name}' is a {method.kind} stage, not a {kind} stage")
    return method


def _parse(spec: str) -> list[list[Method[Any]]]:
    """``"a + b > c > d"`` as [[a, b], [c], [d]]: stages, each of fused alternatives, checked:
    no empty name, only the first stage fused, every later stage taking the one before."""
    stages = [[n.strip() for n in part.split("+")] for part in spec.split(">")]
    if not all(all(names) for names in stages):
        raise ValueError(f"pipeline '{spec}': a stage name is empty")
    if any(len(names) > 1 for names in stages[1:]):
        raise ValueError(f"pipeline '{spec}': only the first stage fuses ('a + b > …')")
    methods = [[stage(n) for n in names] for names in stages]
    for (m,) in methods[1:]:
        if not m.takes_first:
            raise ValueError(f"pipeline '{spec}': {m.name} cannot follow another stage")
    return methods


def score_meaning(spec: str) -> str:
    """What the scores of the method or pipeline ``spec`` are: those of its last stage, or of
    the rank fusion when that is a fused first stage."""
    stages = _parse(spec)
    return _RRF if len(stages[-1]) > 1 else stages[-1][0].score


def is_prefix(spec: str) -> bool:
    """Whether the method or pipeline ``spec`` answers at k with the first k tables of its
    answer at any larger k: every stage is a :attr:`Method.prefix` method and the first stage
    fuses nothing (a fusion asks each stage for ``max(k, depth)`` tables, so its order at k can
    change with k)."""
    stages = _parse(spec)
    return all(len(s) == 1 and s[0].prefix for s in stages)


def pipeline_stages(spec: str) -> list[Method[Any]]:
    """The methods of a pipeline spelled ``"first > stage > stage"`` (the first stage may fuse
    several: ``"hybrid + reverse > greedy-join"``); each stage after the first must take one
    (:meth:`Method.after`)."""
    return [m for methods in _parse(spec) for m in methods]


def compose(
    spec: str, build: Callable[[Method[Any], BaseRetriever | None], BaseRetriever]
) -> Pipeline:
    """The pipeline ``spec``, each stage made by ``build(method, stage before or None)``; fused
    first stages are combined by reciprocal rank (:class:`~tabret.pipeline.Fusion`)."""
    first, *rest = _parse(spec)
    retriever = reduce(Fusion, [build(m, None) for m in first])
    for (m,) in rest:
        retriever = build(m, retriever)
    names = [" + ".join(m.name for m in first), *(m.name for (m,) in rest)]
    return Pipeline(retriever, name=" > ".join(names))


def build_pipeline(spec: str, index: TableIndex, inputs: Inputs = Inputs()) -> Pipeline:
    """The pipeline ``spec`` over ``index``, each stage with its default options, e.g.
    ``build_pipeline("reverse > greedy-join > closure", index, Inputs(graph=g, llm=llm,
    questions=q))``."""
    return compose(spec, lambda m, first: m.build(index, replace(inputs, first=first), m.options()))


def _names(needs: frozenset[Need]) -> str:
    return ", ".join(sorted(needs)) or "-"


def method_table() -> str:
    """The Markdown table of docs/choosing-a-method.md (tests check the two agree)."""
    rows = ["| method | stage | needs | uses when given | what it does |", "|---|---|---|---|---|"]
    rows += [
        f"| `{m.name}` | {m.kind} | {_names(m.needs)} | {_names(m.uses)} | {m.description} |"
        for m in METHODS.values()
    ]
    return "\n".join(rows) + "\n"
