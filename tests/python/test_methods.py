"""The method registry is the one list of methods: the CLI and the docs read it."""

from __future__ import annotations

import argparse
import inspect
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

    index = TableIndex.build(demo_catalog(), HashingEmbedder(), progress=False)
    inputs = Inputs(
        llm=CallableLLM(lambda prompts: [""] * len(prompts), "empty"),
        graph=JoinGraph.build(index),
        questions=GeneratedQuestions.build(index),
        first=METHODS["bm25"].build(index, Inputs(), METHODS["bm25"].options()),
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


def _native_defaults(cls: Any) -> dict[str, object]:
    """The defaults of a compiled class's constructor, from the signature pybind11 writes."""
    import ast

    line = (cls.__init__.__doc__ or "").strip().splitlines()[0]
    tree = ast.parse(f"def f({line[line.index('(') + 1 : line.rindex(')')]}): pass")
    args = tree.body[0].args  # type: ignore[attr-defined]
    names = [a.arg for a in args.args][-len(args.defaults) :] if args.defaults else []
    return {n: ast.literal_eval(d) for n, d in zip(names, args.defaults, strict=True)}


@pytest.mark.parametrize(
    ("wrapper", "native", "presets"),
    [
        ("tabret.index.DenseRetriever", "DenseRetriever", ""),
        ("tabret.crush.CrushRetriever", "CrushRetriever", ""),
        ("tabret.murre.MurreRetriever", "MurreRetriever", ""),
        ("tabret.reverse.ReverseRetriever", "ReverseRetriever", ""),
        ("tabret.join.GreedyJoinRetriever", "GreedyJoinRetriever", ""),
        ("tabret.join.JarExactRetriever", "JarExactRetriever", "JAR_WEIGHTS"),
        ("tabret.join.JoinClosure", "JoinClosure", ""),
    ],
)
def test_python_wrappers_keep_the_native_defaults(wrapper: str, native: str, presets: str) -> None:
    """Where a Python class and the compiled class it wraps both default an option, the two
    defaults agree (the C++ binding's default is the one that would otherwise apply); a named
    preset (``weights="spider"``) stands for its values in the module's ``presets`` table."""
    import importlib

    from tabret import _core

    module, name = wrapper.rsplit(".", 1)
    mod = importlib.import_module(module)
    python = inspect.signature(getattr(mod, name)).parameters
    shared = {n: d for n, d in _native_defaults(getattr(_core, native)).items() if n in python}
    assert shared, f"{wrapper} shares no defaulted option with _core.{native}"
    ours = {n: python[n].default for n in shared}
    if presets:
        table = getattr(mod, presets)
        ours = {
            n: list(table[v]) if isinstance(v, str) and v in table else v for n, v in ours.items()
        }
    assert ours == pytest.approx(shared, rel=1e-6)
