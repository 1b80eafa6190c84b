"""The default pipeline adapted to what an index holds, and ``tabret tune`` (tabret.tuning):
the choice is cross-validated, saved in the index directory, run by ``tabret query`` and
``tabret serve``, kept across re-saves of the same catalog, and refused or set aside where it
no longer fits."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tabret import _core
from tabret.benchmarks import questions_benchmark
from tabret.cli import main
from tabret.datasets import _demo_file
from tabret.index import load_saved
from tabret.methods import Inputs
from tabret.tuning import (
    POOLS,
    Choice,
    candidates,
    default_choice,
    load_default,
    resolve,
    saved,
    tune,
)


@pytest.fixture(scope="module")
def demo_questions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's 36 questions in the ``--questions`` format."""
    path = tmp_path_factory.mktemp("questions") / "demo.jsonl"
    rows = json.loads(_demo_file("questions.json").read_text())
    path.write_text(
        "".join(
            json.dumps({"question": q["question"], "gold_tables": q["gold_tables"]}) + "\n"
            for q in rows
        )
    )
    return path


def _index(path: Path, *extra: str) -> Path:
    source = str(_demo_file("catalog.json"))
    assert (
        main(["index", "json", source, str(path), "--embedder", "hashing", "--quiet", *extra]) == 0
    )
    return path


def test_the_default_follows_what_the_index_holds() -> None:
    assert default_choice(graph=True, questions=True, values=False) == Choice(
        "hybrid + reverse > greedy-join"
    )
    assert default_choice(graph=True, questions=True, values=True).pipeline == (
        "hybrid + reverse + values > greedy-join"
    )
    assert default_choice(graph=False, questions=False, values=False).pipeline == (
        "hybrid > expand"
    )
    assert default_choice(graph=False, questions=True, values=True).pipeline == (
        "hybrid + reverse + values > expand"
    )


def test_candidates_start_with_the_default_and_repeat_nothing() -> None:
    full = candidates(graph=True, questions=True, values=True)
    assert full[0] == default_choice(graph=True, questions=True, values=True)
    assert len(full) == len(set(full)) == 8 * (2 + len(POOLS))
    bare = candidates(graph=False, questions=False, values=False)
    assert [c.pipeline for c in bare] == [
        "hybrid > expand",
        "hybrid",
        "single-hop",
        "single-hop > expand",
    ]
    assert all(
        "reverse" not in c.pipeline for c in candidates(graph=True, questions=False, values=False)
    )


def test_a_choice_is_checked_when_made_and_read() -> None:
    with pytest.raises(ValueError, match="has no stage 'jar-exact'"):
        Choice("hybrid > greedy-join", (("jar-exact", "candidates", 50),))
    with pytest.raises(ValueError, match="greedy-join has no option 'pool'"):
        Choice("hybrid > greedy-join", (("greedy-join", "pool", 50),))
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        Choice("nope")
    choice = Choice("hybrid > greedy-join", (("greedy-join", "candidates", 50),))
    assert Choice.from_json(choice.to_json(), "x") == choice
    assert choice.label == "hybrid > greedy-join (greedy-join candidates=50)"
    bads: list[object] = [["hybrid"], {"options": []}, {"pipeline": "hybrid", "options": [1]}]
    for bad in bads:
        with pytest.raises(_core.SchemaError, match="idx: the tuned pipeline is not valid"):
            Choice.from_json(bad, "idx")
    with pytest.raises(_core.SchemaError, match="unknown method 'nope'"):
        saved(json.dumps({"pipeline": "nope"}), "idx")


def test_a_tuned_choice_that_cannot_run_gives_way_to_the_default() -> None:
    tuned = Choice("hybrid + values")
    assert resolve(tuned, graph=True, questions=True, values=True) == (tuned, None)
    choice, note = resolve(tuned, graph=True, questions=True, values=False)
    assert choice == default_choice(graph=True, questions=True, values=False)
    assert note is not None
    assert "needs values" in note


def test_tune_cross_validates_and_keeps_the_default_among_equals(
    tmp_path: Path, demo_questions: Path
) -> None:
    idx = _index(tmp_path / "idx")
    index, graph, questions = load_saved(idx)
    assert graph is not None
    assert questions is not None
    bench = questions_benchmark(demo_questions, index.catalog)
    inputs = Inputs(graph=graph, questions=questions)
    seen: list[str] = []
    report = tune(index, bench, inputs, k=5, progress=seen.append)
    tried = candidates(graph=True, questions=True, values=False)
    assert [t.choice for t in report.trials] == tried
    assert len(seen) == len(tried)
    assert seen[0].startswith(f"[1/{len(tried)}] hybrid + reverse")
    # every trial is what the pipeline scores on its own
    for trial in report.trials[:3]:
        res = trial.choice.build(index, inputs).retrieve([q.question for q in bench.questions], 5)
        pairs = zip(bench.questions, res, strict=True)
        complete = [set(q.gold_tables) <= {t.id for t in r.tables} for q, r in pairs]
        assert trial.complete_recall == pytest.approx(100 * sum(complete) / len(complete))
    best = max(report.trials, key=lambda t: (t.complete_recall, t.recall, -t.mean_tables))
    assert (report.best.complete_recall, report.best.recall) == (best.complete_recall, best.recall)
    expected = (
        report.best.choice
        if report.cross_validated > report.default.complete_recall
        else report.default.choice
    )
    assert report.chosen == expected
    assert "chosen: " + report.chosen.label in report.format()
    # Without a join graph or generated questions: hybrid and single-hop, alone and expanded.
    one = tune(index, bench, Inputs(), k=5, folds=3)
    assert [t.choice.pipeline for t in one.trials] == [
        "hybrid > expand",
        "hybrid",
        "single-hop",
        "single-hop > expand",
    ]
    picked = max(one.trials, key=lambda t: (t.complete_recall, t.recall, -t.mean_tables))
    assert one.best.choice == picked.choice
    with pytest.raises(ValueError, match="at least 10 questions"):
        tune(index, replace(bench, questions=bench.questions[:9]), inputs)
    with pytest.raises(ValueError, match="folds must be between 2"):
        tune(index, bench, inputs, folds=1)


def test_tune_embeds_each_question_once(demo_questions: Path) -> None:
    """Tune runs 20 pipelines over the same questions; each question reaches the embedder once
    (TableIndex.with_question_memo), where one pipeline alone embeds it more than once. (That
    the trials are what the pipelines score without the memo is the test above.)"""
    from tabret import HashingEmbedder, demo_catalog
    from tabret.index import TableIndex
    from tabret.join import JoinGraph
    from tabret.reverse import GeneratedQuestions

    hashing = HashingEmbedder()
    embedded: list[str] = []

    class Counting:
        name = hashing.name

        def embed(self, texts: list[str]) -> object:
            embedded.extend(texts)
            return hashing.embed(texts)

    index = TableIndex.build(demo_catalog(), Counting(), progress=False)
    inputs = Inputs(
        graph=JoinGraph.build(index, progress=False),
        questions=GeneratedQuestions.build(index, progress=False),
    )
    bench = questions_benchmark(demo_questions, index.catalog)
    texts = {q.question for q in bench.questions}
    embedded.clear()
    report = tune(index, bench, inputs, k=5)
    assert len(report.trials) == 20
    asked = [t for t in embedded if t in texts]
    assert sorted(asked) == sorted(texts)  # every question once, not once per pipeline
    embedded.clear()
    report.trials[0].choice.build(index, inputs).retrieve(sorted(texts), 5)
    # without the memo one run of the default embeds them more than once (stage by stage)
    assert len([t for t in embedded if t in texts]) > len(texts)


def test_tabret_tune_saves_what_query_and_serve_then_run(
    tmp_path: Path, demo_questions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    idx = _index(tmp_path / "idx")
    capsys.readouterr()
    question = "Which doctors treated patients in the cardiology ward?"
    assert main(["tune", str(idx), "--questions", str(demo_questions), "--quiet", "--dry-run"]) == 0
    assert "(dry run: nothing saved)" in capsys.readouterr().out
    assert _core.load_index(idx)[4] is None
    assert main(["tune", str(idx), "--questions", str(demo_questions), "--quiet", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["saved"]
    assert report["questions"] == 36
    assert report["tried"] == 20
    chosen = Choice.from_json(report, "report")
    assert saved(_core.load_index(idx)[4], str(idx)) == chosen

    assert main(["query", str(idx), question, "--k", "3"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"(tuned pipeline: {chosen.label})"  # even where it is the default
    index, graph, questions = load_saved(idx)
    expected = chosen.build(index, Inputs(graph=graph, questions=questions))
    assert [line.split()[-1] for line in printed[3:]] == expected.retrieve(question, 3).table_names
    assert (
        load_default(idx).retrieve(question, 3).table_names
        == expected.retrieve(question, 3).table_names
    )

    # Re-indexing the same catalog keeps it; another catalog refuses to drop it.
    _index(idx)
    assert saved(_core.load_index(idx)[4], str(idx)) == chosen
    other = tmp_path / "other.json"
    cat = json.loads(_demo_file("catalog.json").read_text())
    cat["databases"] = cat["databases"][:2]
    other.write_text(json.dumps(cat))
    capsys.readouterr()
    assert main(["index", "json", str(other), str(idx), "--embedder", "hashing", "--quiet"]) == 1
    assert "tuned pipeline" in capsys.readouterr().err


def test_serve_runs_the_tuned_pipeline(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from tabret.serve.service import IndexService

    idx = _index(tmp_path / "idx")
    index, _, _ = load_saved(idx)
    choice = Choice("hybrid > greedy-join", (("greedy-join", "candidates", 50),))
    _core.save_tuning(idx, index.core, json.dumps(choice.to_json()))
    service = IndexService(str(idx))
    assert service.status().default_pipeline == choice.label
    assert service.find_tables("Which wards have beds?", 3).pipeline == choice.label


def test_a_tuned_choice_the_directory_cannot_run_is_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    idx = _index(tmp_path / "idx")
    index, _, _ = load_saved(idx)
    _core.save_tuning(idx, index.core, json.dumps({"pipeline": "hybrid + values"}))
    capsys.readouterr()
    assert main(["query", str(idx), "Which wards have beds?"]) == 0
    out, err = capsys.readouterr()
    assert "needs values" in err
    assert "re-run `tabret tune`" in err
    assert out.startswith("(default pipeline: hybrid + reverse > greedy-join)")
    with pytest.warns(UserWarning, match="needs values"):
        load_default(idx)
    _core.save_tuning(idx, index.core, json.dumps({"pipeline": "nope"}))
    assert main(["query", str(idx), "Which wards have beds?"]) == 1
    assert "the tuned pipeline is not valid" in capsys.readouterr().err
    with pytest.raises(ValueError, match="must be a JSON object"):
        _core.save_tuning(idx, index.core, "[1]")


def test_index_saves_the_graph_and_questions_unless_told_not_to(tmp_path: Path) -> None:
    _, graph, questions = load_saved(_index(tmp_path / "a"))
    assert graph is not None
    assert questions is not None
    _, graph, questions = load_saved(
        _index(tmp_path / "b", "--join-graph", "none", "--no-questions")
    )
    assert graph is None
    assert questions is None


def test_tabret_tune_refuses_bad_questions_before_loading_the_index(
    tmp_path: Path, demo_questions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "no-index")  # never read: the file fails first
    few = tmp_path / "few.jsonl"
    few.write_text("".join(demo_questions.read_text().splitlines(keepends=True)[:9]))
    assert main(["tune", missing, "--questions", str(few)]) == 1
    assert "few.jsonl: 9 questions; tune needs at least 10" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text(demo_questions.read_text() + '{"question": "q", "gold_tables": []}\n')
    assert main(["tune", missing, "--questions", str(bad)]) == 1
    assert "bad.jsonl:37: 'gold_tables' must be a non-empty list" in capsys.readouterr().err
    idx = _index(tmp_path / "idx")
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(demo_questions.read_text() + '{"question": "q", "gold_tables": ["a.b"]}\n')
    capsys.readouterr()
    assert main(["tune", str(idx), "--questions", str(unknown), "--quiet"]) == 1
    assert "unknown.jsonl:37: unknown table 'a.b'" in capsys.readouterr().err
    assert main(["tune", str(idx), "--questions", str(demo_questions), "--folds", "1"]) == 1
    assert "--folds must be at least 2" in capsys.readouterr().err
    assert _core.load_index(idx)[4] is None  # nothing saved by a refused run


def test_index_scores_column_pairs_only_where_that_is_quick(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tabret import demo_catalog
    from tabret import join as join_module

    cat = demo_catalog()
    per_db: dict[int, int] = {}
    for t in range(cat.num_tables):
        per_db[cat.table(t).database] = per_db.get(cat.table(t).database, 0) + len(
            cat.table(t).columns
        )
    pairs = sum(n * (n - 1) // 2 for n in per_db.values())
    assert join_module.column_pairs(cat) == pairs
    assert join_module.automatic_graph(cat) == "compatibility"
    compatible = load_saved(_index(tmp_path / "a"))[1]
    monkeypatch.setattr(join_module, "AUTOMATIC_PAIRS", pairs - 1)
    assert join_module.automatic_graph(cat) == "keys"
    capsys.readouterr()
    keys = load_saved(_index(tmp_path / "b"))[1]
    assert f"join graph: foreign keys only ({pairs:,} column pairs" in capsys.readouterr().out
    assert compatible is not None
    assert keys is not None
    assert 0 < len(keys) <= cat.num_foreign_keys < len(compatible)  # table pairs keyed
