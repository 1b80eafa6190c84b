"""Where Reverse Engineering's gain comes from: the same table and generated-question vectors
scored four ways (schema only = single-hop, generated question only, fixed alpha = 0.5, and the
method's dynamic alpha), complete recall (k=) and recall (r@) in percent.

    python examples/python/reverse_ablation.py [benchmark [embedder]]

Defaults: the bundled demo benchmark with the hashing embedder (seconds, no data, no model);
docs/results.md uses ``spider-union`` and ``bird-union`` with all-MiniLM-L6-v2.
"""

from __future__ import annotations

import sys

import numpy as np
import numpy.typing as npt

from tabret import _core
from tabret.benchmarks import load_benchmark
from tabret.embedders import HashingEmbedder, SentenceTransformerEmbedder, embed_texts
from tabret.index import TableIndex
from tabret.reverse import GeneratedQuestions

KS = (3, 5, 10, 20)
Scores = npt.NDArray[np.float32]


def unit(m: Scores) -> Scores:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return (m / np.where(norms > 0, norms, 1)).astype(np.float32)


def main(benchmark: str, embedder_name: str) -> None:
    bench = load_benchmark(benchmark)
    embedder = (
        HashingEmbedder()
        if embedder_name == "hashing"
        else SentenceTransformerEmbedder(embedder_name)
    )
    index = TableIndex.build(bench.catalog, embedder, columns=False, progress=False)
    questions = GeneratedQuestions.build(index)
    e_s = index.core.table_vectors
    e_qo = questions.core.vectors
    q = unit(embed_texts(embedder, [x.question for x in bench.questions]))
    r = q @ e_s.T
    r_hat = q @ e_qo.T
    r_c = (r + r_hat) / np.linalg.norm(e_s + e_qo, axis=1)
    alpha = np.maximum(r_c, 1 - r_c)
    variants = {
        "schema only (single-hop)": r,
        "generated question only": r_hat,
        "fixed alpha = 0.5": (r + r_hat) / 2,
        "dynamic alpha (the method)": alpha * r + (1 - alpha) * r_hat,
    }
    gold = [list(x.gold_tables) for x in bench.questions]
    print(f"| {benchmark} | " + " | ".join([f"k={k}" for k in KS] + [f"r@{k}" for k in KS]) + " |")
    print("|---" * (1 + 2 * len(KS)) + "|")
    for name, scores in variants.items():
        ranked = [list(map(int, np.argsort(-row, kind="stable")[: max(KS)])) for row in scores]
        pairs = list(zip(ranked, gold, strict=True))
        cr = [100 * np.mean([_core.complete_recall_at(a, g, k) for a, g in pairs]) for k in KS]
        rc = [100 * np.mean([_core.recall_at(a, g, k) for a, g in pairs]) for k in KS]
        print(f"| {name} | " + " | ".join(f"{v:.1f}" for v in cr + rc) + " |")
    print(f"\nmean alpha over all (question, table) pairs: {alpha.mean():.3f}")


if __name__ == "__main__":
    main(
        sys.argv[1] if len(sys.argv) > 1 else "demo",
        sys.argv[2] if len(sys.argv) > 2 else "hashing",
    )
