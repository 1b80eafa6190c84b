"""tabret.training and ``tabret train``: fine-tuning on the demo catalog's questions, with a tiny
randomly initialised model (one 32-wide BERT layer, all-MiniLM-L6-v2's tokenizer) so that a
training run takes seconds."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

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


def test_the_cli_trains_and_eval_refuses_its_databases(
    tiny_model: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    train, _ = _split()
    catalog = tmp_path / "catalog.json"
    train.catalog.save_json(catalog)
    questions = tmp_path / "log.jsonl"
    cat = train.catalog
    questions.write_text(
        "".join(
            json.dumps(
                {
                    "question": q.question,
                    "gold_tables": [cat.qualified_name(t) for t in q.gold_tables],
                }
            )
            + "\n"
            for q in train.questions
        )
    )
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
