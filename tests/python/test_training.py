"""tabret.training and ``tabret train``: fine-tuning on the demo catalog's questions, with a tiny
randomly initialised model (one 32-wide BERT layer, all-MiniLM-L6-v2's tokenizer) so that a
training run takes seconds."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("datasets")
pytest.importorskip("accelerate")

import tabret
from interrupting import assert_stops_on_sigint
from tabret.benchmarks import Benchmark, load_benchmark
from tabret.cli import main
from tabret.eval import evaluate
from tabret.training import (
    MANIFEST,
    TrainingOptions,
    check_unseen,
    read_manifest,
    train_cross_encoder,
    train_embedder,
)

#: Enough to move a random model on the demo's questions, a few seconds on two cores.
FAST = TrainingOptions(batch_size=8, learning_rate=2e-3, epochs=8, max_seq_length=64)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import AutoTokenizer, BertConfig, BertModel

    from tabret.embedders import DEFAULT_MODEL, _model_path

    root = tmp_path_factory.mktemp("tiny")
    tokenizer = AutoTokenizer.from_pretrained(_model_path(DEFAULT_MODEL))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
    )
    torch.manual_seed(0)
    BertModel(config).save_pretrained(root / "bert")
    tokenizer.save_pretrained(root / "bert")
    bert = Transformer(str(root / "bert"), max_seq_length=64)
    model = SentenceTransformer(modules=[bert, Pooling(32, "mean")], device="cpu")
    model.save(str(root / "model"))
    return str(root / "model")


def _split() -> tuple[Benchmark, Benchmark]:
    """The demo's questions, those of its first databases (about half the questions) and the
    rest."""
    bench = load_benchmark("demo")
    dbs = sorted({q.db for q in bench.questions})
    first = set(dbs[: len(dbs) // 2])
    return (
        replace(bench, questions=[q for q in bench.questions if q.db in first]),
        replace(bench, questions=[q for q in bench.questions if q.db not in first]),
    )


def _recall(model: str, bench: Benchmark) -> float:
    index = tabret.TableIndex.build(bench.catalog, model, progress=False)
    result = evaluate(tabret.DenseRetriever(index).retrieve, bench, [3], progress=False)
    return result.recall[3]


def test_training_fits_its_questions_and_writes_a_model_an_index_loads(
    tiny_model: str, tmp_path: Path
) -> None:
    train, _ = _split()
    before = _recall(tiny_model, train)
    out = tmp_path / "trained"
    done = train_embedder(train, out, replace_base(FAST, tiny_model), progress=False)
    assert done.stopped == "completed"
    assert done.steps > 0
    assert done.pairs == sum(len(q.gold_tables) for q in train.questions)
    after = _recall(str(out), train)
    assert after >= before + 20, (before, after)  # the training questions are learned
    manifest = read_manifest(out)
    assert manifest is not None
    assert manifest["databases"] == sorted({q.db for q in train.questions})
    assert manifest["stopped"] == "completed"
    assert manifest["options"]["seed"] == 0
    text = (out / MANIFEST).read_text()
    assert all(q.question not in text for q in train.questions)  # digests, not questions
    index = tabret.TableIndex.build(train.catalog, str(out), progress=False)
    assert index.embedder_name == str(out.resolve())  # loads from any working directory
    assert not [p for p in tmp_path.iterdir() if p.name != "trained"]  # no temporary left


def replace_base(options: TrainingOptions, model: str, **changes: object) -> TrainingOptions:
    return replace(options, base_model=model, **changes)  # type: ignore[arg-type]


def test_a_time_budget_stops_training_and_keeps_the_model(tiny_model: str, tmp_path: Path) -> None:
    train, _ = _split()
    options = replace_base(FAST, tiny_model, time_budget=1e-6)
    done = train_embedder(train, tmp_path / "m", options, progress=False)
    assert (done.stopped, done.steps) == ("time budget", 1)
    assert read_manifest(tmp_path / "m") is not None


def test_the_output_directory_is_replaced_only_when_tabret_trained_it(
    tiny_model: str, tmp_path: Path
) -> None:
    train, _ = _split()
    options = replace_base(FAST, tiny_model, max_steps=1)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    with pytest.raises(tabret.FileError, match="not a model tabret trained"):
        train_embedder(train, theirs, options, progress=False)
    assert (theirs / "notes.txt").read_text() == "mine"
    ours = tmp_path / "ours"
    train_embedder(train, ours, options, progress=False)
    with pytest.raises(tabret.FileError, match="replace=True"):
        train_embedder(train, ours, options, progress=False)
    done = train_embedder(train, ours, replace(options, seed=1), replace=True, progress=False)
    assert done.stopped == "max steps"
    manifest = read_manifest(ours)
    assert manifest is not None
    assert manifest["options"]["seed"] == 1


def test_evaluating_on_training_databases_is_refused(tiny_model: str, tmp_path: Path) -> None:
    train, held_out = _split()
    out = tmp_path / "m"
    train_embedder(train, out, replace_base(FAST, tiny_model, max_steps=1), progress=False)
    check_unseen(out, held_out, within_database=False)  # other databases: allowed
    with pytest.raises(ValueError, match="trained on questions of"):
        check_unseen(out, train, within_database=False)
    with pytest.raises(ValueError, match="were training questions"):
        check_unseen(out, train, within_database=True)
    reworded = [replace(q, question=q.question + " (again, worded apart)") for q in train.questions]
    check_unseen(out, replace(train, questions=reworded), within_database=True)
    check_unseen(tiny_model, train, within_database=False)  # not trained by tabret: no record


def _questions_file(bench: Benchmark, path: Path) -> Path:
    """``bench``'s questions in the ``--questions`` format."""
    cat = bench.catalog
    path.write_text(
        "".join(
            json.dumps(
                {
                    "question": q.question,
                    "gold_tables": [cat.qualified_name(t) for t in q.gold_tables],
                }
            )
            + "\n"
            for q in bench.questions
        )
    )
    return path


def _cli_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The demo catalog's JSON, and the training and held-out halves' questions files."""
    train, held_out = _split()
    catalog = tmp_path / "catalog.json"
    train.catalog.save_json(catalog)
    log = _questions_file(train, tmp_path / "log.jsonl")
    return catalog, log, _questions_file(held_out, tmp_path / "rest.jsonl")


def test_the_cli_trains_a_reranker_that_eval_uses(
    tiny_model: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog, log, rest = _cli_files(tmp_path)
    out = tmp_path / "ce"
    common = ["--catalog", str(catalog), "--quiet"]
    args = ["train", str(out), "--cross-encoder", "--questions", str(log), *common]
    assert main([*args, "--base-model", tiny_model, "--max-steps", "2"]) == 0
    assert f"--reranker {out}" in capsys.readouterr().out
    run = ["eval", *common, "--embedder", tiny_model, "--reranker", str(out), "--k", "3"]
    assert main([*run, "--questions", str(rest), "--pipeline", "single-hop > rerank"]) == 0
    assert "single-hop > rerank" in capsys.readouterr().out
    assert main([*run, "--questions", str(rest), "--method", "adaptive"]) == 0
    assert "threshold logit 0" in capsys.readouterr().out
    assert main([*run, "--questions", str(log), "--pipeline", "single-hop > rerank"]) == 1
    assert "trained on questions of" in capsys.readouterr().err


def test_the_cli_trains_and_eval_refuses_its_databases(
    tiny_model: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog, questions, _ = _cli_files(tmp_path)
    out = tmp_path / "model"
    args = ["--questions", str(questions), "--catalog", str(catalog), "--quiet"]
    rc = main(["train", str(out), *args, "--base-model", tiny_model, "--max-steps", "2"])
    assert rc == 0, capsys.readouterr().err
    assert "2 steps" in capsys.readouterr().out
    assert main(["eval", *args, "--embedder", str(out)]) == 1
    assert "trained on questions of" in capsys.readouterr().err
    assert main(["train", str(out), *args, "--base-model", tiny_model, "--max-steps", "1"]) == 1
    assert "a trained model is there" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q"}\n')
    assert (
        main(["train", str(tmp_path / "x"), "--questions", str(bad), "--catalog", str(catalog)])
        == 1
    )
    assert "bad.jsonl:1" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def _rerank_recall(model: Path, bench: Benchmark, embedder: str) -> float:
    """Recall at 3 of every table of ``bench`` re-ranked by the cross-encoder in ``model``."""
    from tabret.rerank import CrossEncoderScorer, RerankRetriever

    index = tabret.TableIndex.build(bench.catalog, embedder, progress=False)
    everything = len(bench.catalog.tables)
    rerank = RerankRetriever(
        tabret.DenseRetriever(index), CrossEncoderScorer(model), candidates=everything
    )
    return evaluate(rerank.retrieve, bench, [3], progress=False).recall[3]


def test_a_cross_encoder_learns_its_questions_and_loads_as_a_reranker(
    tiny_model: str, tmp_path: Path
) -> None:
    from tabret.rerank import CrossEncoderScorer

    train, _ = _split()
    options = replace_base(FAST, tiny_model, learning_rate=1e-2)
    once = tmp_path / "once"
    train_cross_encoder(train, once, replace(options, max_steps=1), progress=False)
    out = tmp_path / "ce"
    done = train_cross_encoder(train, out, options, progress=False)
    assert done.stopped == "completed"
    manifest = read_manifest(out)
    assert manifest is not None
    assert manifest["kind"] == "cross-encoder"
    before, after = (_rerank_recall(m, train, tiny_model) for m in (once, out))
    assert after >= before + 10, (before, after)  # measured: 1.9 -> 17.6
    scorer = CrossEncoderScorer(out)
    assert scorer.format == FAST.format
    logits = scorer([("a question", "a table"), ("another", "text")])
    assert len(logits) == 2
    assert all(isinstance(x, float) for x in logits)
    assert scorer([]) == []


def test_a_reranker_must_be_a_cross_encoder_directory(tiny_model: str, tmp_path: Path) -> None:
    from tabret.rerank import CrossEncoderScorer

    train, _ = _split()
    embedder = tmp_path / "embedder"
    train_embedder(train, embedder, replace_base(FAST, tiny_model, max_steps=1), progress=False)
    with pytest.raises(ValueError, match="trained a bi-encoder there, not a cross-encoder"):
        CrossEncoderScorer(embedder)
    with pytest.raises(tabret.FileError, match="not a model directory"):
        CrossEncoderScorer(tmp_path / "missing")


def test_serve_runs_rerank_pipelines_with_its_reranker(
    tiny_model: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``tabret serve --reranker DIR``: the scorer of a find_tables call's ``… > rerank``,
    loaded once and only for a pipeline that reranks; a directory that is not a cross-encoder
    fails before the index is read."""
    import tabret.rerank
    from tabret.cli._common import load_reranker
    from tabret.cli.query import MethodChoice
    from tabret.rerank import CrossEncoderScorer
    from tabret.serve.service import IndexService

    loads: list[object] = []

    class Counted(CrossEncoderScorer):
        def __init__(self, model: str, **options: Any) -> None:
            loads.append(model)
            super().__init__(model, **options)

    monkeypatch.setattr(tabret.rerank, "CrossEncoderScorer", Counted)
    load_reranker.cache_clear()

    train, held_out = _split()
    ce = tmp_path / "ce"
    train_cross_encoder(train, ce, replace_base(FAST, tiny_model, max_steps=1), progress=False)
    idx = tmp_path / "idx"
    tabret.TableIndex.build(held_out.catalog, tiny_model, progress=False).save(idx)
    service = IndexService(str(idx), default=MethodChoice(reranker=str(ce)), embedder=tiny_model)
    try:
        question = held_out.questions[0].question
        plain = service.find_tables(question, 3, pipeline="single-hop")
        assert all(t.why[0].step == "dense" for t in plain.tables)
        assert loads == []  # no stage reranks: the model is not loaded
        for _ in range(2):
            found = service.find_tables(question, 3, pipeline="single-hop > rerank")
            assert len(found.tables) == 3
            assert all(t.why[0].step == "rerank" for t in found.tables)
        assert loads == [str(ce)]  # once for both calls
    finally:
        service.close()
        load_reranker.cache_clear()
    missing = tmp_path / "missing"
    assert main(["serve", str(tmp_path / "no-index"), "--reranker", str(missing)]) == 1
    assert "not a model directory" in capsys.readouterr().err


_LONG_TRAINING = """
import sys
from dataclasses import replace
from pathlib import Path
from tabret.benchmarks import load_benchmark
from tabret.training import TrainingOptions, train_embedder
model, out = sys.argv[1], Path(sys.argv[2])
options = TrainingOptions(base_model=model, batch_size=8, epochs=100000, max_seq_length=64)
print("started", flush=True)
try:
    train_embedder(load_benchmark("demo"), out, options, progress=False)
except KeyboardInterrupt:
    left = sorted(p.name for p in out.parent.iterdir())
    print("interrupted" if left == ["keep.txt"] else f"left behind: {left}", flush=True)
    sys.exit(42)
print("finished")
"""


def test_ctrl_c_stops_training_and_writes_nothing(tiny_model: str, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    assert_stops_on_sigint(_LONG_TRAINING, tiny_model, str(tmp_path / "m"), what="training")
    assert (tmp_path / "keep.txt").read_text() == "mine"
