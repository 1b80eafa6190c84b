"""Evaluation: complete recall (k=) and recall (r@) at several k, mean items returned.

``level="table"`` scores the ranked tables against ``gold_tables`` (every question);
``level="column"`` scores the ranked columns against ``gold_columns``, over the questions that
have gold columns only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from tabret import _core
from tabret.benchmarks import Benchmark
from tabret.results import Retrieval

__all__ = ["EvalResult", "evaluate", "format_table"]

RetrieveFn = Callable[[list[str], int], list[Retrieval]]
"""``retrieve(questions, k)``: at column level it must return ``k`` columns per question, e.g.
``lambda qs, k: retriever.retrieve(qs, k, k_columns=k)``."""
Level = Literal["table", "column"]


@dataclass
class EvalResult:
    benchmark: str
    method: str
    embedder: str
    questions: int  # questions scored (at column level: those with gold columns)
    complete_recall: dict[int, float]  # k -> percent of questions with every gold item in top k
    recall: dict[int, float]  # k -> mean percent of gold items in top k
    mean_tables: dict[int, float]  # k -> mean number of items (tables or columns) returned at k
    level: Level = "table"
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
    level: Level = "table",
    batch_size: int = 128,
    progress: bool = True,
) -> EvalResult:
    """Runs ``retrieve(questions, max(ks))`` over the benchmark in batches and scores it at
    ``level`` ("table": ``res.tables`` vs ``gold_tables``; "column": ``res.columns`` vs
    ``gold_columns``, only over questions with gold columns)."""
    if not ks or min(ks) <= 0:
        raise ValueError(f"ks must be positive, got {list(ks)}")
    if level not in ("table", "column"):
        raise ValueError(f"level must be 'table' or 'column', got '{level}'")
    questions = (
        [q for q in bench.questions if q.gold_columns] if level == "column" else bench.questions
    )
    if level == "column" and not questions:
        raise ValueError(f"benchmark '{bench.name}' has no gold columns to score at column level")
    k_max = max(ks)
    results: list[Retrieval] = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=len(questions),
            desc=f"{bench.name} {method}",
            unit="q",
            file=sys.stderr,
            leave=False,
        )
    for start in range(0, len(questions), batch_size):
        batch = questions[start : start + batch_size]
        results.extend(retrieve([q.question for q in batch], k_max))
        if bar is not None:
            bar.update(len(batch))
    if bar is not None:
        bar.close()
    if level == "column":
        ranked = [[c.id for c in res.columns] for res in results]
        golds = [list(q.gold_columns) for q in questions]
    else:
        ranked = [[t.id for t in res.tables] for res in results]
        golds = [list(q.gold_tables) for q in questions]
    n = max(len(questions), 1)
    pairs = list(zip(ranked, golds, strict=True))
    cr: dict[int, float] = {}
    r: dict[int, float] = {}
    mt: dict[int, float] = {}
    for k in ks:
        cr[k] = 100 * sum(_core.complete_recall_at(rk, g, k) for rk, g in pairs) / n
        r[k] = 100 * sum(_core.recall_at(rk, g, k) for rk, g in pairs) / n
        mt[k] = sum(min(k, len(rk)) for rk in ranked) / n
    per_question = [
        {"id": q.id, "gold": g, "ranked": rk}
        for q, g, rk in zip(questions, golds, ranked, strict=True)
    ]
    return EvalResult(
        bench.name,
        method,
        embedder,
        len(questions),
        cr,
        r,
        mt,
        level,
        bench.source,
        per_question=per_question,
    )


def format_table(results: Sequence[EvalResult]) -> str:
    """A Markdown table with one row per result: k= (complete recall) then r@ (recall) per k.
    A "level" column (table/column) follows "data" when any result is column-level."""
    ks = sorted({k for res in results for k in res.recall})
    show_level = any(res.level != "table" for res in results)
    head = ["data"] + (["level"] if show_level else []) + ["embedder", "method"]
    head += [f"k={k}" for k in ks] + [f"r@{k}" for k in ks]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for res in results:
        cells = [res.benchmark] + ([res.level] if show_level else []) + [res.embedder, res.method]
        cells += [f"{res.complete_recall[k]:.1f}" for k in ks]
        cells += [f"{res.recall[k]:.1f}" for k in ks]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
