"""The method registry is the one list of methods: the CLI and the docs read it."""

from __future__ import annotations

import argparse
import inspect
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest

from tabret import HashingEmbedder, TableIndex, demo_catalog
from tabret.adaptive import AdaptiveRetriever, SimilarityScorer
from tabret.cli import build_parser
from tabret.crush import CrushRetriever
from tabret.join import GreedyJoinRetriever, JarExactRetriever, JoinClosure
from tabret.methods import (
    METHODS,
    AdaptiveOptions,
    ClosureOptions,
    CrushOptions,
    GreedyJoinOptions,
    Inputs,
    JarExactOptions,
    MurreOptions,
    method_names,
    method_table,
    stage,
)
from tabret.murre import MurreRetriever

DOC = Path(__file__).parents[2] / "docs" / "choosing-a-method.md"


def _subparser(command: str) -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser: argparse.ArgumentParser = sub.choices[command]
    return parser


def _choices(command: str, dest: str) -> list[str]:
    action = next(a for a in _subparser(command)._actions if a.dest == dest)
    return list(action.choices or [])


@pytest.mark.parametrize("command", ["eval", "query"])
def test_cli_method_choices_are_the_registry(command: str) -> None:
    assert _choices(command, "method") == method_names()
    assert method_names() == [m.name for m in METHODS.values() if m.kind != "post"]


def test_docs_method_table_is_the_registry() -> None:
    text = DOC.read_text("utf-8")
    start = text.index("<!-- methods table: tabret.methods.method_table() -->\n")
    table = text[text.index("\n", start) + 1 : text.index("<!-- end of methods table -->")]
    assert table == method_table(), (
        "docs/choosing-a-method.md is out of date: paste tabret.methods.method_table()"
    )
    assert [line.split("`")[1] for line in table.splitlines()[2:]] == list(METHODS)


def _defaults(cls: type) -> dict[str, object]:
    return {
        name: p.default
        for name, p in inspect.signature(cls).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


@pytest.mark.parametrize(
    ("options", "constructors"),
    [
        (CrushOptions(), [CrushRetriever]),
        (GreedyJoinOptions(), [GreedyJoinRetriever]),
        (JarExactOptions(), [JarExactRetriever]),
        (AdaptiveOptions(), [SimilarityScorer, AdaptiveRetriever]),
        (MurreOptions(), [MurreRetriever]),
        (ClosureOptions(), [JoinClosure]),
    ],
)
def test_option_defaults_are_the_constructors(options: object, constructors: list[type]) -> None:
    defaults: dict[str, object] = {}
    for cls in constructors:
        defaults |= _defaults(cls)
    shared = {k: v for k, v in vars(options).items() if k in defaults}
    assert shared
    assert shared == {k: defaults[k] for k in shared}


def test_eval_defaults_come_from_the_registry() -> None:
    args = build_parser().parse_args(["eval", "--benchmark", "demo"])
    assert args.threshold_rule == [AdaptiveOptions().rule]
    assert args.threshold_value == AdaptiveOptions().value
    assert args.join_candidates == GreedyJoinOptions().candidates
    assert args.beam == MurreOptions().beam


def test_query_keeps_its_fitted_adaptive_cut() -> None:
    args = build_parser().parse_args(["query", "idx", "q"])
    assert (args.threshold_rule, args.threshold) == ("zscore", 1.25)


def test_stages_by_name() -> None:
    assert stage("reverse", "first").name == "reverse"
    assert stage("greedy-join", "select").kind == "select"
    assert stage("closure", "post").kind == "post"
    with pytest.raises(ValueError, match="is a first stage, not a post stage"):
        stage("reverse", "post")
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        stage("nope")


def test_every_method_builds_offline() -> None:
    from tabret.join import JoinGraph
    from tabret.llms import CallableLLM
    from tabret.reverse import GeneratedQuestions
    from tabret.values import ValueIndex

    index = TableIndex.build(demo_catalog(), HashingEmbedder(), progress=False)
    index = index.with_values(ValueIndex(index.catalog))
    inputs = Inputs(
        llm=CallableLLM(lambda prompts: [""] * len(prompts), "empty"),
        graph=JoinGraph.build(index),
        questions=GeneratedQuestions.build(index),
        first=METHODS["bm25"].build(index, Inputs(), METHODS["bm25"].options()),
        reranker=lambda pairs: [float(len(text)) for _, text in pairs],
    )
    for method in METHODS.values():
        if method.name in ("murre-no-tabulation", "crush"):
            continue  # an LLM rewriter writes tabulated queries; crush parses real probes
        retriever = method.build(index, inputs, method.options())
        assert len(retriever.retrieve(["which singers sang in concerts?"], 3)) == 1


def test_missing_needs_are_named() -> None:
    index = TableIndex.build(demo_catalog(), HashingEmbedder(), progress=False)
    with pytest.raises(ValueError, match="greedy-join needs a join graph"):
        METHODS["greedy-join"].build(index, Inputs(), GreedyJoinOptions())
    with pytest.raises(ValueError, match="reverse needs generated questions"):
        METHODS["reverse"].build(index, Inputs(), METHODS["reverse"].options())


def test_stages_chain_where_they_take_the_stage_before() -> None:
    index = TableIndex.build(demo_catalog(), HashingEmbedder(), progress=False)
    first = stage("bm25", "first").build(index, Inputs(), METHODS["bm25"].options())
    adaptive = stage("adaptive", "select")
    chained = adaptive.after(first, index, Inputs(), adaptive.options())
    assert isinstance(chained, AdaptiveRetriever)
    assert chained.first_stage is first
    closure = stage("closure", "post")
    assert isinstance(closure.after(chained, index, Inputs(), closure.options()), JoinClosure)
    bm25 = stage("bm25", "first")
    with pytest.raises(ValueError, match="bm25 cannot follow another stage"):
        bm25.after(first, index, Inputs(), bm25.options())


def _defaulted_keywords(fn: Any) -> list[str]:
    """The names of the parameters with a default of a compiled function, in order: the names
    only, from the signature pybind11 writes first in its ``__doc__``."""
    line = (fn.__doc__ or "").strip().splitlines()[0]
    names = list(re.finditer(r"(?:\(|, )(\w+): ", line))
    ends = [m.start() for m in names[1:]] + [line.rindex(")")]
    return [m[1] for m, end in zip(names, ends, strict=True) if " = " in line[m.end() : end]]


def _compiled(native: str) -> tuple[Any, dict[str, object]]:
    """A compiled constructor (``"X"``) or static method (``"X.build"``) and its defaults."""
    from tabret import _core

    cls, _, method = native.partition(".")
    c = getattr(_core, cls)
    if method:
        return getattr(c, method), getattr(c, f"{method}_defaults")
    return c.__init__, c.defaults


#: Each Python wrapper and the compiled constructor (or static method) it calls.
_WRAPPED = [
    ("tabret.index.DenseRetriever", "DenseRetriever"),
    ("tabret.crush.CrushRetriever", "CrushRetriever"),
    ("tabret.murre.MurreRetriever", "MurreRetriever"),
    ("tabret.murre.MurreRetriever.reference", "MurreRetriever"),
    ("tabret.reverse.ReverseRetriever", "ReverseRetriever"),
    ("tabret.join.GreedyJoinRetriever", "GreedyJoinRetriever"),
    ("tabret.join.JarExactRetriever", "JarExactRetriever"),
    ("tabret.join.JoinClosure", "JoinClosure"),
    ("tabret.join.JoinGraph.build", "JoinGraph.build"),
]


@pytest.mark.parametrize(
    "native",
    sorted(
        {n for _, n in _WRAPPED}
        | {"FusedRetriever", "LexicalRemovalRewriter", "CoverageRemovalRewriter"}
    ),
)
def test_compiled_defaults_are_the_constructor_keywords(native: str) -> None:
    """``_core.X.defaults`` holds every defaulted keyword of the compiled constructor, in order,
    and nothing else (it is made from the arguments the constructor is bound with)."""
    fn, defaults = _compiled(native)
    assert defaults
    assert list(defaults) == _defaulted_keywords(fn)


@pytest.mark.parametrize(("wrapper", "native"), _WRAPPED)
def test_python_wrappers_read_the_native_defaults(wrapper: str, native: str) -> None:
    """Where a Python wrapper and the compiled class it wraps both have an option, the wrapper's
    default is the compiled one, read from ``_core.X.defaults``: the very object, not an equal
    literal (a weights preset names the compiled weights: see
    test_weight_presets_name_the_native_defaults; ``progress`` is a bar or a callable in Python
    and a callable or None in ``_core``)."""
    python = inspect.signature(pkgutil.resolve_name(wrapper)).parameters
    _, defaults = _compiled(native)
    shared = [n for n in defaults if n in python and n not in ("weights", "progress")]
    assert shared, f"{wrapper} shares no option with _core.{native}"
    assert {n: python[n].default for n in shared} == {n: defaults[n] for n in shared}
    assert [n for n in shared if python[n].default is not defaults[n]] == []


def test_weight_presets_name_the_native_defaults() -> None:
    """The join retrievers' ``weights`` default is the name of the preset whose weights are the
    compiled defaults."""
    from tabret import _core
    from tabret.join import GREEDY_WEIGHTS, JAR_WEIGHTS

    greedy = inspect.signature(GreedyJoinRetriever).parameters["weights"].default
    g = _core.GreedyJoinRetriever.defaults
    assert GREEDY_WEIGHTS[greedy] == pytest.approx((g["coarse"], g["coverage"], g["join"]))
    jar = inspect.signature(JarExactRetriever).parameters["weights"].default
    assert JAR_WEIGHTS[jar] == pytest.approx(_core.JarExactRetriever.defaults["weights"])


def test_every_method_says_what_its_scores_are() -> None:
    """`tabret query` prints each method's score legend: none may fall back to the generic one,
    and a pipeline's legend is its last stage's (or the fusion's)."""
    from tabret.methods import METHODS, Method, score_meaning

    generic = Method.score
    assert [name for name, m in METHODS.items() if m.score == generic] == []
    assert METHODS["column-max"].score.startswith("the best cosine")  # from the C++ registration
    assert score_meaning("single-hop > adaptive") == METHODS["adaptive"].score
    assert score_meaning("hybrid + reverse > greedy-join") == METHODS["greedy-join"].score
    assert score_meaning("single-hop + bm25") == METHODS["hybrid"].score
