"""Part 3: callback economy. Embedder calls, texts embedded, LLM calls, prompts and approximate
prompt tokens (characters / 4) per question for each method, counted by wrappers around the
embedder and the LLM, on a small batch of questions retrieved two ways: as one batch (tabret's
batch path) and one question per call.

LLM answers are the recorded ones (CRUSH's hallucinated schemas on BirdUnion, JAR's
decompositions elsewhere). MURRE runs with the offline coverage-removal rewriter; its LLM
prompts are what MurreRewriter would send for the same requests (rendered, counted, not sent).
Reverse Engineering calls no LLM at query time; its index-time prompts (one per table) are
counted separately.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from bench.common import machine, write_json
from tabret import (
    AdaptiveRetriever,
    CrushRetriever,
    DenseRetriever,
    GeneratedQuestions,
    GreedyJoinRetriever,
    HashingEmbedder,
    JarExactRetriever,
    JoinGraph,
    MurreRetriever,
    ReverseRetriever,
    TableIndex,
)
from tabret.benchmarks import load_benchmark
from tabret.embedders import FloatArray
from tabret.index import BaseRetriever
from tabret.join import lenient_replay
from tabret.llms import CallableLLM, ReplayLLM, crush_recordings, jar_decompositions
from tabret.rewriting import (
    CoverageRemovalRewriter,
    CrushRewriter,
    DecompositionRewriter,
    MurreRewriter,
    RewriteRequest,
    RewriteResult,
)


class Counts:
    def __init__(self) -> None:
        self.embed_calls = 0
        self.texts = 0
        self.llm_calls = 0
        self.prompts = 0
        self.chars = 0

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]

    def per_question(self, n: int) -> dict[str, float]:
        return {
            "embed_calls": self.embed_calls / n,
            "texts_embedded": self.texts / n,
            "llm_calls": self.llm_calls / n,
            "prompts": self.prompts / n,
            "prompt_tokens": self.chars / 4 / n,
        }


class CountingEmbedder:
    # Forwards the hashing embedder's contract: a text of function words only (BirdUnion's
    # JAR sub-query "state") is a zero vector, scoring 0 everywhere.
    allows_zero_rows = True

    def __init__(self, counts: Counts) -> None:
        self._inner = HashingEmbedder()
        self.counts = counts

    @property
    def name(self) -> str:
        return "hashing"

    def embed(self, texts: list[str]) -> FloatArray:
        self.counts.embed_calls += 1
        self.counts.texts += len(texts)
        return self._inner.embed(texts)


def counting_llm(fn: Callable[[list[str]], list[str]], counts: Counts) -> CallableLLM:
    def call(prompts: list[str]) -> list[str]:
        counts.llm_calls += 1
        counts.prompts += len(prompts)
        counts.chars += sum(len(p) for p in prompts)
        return fn(prompts)

    return CallableLLM(call, "counted")


class PromptCountingRewriter:
    """Delegates to an offline rewriter; counts the prompts MurreRewriter would send."""

    def __init__(self, inner: Any, renderer: MurreRewriter, counts: Counts) -> None:
        self.inner = inner
        self.renderer = renderer
        self.counts = counts

    def rewrite(self, requests: Sequence[RewriteRequest | str]) -> list[RewriteResult]:
        reqs = [RewriteRequest(r) if isinstance(r, str) else r for r in requests]
        asked = [r for r in reqs if r.path]  # an empty path costs MurreRewriter no call
        if asked:
            self.counts.llm_calls += 1
            self.counts.prompts += len(asked)
            self.counts.chars += sum(len(self.renderer.prompt(r)) for r in asked)
        return list(self.inner.rewrite(reqs))


def _measure(
    retriever: BaseRetriever, questions: list[str], counts: Counts, k: int, k_columns: int = 0
) -> dict[str, Any]:
    counts.reset()
    retriever._raw(questions, k, k_columns)
    batch = counts.per_question(len(questions))
    counts.reset()
    for q in questions:
        retriever._raw([q], k, k_columns)
    single = counts.per_question(len(questions))
    return {"batch": batch, "single": single}


def run(benchmarks: Sequence[str], questions: int) -> dict[str, Any]:
    rows = []
    for name in benchmarks:
        bench = load_benchmark(name)
        dataset: Any = "spider" if name.startswith("spider") else "bird"
        source = jar_decompositions(dataset)
        crush_source = crush_recordings() if dataset == "bird" else source
        qs = [
            q.question
            for q in bench.questions
            if q.question in source and q.question in crush_source
        ]
        qs = list(dict.fromkeys(qs))[:questions]
        counts = Counts()
        index = TableIndex.build(bench.catalog, CountingEmbedder(counts), progress=False)
        graph = JoinGraph.build(index)
        replay: Callable[[list[str]], list[str]] = (
            ReplayLLM.crush() if dataset == "bird" else ReplayLLM.jar("spider")
        )
        crush_llm = counting_llm(replay, counts)
        crush_rw: Any = (
            CrushRewriter(crush_llm, template="crush_bird")
            if dataset == "bird"
            else DecompositionRewriter(crush_llm)
        )
        decomposer = DecompositionRewriter(counting_llm(lenient_replay(source), counts))
        renderer = MurreRewriter(index.catalog, counting_llm(lambda p: [""] * len(p), Counts()))
        murre_rw = PromptCountingRewriter(
            CoverageRemovalRewriter(index.catalog, source), renderer, counts
        )
        methods: list[tuple[str, BaseRetriever, int, int]] = [
            ("single-hop", DenseRetriever(index), 10, 0),
            ("CRUSH", CrushRetriever(index, crush_rw), 20, 20),
            ("MURRE", MurreRetriever(index, murre_rw), 10, 0),
            ("greedy join", GreedyJoinRetriever(index, graph, decomposer), 5, 0),
            ("JAR exact", JarExactRetriever(index, graph, decomposer, weights=dataset), 3, 0),
            ("ATR", AdaptiveRetriever(DenseRetriever(index)), 1, 0),
            ("reverse", ReverseRetriever(index, GeneratedQuestions.build(index)), 10, 0),
        ]
        for method, retriever, k, k_columns in methods:
            row = {"benchmark": name, "method": method, "questions": len(qs)}
            row.update(_measure(retriever, qs, counts, k, k_columns))
            rows.append(row)
            print(f"{name} {method}: {row}", flush=True)
        index_counts = Counts()
        GeneratedQuestions.build(
            index, counting_llm(lambda p: ["What is stored here?"] * len(p), index_counts)
        )
        rows.append(
            {
                "benchmark": name,
                "method": "reverse (index time, LLM questions)",
                "questions": index.catalog.num_tables,
                "batch": index_counts.per_question(index.catalog.num_tables),
                "single": None,
                "note": "per table, once per catalog",
            }
        )
    return {"machine": machine(), "rows": rows}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--benchmarks", nargs="+", default=["spider-union", "bird-union"])
    p.add_argument("--questions", type=int, default=50)
    args = p.parse_args(argv)
    write_json("callbacks.json", run(args.benchmarks, args.questions))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
