"""CRUSH4SQL (Kothyari et al., 2023): collective column retrieval from a hallucinated schema.

An LLM hallucinates the minimal schema that would answer the question; each hallucinated
``table.column`` is a probe. Probes are embedded (in the question's context by default), each
retrieves its top columns, the probe-by-candidate scores are entropy-weighted, and a budget of
``k`` columns is selected collectively: by the paper's objective (coverage + connectivity,
greedy) or the reference code's round robin. Tables are the distinct tables of the selected
columns, in selection order. See ``docs/retrieval.md`` and ``../shared/docs/methods.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

from tabret import _core
from tabret.benchmarks import Benchmark
from tabret.eval import EvalResult, RetrieveFn, evaluate
from tabret.index import TableIndex, _NativeRetriever
from tabret.results import Retrieval, ScoredTable
from tabret.rewriting import CrushRewriter, LLMLike, PromptSet, QueryRewriter

__all__ = [
    "CrushCandidates",
    "CrushObjective",
    "CrushRetriever",
    "ProbeContext",
    "at_budget",
    "evaluate_per_budget",
]

#: What a probe is embedded as: "question" = "x t.c" (paper), "alone" = the probe (reference).
ProbeContext = Literal["question", "alone"]
#: Candidate set: "union" of every probe's top N (paper), or the "global" top N (reference).
CrushCandidates = Literal["union", "global"]
#: Selection: the "paper" objective (greedy), or the reference "round_robin" greedy.
CrushObjective = Literal["paper", "round_robin"]

_CRUSH = _core.CrushRetriever.defaults


class CrushRetriever(_NativeRetriever):
    """CRUSH4SQL over a :class:`TableIndex` built with column vectors.

    ``rewriter`` gives the probes: a :class:`~tabret.rewriting.CrushRewriter` (hallucinated
    schema), a :class:`~tabret.rewriting.DecompositionRewriter` (JAR sub-queries) or any object
    with ``rewrite(requests) -> list[RewriteResult]``; or pass ``llm`` to build a CrushRewriter
    with the ``template`` prompt. One rewriter (LLM) call and one embedder call per batch.

    ``retrieve(questions, k, k_columns=)`` selects a budget of ``max(k, k_columns)`` columns:
    ``columns`` in selection order, ``tables`` = their distinct tables (at most ``k``), and
    ``trace[i]`` names the probe that picked ``columns[i]``. The selection at a budget is a
    prefix of the selection at any larger budget.

    Ablations: ``probe="alone"`` (no question context), ``entropy=False``,
    ``connectivity=False`` (λ = 0).
    """

    ranks_columns = True

    def __init__(
        self,
        index: TableIndex,
        rewriter: QueryRewriter | None = None,
        *,
        llm: LLMLike | None = None,
        prompts: PromptSet | None = None,
        template: str = "crush_bird",
        probe: ProbeContext = _CRUSH["probe"],
        candidates: CrushCandidates = _CRUSH["candidates"],
        candidate_depth: int = _CRUSH["candidate_depth"],
        objective: CrushObjective = _CRUSH["objective"],
        entropy: bool = _CRUSH["entropy"],
        connectivity: bool = _CRUSH["connectivity"],
        lam: float = _CRUSH["lam"],
        gamma: float = _CRUSH["gamma"],
    ) -> None:
        if (rewriter is None) == (llm is None):
            raise ValueError("give exactly one of rewriter= and llm=")
        if candidate_depth <= 0:
            raise ValueError(f"candidate_depth must be positive, got {candidate_depth}")
        if rewriter is None:
            assert llm is not None
            rewriter = CrushRewriter(llm, prompts, template)
        self.index = index
        self.rewriter = rewriter
        self._core = _core.CrushRetriever(
            index.core,
            index._embed,
            index.embedder_name,
            rewriter,
            probe=probe,
            candidates=candidates,
            candidate_depth=candidate_depth,
            objective=objective,
            entropy=entropy,
            connectivity=connectivity,
            lam=lam,
            gamma=gamma,
        )


def at_budget(result: Retrieval, budget: int, catalog: _core.Catalog) -> Retrieval:
    """The answer at a smaller budget, from the answer of a larger one: the first ``budget``
    columns and their distinct tables (exact, as the selection is prefix-consistent)."""
    columns = result.columns[:budget]
    scores = {t.id: t for t in result.tables}
    tables: dict[int, ScoredTable] = {}
    for c in columns:
        t = catalog.column(c.id).table
        tables.setdefault(t, scores.get(t) or ScoredTable(t, catalog.qualified_name(t), c.score))
    return replace(
        result, columns=columns, tables=list(tables.values()), trace=result.trace[:budget]
    )


def evaluate_per_budget(
    retriever: CrushRetriever,
    bench: Benchmark,
    ks: Sequence[int] = (3, 5, 10, 20),
    **kwargs: Any,
) -> EvalResult:
    """Table-level CRUSH at budgets ``ks``: at budget B, the tables of the B selected columns
    (at most B). One retrieval at the largest budget, cut down per budget with
    :func:`at_budget`. (:func:`tabret.eval.evaluate` alone scores prefixes of the table list of
    one run: the first k tables of a larger selection.)"""
    k_max = max(ks)
    memo: dict[str, Retrieval] = {}

    def at(k: int) -> RetrieveFn:
        def retrieve(questions: list[str], _k: int) -> list[Retrieval]:
            missing = [q for q in dict.fromkeys(questions) if q not in memo]
            if missing:
                memo.update(zip(missing, retriever.retrieve(missing, k_max), strict=True))
            return [at_budget(memo[q], k, retriever.index.catalog) for q in questions]

        return retrieve

    runs = [evaluate(at(k), bench, (k,), **kwargs) for k in sorted(set(ks), reverse=True)]
    out = runs[0]
    for run in runs[1:]:
        out.complete_recall |= run.complete_recall
        out.recall |= run.recall
        out.mean_tables |= run.mean_tables
    out.complete_recall = dict(sorted(out.complete_recall.items()))
    out.recall = dict(sorted(out.recall.items()))
    out.mean_tables = dict(sorted(out.mean_tables.items()))
    return out
