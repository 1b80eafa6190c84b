"""A result at k depends on the question, the index, the pipeline and k only
(docs/retrieval.md, "A result at k depends on k only"): the methods registered with
``Method.prefix`` answer at k with the first k of their answer at a larger k, and
``tabret eval`` scores the same at k = 3 and 5 whether or not k = 50 is also asked for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tabret import HashingEmbedder, TableIndex
from tabret.benchmarks import Benchmark, load_benchmark
from tabret.cli import main
from tabret.join import JoinGraph
from tabret.methods import METHODS, Inputs, is_prefix, method_names
from tabret.results import Retrieval
from tabret.reverse import GeneratedQuestions

QUESTIONS = 120  # SpiderUnion's first questions: every database, 876 tables
# The pipelines the docs show (README, choosing-a-method.md, results.md).
PIPELINES = [
    "hybrid + reverse > greedy-join",
    "hybrid + reverse > greedy-join > closure",
    "hybrid > greedy-join",
    "hybrid > jar-exact",
    "hybrid > route",
    "column-max > greedy-join",
    "column-max + reverse > greedy-join",
    "column-max + bm25 > route",
    "hybrid + values > greedy-join",
]
# crush evaluates itself from one selection at the largest budget (test_crush.py's
# test_per_budget_evaluation_equals_one_run_per_budget); SpiderUnion has no recorded probes.
METHODS_RUN = [m for m in method_names() if m != "crush"]


@pytest.fixture(scope="module")
def spider(data_dir: Path) -> tuple[Benchmark, TableIndex, Inputs]:
    bench = load_benchmark("spider-union", data_dir)
    bench.questions[:] = bench.questions[:QUESTIONS]
    index = TableIndex.build(
        bench.catalog, HashingEmbedder(), kind="exact", columns=True, progress=False
    )
    inputs = Inputs(graph=JoinGraph.build(index), questions=GeneratedQuestions.build(index))
    return bench, index, inputs


def _ids(res: Retrieval) -> list[int]:
    return [t.id for t in res.tables]


@pytest.mark.parametrize("name", [m.name for m in METHODS.values() if m.prefix])
def test_prefix_methods_answer_with_the_first_k_of_a_larger_k(
    spider: tuple[Benchmark, TableIndex, Inputs], name: str
) -> None:
    bench, index, inputs = spider
    method = METHODS[name]
    retriever = method.build(index, inputs, method.options())
    questions = [q.question for q in bench.questions]
    large = retriever.retrieve(questions, 50)
    for k in (1, 3, 5, 10, 20):
        for res, big in zip(retriever.retrieve(questions, k), large, strict=True):
            # an adaptive result ranks every candidate (its cut apart): its first k count
            got = _ids(res)[:k] if res.cut is not None else _ids(res)
            assert got == _ids(big)[:k], (name, k, res.question)


def test_prefix_pipelines_are_those_of_prefix_stages() -> None:
    assert is_prefix("reverse > adaptive")
    assert not is_prefix("hybrid + reverse > greedy-join")
    assert not is_prefix("single-hop + bm25")  # a fusion asks each for max(k, depth)
    assert not is_prefix("greedy-join")


def _eval(data_dir: Path, out: Path, ks: list[str]) -> dict[str, dict[str, Any]]:
    """Every method and pipeline evaluated in one `tabret eval`, by row label."""
    argv = ["eval", "--benchmark", "spider-union", "--data-dir", str(data_dir)]
    argv += ["--first", str(QUESTIONS), "--embedder", "hashing", "--quiet", "--output", str(out)]
    argv += ["--method", *METHODS_RUN, "--pipeline", *PIPELINES, "--k", *ks]
    argv += ["--values", "--values-cache", str(out.parent / "spider-db")]  # for `values`
    assert main(argv) == 0
    return {row["method"]: row for row in json.loads(out.read_text())}


def test_eval_at_k_does_not_depend_on_the_other_k(data_dir: Path, tmp_path: Path) -> None:
    small = _eval(data_dir, tmp_path / "small.json", ["3", "5"])
    large = _eval(data_dir, tmp_path / "large.json", ["3", "5", "50"])
    assert small.keys() == large.keys()
    assert len(small) == len(METHODS_RUN) + len(PIPELINES)
    for label, row in small.items():
        other = large[label]
        for k in ("3", "5"):
            answers = [q["answers"][k] for q in row["per_question"]]
            assert answers == [q["answers"][k] for q in other["per_question"]], (label, k)
            assert row["complete_recall"][k] == other["complete_recall"][k], (label, k)
            assert row["mean_tables"][k] == other["mean_tables"][k], (label, k)


@pytest.mark.parametrize("pipeline", ["hybrid + reverse > greedy-join", "hybrid > route"])
def test_query_returns_what_eval_scored(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], pipeline: str
) -> None:
    """`tabret query --k 5` answers each question with the tables `tabret eval` scored at k = 5
    in a run that also asked for 50, for pipelines whose choice changes with k."""
    out = tmp_path / "eval.json"
    argv = ["eval", "--benchmark", "spider-union", "--data-dir", str(data_dir), "--quiet"]
    argv += ["--first", str(QUESTIONS), "--embedder", "hashing", "--llm", "offline"]
    argv += ["--pipeline", pipeline, "--k", "5", "50", "--output", str(out)]
    argv += ["--no-value-stats"]  # the join graph of the catalog alone, as the index's
    assert main(argv) == 0
    (row,) = json.loads(out.read_text())
    scored = [a["answers"]["5"] for a in row["per_question"]]
    index = tmp_path / "spider.idx"
    source = str(data_dir / "spider" / "tables.json")
    argv = ["index", "spider", source, str(index), "--embedder", "hashing", "--questions"]
    assert main([*argv, "--join-graph", "--quiet"]) == 0
    questions = tmp_path / "questions.txt"
    bench = load_benchmark("spider-union", data_dir)
    questions.write_text("".join(q.question + "\n" for q in bench.questions[:QUESTIONS]))
    capsys.readouterr()
    argv = ["query", str(index), "--file", str(questions), "--k", "5", "--json", "--quiet"]
    assert main([*argv, "--pipeline", pipeline]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [[t["id"] for t in r["tables"]] for r in got] == scored
