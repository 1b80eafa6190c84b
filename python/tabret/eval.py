"""Evaluation: complete recall (k=) and recall (r@) at several k, mean items returned.

``level="table"`` scores the ranked tables against ``gold_tables`` (every question);
``level="column"`` scores the ranked columns against ``gold_columns``, over the questions that
have gold columns only. A question's table ``families`` (Spider 2.0-lite's wildcard tables) are
one gold item each, found when any member is ranked. When every result carries an adaptive
``cut`` (ATR), table-level results also score each list at its own cut and, for comparison, the
same lists at a fixed k equal to the mean cut (``EvalResult.cut``).

What is scored at k is what the retriever returns when asked for k, and nothing else: by
default the retriever runs once per k and everything it returns is scored (a post-step that
adds tables, such as the join closure, returns more than k: ``mean_tables`` shows how many came
back), so a result at k never depends on the other k asked for. ``per_k=False`` runs once at
``max(ks)`` and scores its first k at every k: the same numbers, faster, for a retriever whose
answer at k is the first k of its answer at any larger k (the methods registered with
``Method.prefix``, which tests/python/test_prefix.py proves) and wrong for any other: a
selector over the top ``max(k, N)`` candidates chooses among more of them when asked for more.
A result with an adaptive ``cut`` ranks every candidate, so a fixed k scores its first k.

With ``tokens`` (a :class:`tabret.tokens.SchemaTokens`), table-level results also give the
mean prompt tokens of the schema text of the tables returned at each k (``prompt_tokens``).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from tabret import _core
from tabret.benchmarks import Benchmark, BenchmarkQuestion
from tabret.results import Retrieval
from tabret.tokens import SchemaTokens

__all__ = [
    "CutResult",
    "EvalResult",
    "evaluate",
    "format_cut_table",
    "format_table",
    "merge_results",
]

RetrieveFn = Callable[[list[str], int], list[Retrieval]]
"""``retrieve(questions, k)``: at column level it must return ``k`` columns per question, e.g.
``lambda qs, k: retriever.retrieve(qs, k, k_columns=k)``."""
Level = Literal["table", "column"]


@dataclass
class CutResult:
    """Scores at each question's adaptive cut, next to fixed top-k of the same ranked lists at
    the same mean number of tables m: at k = floor(m) and ceil(m), and linearly interpolated at
    m (what answering floor(m) or ceil(m) tables at random, with mean m, would score)."""

    complete_recall: float  # percent of questions with every gold table before their cut
    recall: float  # mean percent of gold tables before the cut
    mean_tables: float  # mean cut
    fixed: dict[int, tuple[float, float]]  # k -> (complete recall, recall) at fixed k
    fixed_at_mean: tuple[float, float]  # (complete recall, recall) interpolated at mean_tables


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
    seconds: dict[int, float] = field(default_factory=dict)  # k -> wall time of the run(s)
    per_k: bool = True  # one run per k, all returned items scored (False: max(ks) sliced)
    cut: CutResult | None = None  # set when every result has an adaptive cut (table level)
    # k -> mean tokens of the DDL of the tables returned at k (evaluate's ``tokens``)
    prompt_tokens: dict[int, float] = field(default_factory=dict)

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
    per_k: bool = True,
    tokens: SchemaTokens | None = None,
) -> EvalResult:
    """Runs ``retrieve(questions, k)`` over the benchmark in batches for every k and scores all
    it returns at ``level`` ("table": ``res.tables`` vs ``gold_tables``; "column":
    ``res.columns`` vs ``gold_columns``, only over questions with gold columns). With
    ``per_k=False``, runs only ``retrieve(questions, max(ks))`` and scores its first k at each
    k: only for a retriever with the prefix property (module docstring). ``seconds`` holds the
    wall time of the run each k was scored from; each row of ``per_question`` holds the ranking
    at ``max(ks)`` (``ranked``) and the ids scored at each k (``answers``). With ``tokens``
    (table level only), ``prompt_tokens`` holds the mean tokens of the DDL of the tables
    returned at each k."""
    if not ks or min(ks) <= 0:
        raise ValueError(f"ks must be positive, got {list(ks)}")
    if level not in ("table", "column"):
        raise ValueError(f"level must be 'table' or 'column', got '{level}'")
    if tokens is not None and level != "table":
        raise ValueError("prompt tokens are counted for tables: use level='table'")
    if bench.per_database:
        raise ValueError(
            f"benchmark '{bench.name}' searches each question's own database: evaluate each of "
            "database_benchmarks(bench) over its own index, then merge_results"
        )
    questions = (
        [q for q in bench.questions if q.gold_columns] if level == "column" else bench.questions
    )
    if level == "column" and not questions:
        raise ValueError(f"benchmark '{bench.name}' has no gold columns to score at column level")
    golds = [list(q.gold_columns if level == "column" else q.gold_tables) for q in questions]
    returned: dict[int, list[Retrieval]] = {}  # each run's results, by the k it asked for
    seconds: dict[int, float] = {}
    for k_run in sorted(set(ks)) if per_k else [max(ks)]:
        start = time.perf_counter()
        returned[k_run] = _run(
            retrieve, questions, k_run, batch_size, progress, f"{bench.name} {method}"
        )
        seconds[k_run] = time.perf_counter() - start
    last = returned[max(ks)]
    # the items scored at k, as returned (ids) and with family members as their family
    answers = {
        k: [_answer(res, k, level, whole=per_k) for res in returned[k if per_k else max(ks)]]
        for k in ks
    }
    n = max(len(questions), 1)
    cr: dict[int, float] = {}
    r: dict[int, float] = {}
    mt: dict[int, float] = {}
    pt: dict[int, float] = {}
    for k in ks:
        if tokens is not None:
            pt[k] = sum(tokens.tables(a) for a in answers[k]) / n
        scored = (
            answers[k]
            if level == "column"
            else [_as_families(q, a) for q, a in zip(questions, answers[k], strict=True)]
        )
        pairs = list(zip(scored, golds, strict=True))
        cr[k] = 100 * sum(_core.complete_recall_at(a, g, max(len(a), 1)) for a, g in pairs) / n
        r[k] = 100 * sum(_core.recall_at(a, g, max(len(a), 1)) for a, g in pairs) / n
        mt[k] = sum(len(a) for a in answers[k]) / n
    per_question: list[dict[str, Any]] = [
        {
            "id": q.id,
            "gold": g,
            "ranked": _ids(res, level),
            "answers": {k: answers[k][i] for k in ks},
        }
        for i, (q, g, res) in enumerate(zip(questions, golds, last, strict=True))
    ]
    cuts = [res.cut for res in last]
    cut_result = None
    if level == "table" and last and all(c is not None for c in cuts):
        ranked = [_as_families(q, _ids(res, level)) for q, res in zip(questions, last, strict=True)]
        cut_result = _cut_result(ranked, golds, [c or 0 for c in cuts])
        for row, c in zip(per_question, cuts, strict=True):
            row["cut"] = c
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
        seconds={k: seconds[k if per_k else max(ks)] for k in ks},
        per_k=per_k,
        cut=cut_result,
        prompt_tokens=pt,
    )


def _ids(res: Retrieval, level: Level) -> list[int]:
    """The ids of the columns (``level="column"``) or tables ``res`` ranks, in its order."""
    return [c.id for c in res.columns] if level == "column" else [t.id for t in res.tables]


def _answer(res: Retrieval, k: int, level: Level, *, whole: bool) -> list[int]:
    """What is scored at k: ``res``'s first k items, or (``whole``: ``res`` came from a run at
    k) all it returned, as a post-step that adds tables returns them. A result with an adaptive
    ``cut`` is a ranking of every candidate, so only its first k count at a fixed k (its cut is
    scored apart, in :class:`CutResult`)."""
    ids = _ids(res, level)
    return ids if whole and res.cut is None else ids[:k]


def _as_families(q: BenchmarkQuestion, ranked: list[int]) -> list[int]:
    """``ranked`` with each member of one of ``q``'s table families replaced by the family's
    gold table (its first member): the gold item is found when any member is."""
    if not q.families:
        return ranked
    family = {t: f[0] for f in q.families for t in f}
    return [family.get(t, t) for t in ranked]


def merge_results(parts: Sequence[EvalResult], bench: Benchmark) -> EvalResult:
    """One method's results on the parts of a benchmark (``database_benchmarks``) as one
    result over all its questions: percentages and mean sizes weighted by questions, times
    summed, per-question rows concatenated (their ids are each part's); no adaptive cut."""
    first = parts[0]
    n = max(sum(p.questions for p in parts), 1)

    def mean(values: Callable[[EvalResult], dict[int, float]]) -> dict[int, float]:
        return {k: sum(values(p)[k] * p.questions for p in parts) / n for k in values(first)}

    return replace(
        first,
        benchmark=bench.name,
        questions=sum(p.questions for p in parts),
        complete_recall=mean(lambda p: p.complete_recall),
        recall=mean(lambda p: p.recall),
        mean_tables=mean(lambda p: p.mean_tables),
        prompt_tokens=mean(lambda p: p.prompt_tokens),
        source=bench.source,
        per_question=[row for p in parts for row in p.per_question],
        seconds={k: sum(p.seconds[k] for p in parts) for k in first.seconds},
        cut=None,
    )


def _cut_result(ranked: list[list[int]], golds: list[list[int]], cuts: list[int]) -> CutResult:
    from tabret.adaptive import cut_metrics, interpolate

    at_cut = cut_metrics(ranked, golds, cuts)
    m = at_cut.mean_tables
    fixed = {}
    for k in sorted({math.floor(m), math.ceil(m)}):
        fk = cut_metrics(ranked, golds, [k] * len(ranked))
        fixed[k] = (fk.complete_recall, fk.recall)
    at_mean = (
        interpolate({k: v[0] for k, v in fixed.items()}, m),
        interpolate({k: v[1] for k, v in fixed.items()}, m),
    )
    return CutResult(at_cut.complete_recall, at_cut.recall, m, fixed, at_mean)


def _run(
    retrieve: RetrieveFn,
    questions: Sequence[BenchmarkQuestion],
    k: int,
    batch_size: int,
    progress: bool,
    desc: str,
) -> list[Retrieval]:
    """``retrieve(questions, k)`` over all questions in batches."""
    results: list[Retrieval] = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=len(questions), desc=f"{desc} k={k}", unit="q", file=sys.stderr, leave=False
        )
    for start in range(0, len(questions), batch_size):
        batch = questions[start : start + batch_size]
        results.extend(retrieve([q.question for q in batch], k))
        if bar is not None:
            bar.update(len(batch))
    if bar is not None:
        bar.close()
    return results


def format_table(
    results: Sequence[EvalResult], *, seconds: bool = False, tables: bool = False
) -> str:
    """A Markdown table with one row per result: k= (complete recall) then r@ (recall) per k.
    A "level" column (table/column) follows "data" when any result is column-level; with
    ``tables``, the mean number returned per k (n@); with ``seconds``, the wall time of each
    run (s@k; one run for all k unless the result is per-k); when every result counted them, the
    mean prompt tokens of the tables returned (tok@k). The n@ columns are shown whatever
    ``tables`` says when a result returned more than k at some k (its k= and r@ count them
    all: a method that returns everything must not read as perfect without its size)."""
    ks = sorted({k for res in results for k in res.recall})
    tables = tables or any(n > k for res in results for k, n in res.mean_tables.items())
    show_level = any(res.level != "table" for res in results)
    head = ["data"] + (["level"] if show_level else []) + ["embedder", "method"]
    head += [f"k={k}" for k in ks] + [f"r@{k}" for k in ks]
    head += [f"n@{k}" for k in ks] if tables else []
    tokens = bool(results) and all(res.prompt_tokens for res in results)
    head += [f"tok@{k}" for k in ks] if tokens else []
    head += [f"s@{k}" for k in ks] if seconds else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for res in results:
        cells = [res.benchmark] + ([res.level] if show_level else []) + [res.embedder, res.method]
        cells += [f"{res.complete_recall[k]:.1f}" for k in ks]
        cells += [f"{res.recall[k]:.1f}" for k in ks]
        cells += [f"{res.mean_tables[k]:.2f}" for k in ks] if tables else []
        cells += [f"{res.prompt_tokens[k]:,.0f}" for k in ks] if tokens else []
        cells += [f"{res.seconds.get(k, 0.0):.1f}" for k in ks] if seconds else []
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_cut_table(results: Sequence[EvalResult]) -> str:
    """A Markdown table of the results that have an adaptive cut: complete recall (k=) and
    recall (r@) at the cut, the mean number of tables, and fixed top-k of the same lists at
    floor/ceil of that mean and interpolated at it."""
    head = ["data", "embedder", "method", "mean tables", "k= cut", "r@ cut"]
    head += ["fixed k (floor / ceil)", "k= fixed", "r@ fixed", "k= fixed@mean", "r@ fixed@mean"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for res in results:
        c = res.cut
        if c is None:
            continue
        ks = sorted(c.fixed)
        cells = [res.benchmark, res.embedder, res.method, f"{c.mean_tables:.2f}"]
        cells += [f"{c.complete_recall:.1f}", f"{c.recall:.1f}", " / ".join(map(str, ks))]
        cells += [" / ".join(f"{c.fixed[k][0]:.1f}" for k in ks)]
        cells += [" / ".join(f"{c.fixed[k][1]:.1f}" for k in ks)]
        cells += [f"{c.fixed_at_mean[0]:.1f}", f"{c.fixed_at_mean[1]:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
