"""Evaluation: complete recall (k=) and recall (r@) at several k, mean tables returned."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tabret import _core
from tabret.benchmarks import Benchmark
from tabret.results import Retrieval

__all__ = ["EvalResult", "evaluate", "format_table"]

RetrieveFn = Callable[[list[str], int], list[Retrieval]]


@dataclass
class EvalResult:
    benchmark: str
    method: str
    embedder: str
    questions: int
    complete_recall: dict[int, float]  # k -> percent of questions with every gold table in top k
    recall: dict[int, float]  # k -> mean percent of gold tables in top k
    mean_tables: dict[int, float]  # k -> mean number of tables returned at k
    source: str = ""
    command: str = ""
    per_question: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def evaluate(
    retrieve: RetrieveFn,
    bench: Benchmark,
    ks: Sequence[int] = (3, 5, 10, 20),
    *,
    method: str = "",
    embedder: str = "",
    batch_size: int = 128,
    progress: bool = True,
) -> EvalResult:
    """Runs ``retrieve(questions, max(ks))`` over the benchmark in batches and scores it."""
    if not ks or min(ks) <= 0:
        raise ValueError(f"ks must be positive, got {list(ks)}")
    k_max = max(ks)
    results: list[Retrieval] = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=len(bench.questions),
            desc=f"{bench.name} {method}",
            unit="q",
            file=sys.stderr,
            leave=False,
        )
    for start in range(0, len(bench.questions), batch_size):
        batch = bench.questions[start : start + batch_size]
        results.extend(retrieve([q.question for q in batch], k_max))
        if bar is not None:
            bar.update(len(batch))
    if bar is not None:
        bar.close()
    cr: dict[int, float] = {}
    r: dict[int, float] = {}
    mt: dict[int, float] = {}
    n = max(len(bench.questions), 1)
    for k in ks:
        ranked = [[t.id for t in res.tables] for res in results]
        cr[k] = (
            100
            * sum(
                _core.complete_recall_at(rk, list(q.gold_tables), k)
                for rk, q in zip(ranked, bench.questions, strict=True)
            )
            / n
        )
        r[k] = (
            100
            * sum(
                _core.recall_at(rk, list(q.gold_tables), k)
                for rk, q in zip(ranked, bench.questions, strict=True)
            )
            / n
        )
        mt[k] = sum(min(k, len(rk)) for rk in ranked) / n
    per_question = [
        {"id": q.id, "gold": list(q.gold_tables), "ranked": [t.id for t in res.tables]}
        for q, res in zip(bench.questions, results, strict=True)
    ]
    return EvalResult(
        bench.name,
        method,
        embedder,
        len(bench.questions),
        cr,
        r,
        mt,
        bench.source,
        per_question=per_question,
    )


def format_table(results: Sequence[EvalResult]) -> str:
    """A Markdown table with one row per result: k= (complete recall) then r@ (recall)."""
    ks = sorted({k for res in results for k in res.recall})
    head = ["data", "embedder", "method"] + [f"k={k}" for k in ks] + [f"r@{k}" for k in ks]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for res in results:
        cells = [res.benchmark, res.embedder, res.method]
        cells += [f"{res.complete_recall[k]:.1f}" for k in ks]
        cells += [f"{res.recall[k]:.1f}" for k in ks]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
