from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

import tabret
from tabret.benchmarks import load_benchmark
from tabret.crush import CrushRetriever
from tabret.embedders import HashingEmbedder
from tabret.eval import evaluate
from tabret.index import TableIndex
from tabret.rewriting import RewriteRequest, RewriteResult

HASHING = HashingEmbedder()
ANSWER = "ward(ward_id, ward_name, bed_count), physician(physician_id, first_name)"


@pytest.fixture(scope="module")
def demo_index() -> TableIndex:
    return TableIndex.build(tabret.demo_catalog(), HASHING, progress=False)


class ScriptedLLM:
    """Answers every prompt with the same hallucinated schema; records each batch."""

    name = "scripted"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def __call__(self, prompts: list[str]) -> list[str]:
        self.batches.append(prompts)
        return [ANSWER] * len(prompts)


def test_scripted_llm_probes_budget_and_trace(demo_index: TableIndex) -> None:
    llm = ScriptedLLM()
    retriever = CrushRetriever(demo_index, llm=llm)
    questions = ["How many beds does the maternity ward have?", "Who treats patients?"]
    results = retriever.retrieve(questions, 5)
    assert [len(b) for b in llm.batches] == [2]  # one LLM call per batch
    assert "Question: How many beds does the maternity ward have?" in llm.batches[0][0]
    probes = {
        "ward.ward_id",
        "ward.ward_name",
        "ward.bed_count",
        "physician.physician_id",
        "physician.first_name",
    }
    for r in results:
        assert len(r.columns) == 5
        assert len(r.trace) == 5
        assert {s.query for s in r.trace} <= probes
        tables = list(dict.fromkeys(c.name.rsplit(".", 1)[0] for c in r.columns))
        assert r.table_names == tables
        assert [s.table for s in r.trace] == [c.name.rsplit(".", 1)[0] for c in r.columns]
    assert "hospital.ward.bed_count" in [c.name for c in results[0].columns]
    # Prefix-consistent: the budget-3 selection starts the budget-10 selection.
    small, large = retriever.retrieve(questions[0], 3), retriever.retrieve(questions[0], 10)
    assert [c.id for c in large.columns[:3]] == [c.id for c in small.columns]


@pytest.mark.parametrize(
    "options",
    [
        {"objective": "round_robin"},
        {"candidates": "global", "candidate_depth": 20},
        {"probe": "alone", "entropy": False, "connectivity": False},
    ],
)
def test_options(demo_index: TableIndex, options: dict[str, object]) -> None:
    r = CrushRetriever(demo_index, llm=ScriptedLLM(), **options).retrieve("beds per ward?", 4)  # type: ignore[arg-type]
    assert len(r.columns) == 4
    if options.get("objective") == "round_robin":
        assert len({s.query for s in r.trace}) == 4  # every pick from a different probe


def test_python_rewriter_and_its_errors(demo_index: TableIndex) -> None:
    class Rewriter:
        def rewrite(self, requests: Sequence[RewriteRequest | str]) -> list[RewriteResult]:
            return [RewriteResult(queries=["medication.brand_name"]) for _ in requests]

    r = CrushRetriever(demo_index, Rewriter()).retrieve(["x", "y"], 2, k_columns=3)
    assert [len(x.columns) for x in r] == [3, 3]
    assert r[0].columns[0].name == "hospital.medication.brand_name"

    class Broken:
        def rewrite(self, requests: list[RewriteRequest]) -> list[str]:
            return ["not a result"]

    with pytest.raises(TypeError, match="not a RewriteResult"):
        CrushRetriever(demo_index, Broken()).retrieve("x", 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="exactly one"):
        CrushRetriever(demo_index)
    with pytest.raises(ValueError, match="objective must be"):
        CrushRetriever(demo_index, llm=ScriptedLLM(), objective="best")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k must be positive"):
        CrushRetriever(demo_index, llm=ScriptedLLM()).retrieve("x", 0)
    no_columns = TableIndex.build(tabret.demo_catalog(), HASHING, columns=False, progress=False)
    with pytest.raises(tabret.Error, match="column vectors"):
        CrushRetriever(no_columns, llm=ScriptedLLM())


def test_recorded_probes_on_bird_union_crush(data_dir: Path) -> None:
    from tabret.llms import ReplayLLM
    from tabret.rewriting import CrushRewriter

    bench = load_benchmark("bird-union-crush", data_dir)
    assert len(bench.questions) == 1468  # of 1,534: the questions CRUSH's file covers
    bench.questions[:] = bench.questions[:40]
    index = TableIndex.build(bench.catalog, HASHING, progress=False)
    retriever = CrushRetriever(index, CrushRewriter(ReplayLLM.crush(data_dir)))
    res = evaluate(
        lambda qs, k: retriever.retrieve(qs, k, k_columns=k),
        bench,
        (3, 20),
        level="column",
        progress=False,
    )
    assert res.recall[20] > res.recall[3] > 10


def test_per_budget_evaluation_equals_one_run_per_budget(demo_index: TableIndex) -> None:
    from tabret.benchmarks import load_benchmark as load
    from tabret.crush import evaluate_per_budget

    bench = load("demo")
    retriever = CrushRetriever(demo_index, llm=ScriptedLLM())
    cut = evaluate_per_budget(retriever, bench, (2, 4, 8), progress=False)
    for k in (2, 4, 8):
        alone = evaluate(retriever.retrieve, bench, (k,), progress=False)
        assert cut.recall[k] == alone.recall[k]
        assert cut.complete_recall[k] == alone.complete_recall[k]
        assert cut.mean_tables[k] == alone.mean_tables[k]
    assert cut.mean_tables[2] <= 2


def test_cli_refuses_crush_without_recorded_probes(capsys: pytest.CaptureFixture[str]) -> None:
    from tabret.cli import main

    argv = ["eval", "--benchmark", "demo", "--method", "crush", "--embedder", "hashing"]
    assert main([*argv, "--quiet"]) == 1
    assert "no recorded probes for benchmark 'demo'" in capsys.readouterr().err
