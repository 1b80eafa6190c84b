"""Composed pipelines: any first stage feeds greedy-join and jar-exact, database routing,
post-steps, the spelling of the command line, and what a failing first stage raises."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import tabret
import test_join
from tabret import (
    DatabaseRouter,
    DenseRetriever,
    Fusion,
    GreedyJoinRetriever,
    JoinGraph,
    LexicalRetriever,
    Pipeline,
    TableIndex,
    _core,
)
from tabret.cli import main
from tabret.index import BaseRetriever
from tabret.methods import Inputs, build_pipeline, pipeline_stages
from tabret.pipeline import Closure, GreedyJoin, JarExact, Route
from test_join import _decompose

QUESTION = "names of students and titles of their courses"

#: The fixtures of test_join: the school and shop index and its join graph (built once per
#: module here too).
index, graph = test_join.index, test_join.graph


def test_an_explicit_dense_first_stage_equals_the_builtin_one(
    index: TableIndex, graph: JoinGraph
) -> None:
    builtin = GreedyJoinRetriever(index, graph, _decompose, candidates=4)
    piped = Pipeline(DenseRetriever(index), GreedyJoin(graph, _decompose, candidates=4))
    assert piped.retrieve(QUESTION, 3).table_names == builtin.retrieve(QUESTION, 3).table_names
    assert isinstance(piped, tabret.Retriever)
    assert piped.name == "DenseRetriever > greedy-join"


def test_the_selector_sees_only_the_first_stage_candidates(
    index: TableIndex, graph: JoinGraph
) -> None:
    """BM25 finds few tables for this question; jar-exact chooses among them only, and the
    trace shows both stages."""
    question = "customers"
    lexical = LexicalRetriever(index).retrieve(question, 20)
    piped = Pipeline(LexicalRetriever(index), JarExact(graph, _decompose))
    res = piped.retrieve(question, 3)
    assert set(res.table_names) <= set(lexical.table_names)
    assert len(res.tables) == len(lexical.tables) < 3
    steps = [s.step for s in res.trace]
    assert steps == ["jar-exact"] * len(res.tables) + ["bm25"] * len(res.tables)


def test_routing_ranks_one_database_first(index: TableIndex, graph: JoinGraph) -> None:
    router = DatabaseRouter(DenseRetriever(index))
    res = router.retrieve("student names and course titles", 5)
    assert [t.name.split(".")[0] for t in res.tables[:3]] == ["school"] * 3
    assert res.trace[0].step == "route"
    assert res.trace[0].query == "school"
    # BM25 ranks no columns: the router takes the column votes from a dense column search
    assert DatabaseRouter(LexicalRetriever(index)).retrieve("customers", 2, k_columns=2).columns
    with pytest.raises(tabret.Error, match="databases must be positive"):
        DatabaseRouter(DenseRetriever(index), databases=0)


def test_pipelines_by_name(index: TableIndex, graph: JoinGraph) -> None:
    inputs = Inputs(graph=graph)
    closed = build_pipeline("route > greedy-join > closure", index, inputs)
    objects = Pipeline(
        DatabaseRouter(DenseRetriever(index)),
        GreedyJoin(graph, lambda p: [""] * len(p)),
        [Closure()],
    )
    assert closed.name == "route > greedy-join > closure"
    assert closed.retrieve(QUESTION, 2).table_names == objects.retrieve(QUESTION, 2).table_names
    routed = Pipeline(DenseRetriever(index), post=[Route(databases=2)])
    assert len(routed.retrieve(QUESTION, 4).tables) == 4
    assert [m.name for m in pipeline_stages(" hybrid>jar-exact ")] == ["hybrid", "jar-exact"]
    with pytest.raises(ValueError, match="bm25 cannot follow another stage"):
        pipeline_stages("single-hop > bm25")
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        pipeline_stages("single-hop > nope")
    with pytest.raises(ValueError, match="a stage name is empty"):
        pipeline_stages("single-hop >")
    with pytest.raises(ValueError, match="only the first stage fuses"):
        pipeline_stages("single-hop > greedy-join + jar-exact")
    fused = build_pipeline("single-hop + bm25 > greedy-join", index, inputs)
    assert fused.name == "single-hop + bm25 > greedy-join"
    res = fused.retrieve(QUESTION, 2)
    assert [s.step for s in res.trace][:2] == ["greedy-join"] * 2
    assert "fused" in {s.step for s in res.trace}
    with pytest.raises(ValueError, match="the same index"):
        Fusion(DenseRetriever(index), DenseRetriever(TableIndex.build(index.catalog, "hashing")))
    with pytest.raises(ValueError, match="needs a join graph"):
        build_pipeline("single-hop > greedy-join", index)


class _Broken(BaseRetriever):
    def __init__(self, index: TableIndex, answer: object) -> None:
        self.index = index
        self.answer = answer

    def _raw(self, batch: list[str], k: int, k_columns: int) -> list[_core.Retrieval]:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer  # type: ignore[return-value]


def test_a_failing_first_stage_raises_a_clear_python_error(
    index: TableIndex, graph: JoinGraph
) -> None:
    for stage in (GreedyJoin(graph, _decompose), Route()):
        with pytest.raises(KeyError, match="boom"):
            Pipeline(_Broken(index, KeyError("boom")), stage).retrieve(QUESTION, 2)
        with pytest.raises(TypeError, match="must return a list of Retrieval, got int"):
            Pipeline(_Broken(index, 3), stage).retrieve(QUESTION, 2)
        with pytest.raises(tabret.Error, match="returned 0 results for 1 questions"):
            Pipeline(_Broken(index, []), stage).retrieve(QUESTION, 2)


class _ThroughPython(BaseRetriever):
    """A first stage written in Python that answers as the retriever it wraps."""

    def __init__(self, inner: BaseRetriever) -> None:
        self.inner, self.index, self.ranks_columns = inner, inner.index, inner.ranks_columns

    def _raw(self, batch: list[str], k: int, k_columns: int) -> list[_core.Retrieval]:
        return self.inner._raw(batch, k, k_columns)


class _AdaptiveSubclass(tabret.AdaptiveRetriever):
    """ATR whose subclass overrides ``_raw``: a stage over it must call the override."""

    def _raw(self, batch: list[str], k: int, k_columns: int) -> list[_core.Retrieval]:
        return super()._raw(batch, k, k_columns)


class _Counted(DenseRetriever):
    """A native retriever whose subclass does more in Python: it counts its calls."""

    calls = 0

    def _raw(self, batch: list[str], k: int, k_columns: int) -> list[_core.Retrieval]:
        self.calls += 1
        return super()._raw(batch, k, k_columns)


def _answer(results: list[_core.Retrieval]) -> list[object]:
    return [
        (
            [(t.table, t.score) for t in r.tables],
            [(c.column, c.score) for c in r.columns],
            r.cut,
            [(e.table, e.step, e.query, e.score) for e in r.trace],
        )
        for r in results
    ]


def test_native_stages_compose_natively_and_answer_as_through_python(
    index: TableIndex, graph: JoinGraph
) -> None:
    """A native first stage hands a native stage its C++ retriever (``_stage()``), so the batch
    never comes back to Python between them; the answers, traces included, are those of the
    same stage reached through a Python callable."""
    dense = DenseRetriever(index)
    assert isinstance(dense._stage(), _core.NativeRetriever)
    assert not isinstance(_ThroughPython(dense)._stage(), _core.NativeRetriever)
    questions = [QUESTION, "customers", "how many products does each shop sell"]
    over: dict[str, Callable[[BaseRetriever], BaseRetriever]] = {
        "adaptive": lambda f: tabret.AdaptiveRetriever(f, candidates=6, window=4, retain=2),
        "route": lambda f: DatabaseRouter(f, column_depth=0),
        "fusion": lambda f: Fusion(f, LexicalRetriever(index)),
        "greedy-join": lambda f: GreedyJoinRetriever(index, graph, _decompose, first=f),
    }
    for name, make in over.items():
        native, python = make(dense), make(_ThroughPython(dense))
        for k, k_columns in ((3, 0), (5, 2)):
            if k_columns and not native.ranks_columns:
                continue
            assert _answer(native._raw(questions, k, k_columns)) == _answer(
                python._raw(questions, k, k_columns)
            ), name
    # ATR is a native stage too: a stage over it gets ATR over its first stage, in C++
    adaptive = over["adaptive"](dense)
    assert isinstance(adaptive._stage(), _core.NativeRetriever)
    assert not isinstance(_AdaptiveSubclass(dense)._stage(), _core.NativeRetriever)
    for name in ("route", "fusion", "greedy-join"):
        native, python = over[name](adaptive), over[name](_ThroughPython(adaptive))
        for k in (2, 4):
            assert _answer(native._raw(questions, k, 0)) == _answer(python._raw(questions, k, 0)), (
                name
            )
    # the stage keeps its retriever alive without the Python object
    stage = DenseRetriever(index)._stage()
    assert isinstance(stage, _core.NativeRetriever)
    assert _answer(stage.retrieve(questions, 4)) == _answer(dense._raw(questions, 4, 0))
    # a subclass that overrides _raw is called through Python, its override honoured
    counted = _Counted(index)
    assert not isinstance(counted._stage(), _core.NativeRetriever)
    adaptive = tabret.AdaptiveRetriever(counted, candidates=6, window=4, retain=2)
    assert _answer(adaptive._raw(questions, 1, 0)) == _answer(
        tabret.AdaptiveRetriever(dense, candidates=6, window=4, retain=2)._raw(questions, 1, 0)
    )
    assert counted.calls == 1


def test_cli_query_pipeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tabret import HashingEmbedder, demo_catalog
    from tabret.datasets import _demo_file

    out = tmp_path / "idx"
    source = str(_demo_file("catalog.json"))
    assert (
        main(
            ["index", "json", source, str(out), "--embedder", "hashing", "--quiet", "--join-graph"]
        )
        == 0
    )
    capsys.readouterr()
    question = "Which students enrolled in each course, and who teaches it?"
    spec = "hybrid > route > greedy-join"
    assert main(["query", str(out), question, "--pipeline", spec, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)[0]
    index = TableIndex.build(demo_catalog(), HashingEmbedder(), progress=False)
    want = build_pipeline(spec, index, Inputs(graph=JoinGraph.build(index))).retrieve(question, 5)
    assert [t["name"] for t in got["tables"]] == want.table_names
    assert main(["query", str(out), question, "--pipeline", "single-hop > bm25"]) == 1
    assert "bm25 cannot follow another stage" in capsys.readouterr().err


def test_cli_eval_pipeline(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "--benchmark", "spider-dev-multi", "--embedder", "hashing", "--quiet"]
    args += ["--data-dir", str(data_dir), "--format", "words", "--k", "2", "3"]
    assert (
        main(
            [
                *args,
                "--method",
                "greedy-join",
                "--pipeline",
                "single-hop > greedy-join",
                "bm25 > route > jar-exact",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    rows = [line.split(" | ") for line in out.splitlines() if line.startswith("| spider-dev")]
    assert [r[2] for r in rows] == [
        "greedy-join",
        "single-hop > greedy-join",
        "bm25 > route > jar-exact",
    ]
    assert rows[0][3:7] == rows[1][3:7]  # the same recalls: the dense first stage is built in
    assert main([*args, "--pipeline", "murre > closure"]) == 1
    assert "murre evaluates only alone" in capsys.readouterr().err


class _Public:
    """A first stage written against the public API only: any object of the Retriever shape,
    here answering with what ``inner`` answers (or with ``answer(...)`` when given)."""

    def __init__(
        self,
        inner: tabret.Retriever,
        answer: Callable[[list[tabret.Retrieval]], object] | None = None,
    ) -> None:
        self.inner, self.index, self.answer = inner, inner.index, answer

    def retrieve(self, questions: str | Sequence[str], k: int = 10, *, k_columns: int = 0) -> Any:
        out = self.inner.retrieve(list(questions), k, k_columns=k_columns)
        return out if self.answer is None else self.answer(out)


def test_any_retriever_of_the_public_shape_is_a_first_stage(
    index: TableIndex, graph: JoinGraph
) -> None:
    """What a Python stage returns (tabret.Retrieval: ids, names, trace by name) reaches a
    native selector as the native stage's own answer would: the same tables, scores and trace."""
    questions = [QUESTION, "customers", "how many products does each shop sell"]
    for stage in (GreedyJoin(graph, _decompose), JarExact(graph, _decompose), Route(), Closure()):
        native = Pipeline(DenseRetriever(index), stage)
        public = Pipeline(_Public(DenseRetriever(index)), stage)
        for k in (2, 4):
            assert _answer(public._raw(questions, k, 0)) == _answer(native._raw(questions, k, 0))
    assert Pipeline(_Public(DenseRetriever(index)), GreedyJoin(graph)).name == (
        "_Public > greedy-join"
    )


def test_a_public_first_stage_of_the_wrong_shape_is_named() -> None:
    with pytest.raises(TypeError, match=r"int is not a tabret.Retriever: it needs an `index`"):
        Pipeline(3, Closure())  # type: ignore[arg-type]


def test_what_a_public_first_stage_returns_is_checked(index: TableIndex, graph: JoinGraph) -> None:
    def run(answer: Callable[[list[tabret.Retrieval]], object]) -> None:
        Pipeline(_Public(DenseRetriever(index), answer), GreedyJoin(graph)).retrieve(QUESTION, 2)

    with pytest.raises(TypeError, match=r"_Public.retrieve\(.*\) returned dict for 1 questions"):
        run(lambda out: {})
    with pytest.raises(TypeError, match=r"expected a list of 1 tabret.Retrieval"):
        run(lambda out: out + out)

    def renamed(out: list[tabret.Retrieval]) -> list[tabret.Retrieval]:
        t = out[0].tables[0]
        wrong = tabret.ScoredTable(t.id, "shop.nowhere", t.score)
        return [dataclasses.replace(out[0], tables=[wrong, *out[0].tables[1:]])]

    with pytest.raises(
        ValueError, match=r"_Public.retrieve: table id \d+ is '.*', not 'shop.nowhere'"
    ):
        run(renamed)

    def unknown(out: list[tabret.Retrieval]) -> list[tabret.Retrieval]:
        t = out[0].tables[0]
        gone = tabret.ScoredTable(10_000, t.name, t.score)
        return [dataclasses.replace(out[0], tables=[gone], trace=[])]

    with pytest.raises(ValueError, match=r"table id 10000 .* is not in the catalog"):
        run(unknown)

    def stray(out: list[tabret.Retrieval]) -> list[tabret.Retrieval]:
        step = tabret.TraceStep("shop.nowhere", "mine", QUESTION, 1.0)
        return [dataclasses.replace(out[0], trace=[step])]

    with pytest.raises(ValueError, match=r"names 'shop.nowhere', which is not among the tables"):
        run(stray)
