"""Embedding backends side by side (issue 51 item 3): texts per second and retrieval quality.

One run, one process, the same model (all-MiniLM-L6-v2, or ``--model``) run four ways:

- *PyTorch*: ``SentenceTransformerEmbedder(backend="torch")``, sentence-transformers' ``encode``;
- *ONNX fp32*: ``backend="onnx"``, the model exported in memory and run by ONNX Runtime with
  length-sorted batches and as many threads as the process may use;
- *ONNX int8*: that graph quantised by ONNX Runtime's ``quantize_dynamic`` (int8 weights,
  MatMul only, per channel), run the same way;
- *model2vec*: a static model distilled from it by model2vec's ``distill_from_model`` (each
  vocabulary token embedded once by the model, PCA to 256 dimensions, Zipf weights; a text's
  vector is the mean of its tokens' vectors, no transformer when embedding).

Speed: ``--texts`` (6,000) column texts of Spider 2.0-lite, sampled with ``--seed`` from the
index ``tabret index`` builds (the hashing embedder makes the texts; only texts are used), each
backend timed ``--rounds`` times in turn after a warm-up, the best round reported (the machine
is shared), and the median milliseconds to embed one question alone (what a query pays).
Quality against PyTorch: the mean overlap of the top-10 columns of those texts for
the first 50 Spider 2.0-lite questions, the largest difference of a vector, and single-hop
complete recall at k = 3 / 5 / 10 / 20 on SpiderUnion, BirdUnion (table and column vectors) and
Spider 2.0-lite (table vectors only: its 532 thousand columns take an hour to embed). Also the
minutes all distinct Spider 2.0-lite column texts would take at each measured rate (a
projection, said as one).

Writes build/bench/embedders.json; progress on stderr.

Run: ``python -m bench.embedders [--texts 6000] [--rounds 2] [--quality spider-union ...]``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import machine, write_json
from bench.tune_holdout import KS, log, score
from tabret import HashingEmbedder
from tabret._onnx import OnnxModel
from tabret.benchmarks import load_benchmark
from tabret.embedders import DEFAULT_MODEL, SentenceTransformerEmbedder
from tabret.index import TableIndex
from tabret.methods import Inputs
from tabret.tuning import Choice

FloatArray = Any


class Int8Embedder:
    """``fp32``'s ONNX graph quantised to int8 weights by ONNX Runtime, under its own name (its
    vectors differ from the model's)."""

    def __init__(self, fp32: SentenceTransformerEmbedder) -> None:
        from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore

        assert fp32._onnx is not None
        with tempfile.TemporaryDirectory() as tmp:
            src, dst = Path(tmp, "fp32.onnx"), Path(tmp, "int8.onnx")
            src.write_bytes(fp32._onnx.graph)
            quantize_dynamic(
                src,
                dst,
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
            )
            graph = dst.read_bytes()
        self._onnx = OnnxModel(fp32._model, graph=graph)
        self.name = f"{fp32.name} (int8)"

    def embed(self, texts: list[str]) -> FloatArray:
        return self._onnx.embed(texts, 64)


class StaticEmbedder:
    """A model2vec static model distilled from ``model``'s transformer and tokenizer, under its
    own name (its vectors differ from the model's, in 256 dimensions)."""

    def __init__(self, model: SentenceTransformerEmbedder) -> None:
        # model2vec comes with the bench extra, not the test extra mypy runs under in CI
        from model2vec.distill import distill_from_model  # type: ignore[import-not-found,unused-ignore]

        start = time.perf_counter()
        module = model._model[0]
        self._static = distill_from_model(
            model=module.auto_model, tokenizer=module.tokenizer, pca_dims=256
        )
        self.distill_seconds = round(time.perf_counter() - start, 1)
        self.name = f"{model.name} (model2vec)"

    def embed(self, texts: list[str]) -> FloatArray:
        return self._static.encode(list(texts), use_multiprocessing=False)


def unit(rows: FloatArray) -> FloatArray:
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def sample_texts(n: int, seed: int) -> tuple[list[str], int, int, list[str]]:
    """``n`` Spider 2.0-lite column texts, how many column texts there are and how many are
    distinct, and the first 50 questions."""
    bench = load_benchmark("spider2-lite")
    log(f"spider2-lite: column texts of {bench.catalog!r} (hashing index, texts only)")
    texts = TableIndex.build(bench.catalog, HashingEmbedder(), progress=False).core.column_texts()
    chosen = random.Random(seed).sample(texts, min(n, len(texts)))
    return chosen, len(texts), len(set(texts)), [q.question for q in bench.questions[:50]]


def speed(embedders: dict[str, Any], texts: list[str], rounds: int) -> dict[str, dict[str, Any]]:
    """Texts per second of each embedder on ``texts`` (best of ``rounds``), and its vectors."""
    out: dict[str, dict[str, Any]] = {label: {"seconds": []} for label in embedders}
    for embedder in embedders.values():
        embedder.embed(texts[:64])  # warm-up: first-call allocations, lazy initialisation
    for r in range(rounds):
        for label, embedder in embedders.items():
            start = time.perf_counter()
            vectors = embedder.embed(texts)
            seconds = time.perf_counter() - start
            out[label]["seconds"].append(round(seconds, 2))
            out[label]["vectors"] = unit(vectors)
            log(f"round {r + 1}: {label} {len(texts) / seconds:.1f} texts/s")
    for row in out.values():
        row["texts_per_s"] = round(len(texts) / min(row["seconds"]), 1)
    return out


def latency(
    measured: dict[str, dict[str, Any]], embedders: dict[str, Any], questions: list[str]
) -> None:
    """Adds each embedder's median milliseconds to embed one question alone (what a query pays)."""
    for label, embedder in embedders.items():
        times = []
        for question in questions:
            start = time.perf_counter()
            embedder.embed([question])
            times.append(time.perf_counter() - start)
        measured[label]["question_ms"] = round(1000 * float(np.median(times)), 2)


def overlap(
    measured: dict[str, dict[str, Any]], embedders: dict[str, Any], questions: list[str]
) -> None:
    """Adds each embedder's top-10 overlap with the first (the reference) and its largest
    vector difference from it."""
    top: dict[str, Any] = {}
    for label, embedder in embedders.items():
        scores = unit(embedder.embed(questions)) @ measured[label]["vectors"].T
        top[label] = np.argsort(-scores, axis=1, kind="stable")[:, :10]
    ref = next(iter(embedders))
    for label, row in measured.items():
        shared = [len(set(a) & set(b)) for a, b in zip(top[label], top[ref], strict=True)]
        row["top10_overlap"] = round(float(np.mean(shared)), 2)
        row["identical_top10"] = int(
            sum(bool((a == b).all()) for a, b in zip(top[label], top[ref], strict=True))
        )
        same_shape = row["vectors"].shape == measured[ref]["vectors"].shape
        row["max_abs_diff"] = (
            float(np.abs(row["vectors"] - measured[ref]["vectors"]).max()) if same_shape else None
        )


def quality(name: str, embedders: dict[str, Any]) -> list[dict[str, Any]]:
    """Single-hop complete recall on benchmark ``name`` with each embedder (Spider 2.0-lite:
    table vectors only)."""
    bench = load_benchmark(name)
    rows = []
    for label, embedder in embedders.items():
        start = time.perf_counter()
        index = TableIndex.build(
            bench.catalog, embedder, progress=False, columns=name != "spider2-lite"
        )
        seconds = time.perf_counter() - start
        result = score(Choice("single-hop"), index, Inputs(), bench)
        rows.append(
            {
                "benchmark": name,
                "backend": label,
                "index_seconds": round(seconds, 1),
                "questions": result.questions,
                "complete_recall": {k: round(result.complete_recall[k], 1) for k in KS},
            }
        )
        log(f"{name}: {label} indexed in {seconds:.0f} s, k=5 {result.complete_recall[5]:.1f}")
    return rows


def diff(value: float | None) -> str:
    return "—" if value is None else f"{value:.1e}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--texts", type=int, default=6000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quality", nargs="*", default=["spider-union", "bird-union", "spider2-lite"])
    args = p.parse_args()
    texts, columns, distinct, questions = sample_texts(args.texts, args.seed)
    torch = SentenceTransformerEmbedder(args.model, backend="torch", progress=False)
    fp32 = SentenceTransformerEmbedder(args.model, backend="onnx", progress=False)
    embedders: dict[str, Any] = {
        "PyTorch": torch,
        "ONNX fp32": fp32,
        "ONNX int8": Int8Embedder(fp32),
        "model2vec": StaticEmbedder(fp32),
    }
    measured = speed(embedders, texts, args.rounds)
    overlap(measured, embedders, questions)
    latency(measured, embedders, questions)
    for row in measured.values():
        del row["vectors"]
        row["projected_minutes_all_columns"] = round(distinct / row["texts_per_s"] / 60, 1)
    log(f"spider2-lite: {columns} column texts, {distinct} distinct")
    recall = [row for name in args.quality for row in quality(name, embedders)]
    print(
        "| backend | texts/s | ms per question | top-10 overlap | identical top-10 | max diff "
        "| all columns, min |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, row in measured.items():
        print(
            f"| {label} | {row['texts_per_s']} | {row['question_ms']} | {row['top10_overlap']} "
            f"| {row['identical_top10']}/50 | {diff(row['max_abs_diff'])} "
            f"| {row['projected_minutes_all_columns']} (projected) |"
        )
    print("\n| benchmark | backend | index s | CR@3 | CR@5 | CR@10 | CR@20 |")
    print("|---|---|---|---|---|---|---|")
    for r in recall:
        cr = " | ".join(str(r["complete_recall"][k]) for k in KS)
        print(f"| {r['benchmark']} | {r['backend']} | {r['index_seconds']} | {cr} |")
    path = write_json(
        "embedders.json",
        {
            "machine": machine(),
            "model": args.model,
            "texts": len(texts),
            "spider2_lite_columns": columns,
            "spider2_lite_distinct_column_texts": distinct,
            "speed": measured,
            "model2vec_distill_seconds": embedders["model2vec"].distill_seconds,
            "quality": recall,
        },
    )
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
