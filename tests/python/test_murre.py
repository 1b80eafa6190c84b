from __future__ import annotations

import concurrent.futures
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tabret
from tabret import CachedEmbedder
from tabret.benchmarks import load_benchmark
from tabret.cli import main
from tabret.embedders import CallableEmbedder, HashingEmbedder
from tabret.index import DenseRetriever, TableIndex
from tabret.llms import jar_decompositions
from tabret.murre import FallbackRewriter, MurreRetriever
from tabret.rewriting import (
    CoverageRemovalRewriter,
    LexicalRemovalRewriter,
    MurreRewriter,
    RewriteRequest,
    RewriteResult,
)

HASHING = HashingEmbedder()
QUESTION = (
    "Name the cities with a population above one million in countries where English is spoken "
    "by most people."
)


def world() -> tabret.Catalog:
    """The worked example: Spider's world (city, country, countrylanguage) among tables of
    other databases sharing its words."""
    cat = tabret.Catalog()
    w = cat.add_database("world")
    for name, nl, cols in [
        ("city", "", ["id", "name", "country_code", "district", "population"]),
        ("country", "", ["code", "name", "continent", "region", "population"]),
        ("countrylanguage", "country language", ["country_code", "language", "is_official"]),
    ]:
        t = cat.add_table(w, name, nl)
        for c in cols:
            cat.add_column(t, c)
    for db, name, cols in [
        ("tourism", "attraction", ["city", "attraction_name", "visitors"]),
        ("weather", "forecast", ["city", "date", "temperature"]),
        ("transport", "metro_line", ["city", "line_name", "stations"]),
        ("census", "household", ["district", "people", "income"]),
        ("geo", "border", ["country_name", "neighbour", "length"]),
        ("geo", "river", ["river_name", "country_name", "length"]),
        ("sports", "team", ["id", "name", "city", "country"]),
        ("school", "student", ["id", "name", "city", "age"]),
    ]:
        d = cat.find_database(db)
        t = cat.add_table(cat.add_database(db) if d is None else d, name)
        for c in cols:
            cat.add_column(t, c)
    return cat


@pytest.fixture(scope="module")
def index() -> TableIndex:
    return TableIndex.build(world(), HASHING, progress=False)


def retrieved_block(prompt: str) -> str:
    return prompt[prompt.rfind("Retrieved tables:") : prompt.rfind("Missing tables:")]


def scripted(prompts: list[str]) -> list[str]:
    """The worked example's LLM: the city first, then the language table, then the country."""
    out = []
    for p in prompts:
        block = retrieved_block(p)
        if "world.city(" not in block:
            out.append("world.city(id, name, country code)")
        elif "world.country language(" not in block:
            out.append("world.country language(country code, language, is official)")
        elif "world.country(" not in block:
            out.append("world.country(code, name, continent)")
        else:
            out.append("None")
    return out


class CountingLLM:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.batches: list[list[str]] = []
        self.name = "counting"

    def __call__(self, prompts: list[str]) -> list[str]:
        self.batches.append(list(prompts))
        return [self.answer(p) for p in prompts]

    @property
    def prompts(self) -> int:
        return sum(len(b) for b in self.batches)


def test_worked_example_finds_the_language_table_at_hop_2(index: TableIndex) -> None:
    single = DenseRetriever(index).retrieve(QUESTION, 12)
    assert single.table_names.index("world.countrylanguage") >= 5  # not in the hop-1 beam

    murre = MurreRetriever(index, MurreRewriter(index.catalog, scripted))
    r = murre.retrieve(QUESTION, 5)
    assert {"world.city", "world.country", "world.countrylanguage"} <= set(r.table_names)
    hop1 = [s for s in r.trace if s.step.startswith("hop 1 ")]
    assert [s.table for s in hop1 if s.step == "hop 1 beam 1"] == ["world.city"]
    assert all(s.query == QUESTION for s in hop1)
    assert "world.countrylanguage" not in {s.table for s in hop1}
    paths: dict[str, list[str]] = defaultdict(list)
    queries: dict[str, list[str]] = defaultdict(list)
    for s in r.trace:
        paths[s.step].append(s.table)
        queries[s.step].append(s.query)
    hop2 = [step for step in paths if step.startswith("hop 2 beam ")]
    found = [step for step in hop2 if paths[step] == ["world.city", "world.countrylanguage"]]
    assert found, dict(paths)
    assert queries[found[0]][1] == "world.country language(country code, language, is official)"
    # Hop 3 completes the path with the country.
    assert any(
        set(paths[step]) == {"world.city", "world.countrylanguage", "world.country"}
        for step in paths
        if step.startswith("hop 3 beam ")
    )


def test_call_budget_with_a_counting_llm(index: TableIndex) -> None:
    qs = [QUESTION, "How many students live in each city?", "Which river is the longest?"]
    never = CountingLLM(lambda p: "world.country(code, name)")
    MurreRetriever(index, MurreRewriter(index.catalog, never)).retrieve(qs, 10)
    assert len(never.batches) == 2  # one call per hop >= 2, for the whole batch
    assert never.prompts == len(qs) * 5 * 2  # B (H - 1) per question

    always = CountingLLM(lambda p: "None")
    MurreRetriever(index, MurreRewriter(index.catalog, always)).retrieve(qs, 10)
    assert len(always.batches) == 1
    assert always.prompts == len(qs) * 5

    some = CountingLLM(
        lambda p: "None" if "world.city(" in retrieved_block(p) else "world.city(id)"
    )
    MurreRetriever(index, MurreRewriter(index.catalog, some)).retrieve(QUESTION, 10)
    assert len(some.batches) == 2
    assert some.prompts < 10
    stopped = [retrieved_block(p) for p in some.batches[0] if "world.city(" in retrieved_block(p)]
    assert stopped  # at hop 2 the beam [city] stopped ...
    for p in some.batches[1]:  # ... and is never asked again, nor extended
        assert not retrieved_block(p).startswith("Retrieved tables:\nworld.city(")

    twice = CountingLLM(lambda p: "world.country(code, name)")
    out = MurreRetriever(index, MurreRewriter(index.catalog, twice)).retrieve([QUESTION] * 2, 10)
    assert twice.prompts == 10
    assert out[0].tables == out[1].tables


def test_any_rewriter_offline_or_python(index: TableIndex) -> None:
    lexical = MurreRetriever(index, LexicalRemovalRewriter(index.catalog)).retrieve(QUESTION, 5)
    assert len(lexical.tables) == 5

    class Custom:
        def __init__(self) -> None:
            self.seen: list[list[RewriteRequest]] = []

        def rewrite(self, requests: Sequence[RewriteRequest | str]) -> list[RewriteResult]:
            reqs = [r if isinstance(r, RewriteRequest) else RewriteRequest(r) for r in requests]
            self.seen.append(reqs)
            return [
                RewriteResult(stop=len(r.path) >= 2, queries=["country language"]) for r in reqs
            ]

    custom = Custom()
    r = MurreRetriever(index, custom, beam=2).retrieve(QUESTION, 5)
    # hop 2 asks for the two paths of one table; hop 3 for the two of two tables, which stop
    assert [[len(req.path) for req in b] for b in custom.seen] == [[1, 1], [2, 2]]
    assert {s.step for s in r.trace if s.step.endswith(" stop")} == {
        "hop 2 beam 1 stop",
        "hop 2 beam 2 stop",
    }
    assert not any(s.step.startswith("hop 3 ") for s in r.trace)  # both stopped: no hop 3

    class Wrong:
        def rewrite(self, requests: Sequence[RewriteRequest | str]) -> Any:
            return ["not a result"] * len(requests)

    with pytest.raises(TypeError, match="not a RewriteResult"):
        MurreRetriever(index, Wrong()).retrieve(QUESTION, 5)

    class Short:
        def rewrite(self, requests: Sequence[RewriteRequest | str]) -> list[RewriteResult]:
            return []

    with pytest.raises(tabret.Error, match="returned 0 results"):
        MurreRetriever(index, Short()).retrieve(QUESTION, 5)
    with pytest.raises(TypeError, match="rewrite"):
        MurreRetriever(index, object())  # type: ignore[arg-type]


def test_options_and_errors(index: TableIndex) -> None:
    rw = LexicalRemovalRewriter(index.catalog)
    with pytest.raises(ValueError, match="k must be positive"):
        MurreRetriever(index, rw).retrieve(QUESTION, 0)
    with pytest.raises(ValueError, match="tables only"):
        MurreRetriever(index, rw).retrieve(QUESTION, 5, k_columns=2)
    with pytest.raises(ValueError, match="beam must be positive"):
        MurreRetriever(index, rw, beam=0)
    with pytest.raises(ValueError, match="scoring must be"):
        MurreRetriever(index, rw, scoring="nope")  # type: ignore[arg-type]
    ref = MurreRetriever.reference(index, rw, beam=2)
    assert len(ref.retrieve(QUESTION, 20).tables) <= 3 * 2 + 2 * 3 * 2  # top 3B per beam
    one_hop = MurreRetriever(index, rw, hops=1).retrieve(QUESTION, 5)
    single = DenseRetriever(index).retrieve(QUESTION, 5)
    assert one_hop.table_names == single.table_names  # H = 1 is single-hop
    spliced = MurreRetriever(index, rw, removal=False, early_stop=False).retrieve(QUESTION, 5)
    first, second = [s for s in spliced.trace if s.step == "hop 2 beam 1"]
    table = index.catalog.find_table(*first.table.split(".", 1))
    assert table is not None
    assert second.query == QUESTION + "\n" + index.table_text(table)  # question + path texts


def test_threads_agree_with_serial(index: TableIndex) -> None:
    r = MurreRetriever(index, LexicalRemovalRewriter(index.catalog))
    qs = [QUESTION, "Which river is the longest?", "How many students live in each city?"] * 8
    serial = r.retrieve(qs, 5)

    def run(chunk: list[str]) -> list[tabret.Retrieval]:
        return r.retrieve(chunk, 5)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        parallel = [x for part in pool.map(run, [qs[:12], qs[12:]]) for x in part]
    assert parallel == serial


def test_fallback_rewriter_dispatches_by_question(index: TableIndex) -> None:
    class Tag:
        def __init__(self, tag: str) -> None:
            self.tag = tag
            self.calls = 0

        def rewrite(self, requests: Sequence[RewriteRequest | str]) -> list[RewriteResult]:
            self.calls += 1
            return [RewriteResult(queries=[self.tag]) for _ in requests]

    a, b = Tag("a"), Tag("b")
    fb = FallbackRewriter(a, b, lambda q: q.startswith("x"))
    out = fb.rewrite(["x1", RewriteRequest("y1", [0]), "x2"])
    assert [r.queries for r in out] == [["a"], ["b"], ["a"]]
    assert (a.calls, b.calls) == (1, 1)
    fb.rewrite(["x3"])
    assert (a.calls, b.calls) == (2, 1)  # no call with an empty share


def test_cached_embedder_embeds_each_text_once() -> None:
    seen: list[list[str]] = []

    def embed(texts: list[str]) -> Any:
        seen.append(texts)
        return HASHING.embed(texts)

    cached = CachedEmbedder(CallableEmbedder(embed, "counting").embed, "counting")
    first = cached.embed(["a", "b", "a"])
    np.testing.assert_array_equal(first[0], first[2])
    cached(["b", "c"])
    assert seen == [["a", "b"], ["c"]]
    assert (cached.calls, cached.embedded, cached.hits, len(cached)) == (2, 3, 2, 3)
    assert cached.name == "counting"
    index = TableIndex.build(world(), cached, progress=False)
    assert index.embedder_name == "counting"


def test_cli_murre_on_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", "--benchmark", "demo", "--embedder", "hashing", "--quiet", "--json"]
    assert main([*argv, "--method", "single-hop", "murre", "--rewriter", "lexical"]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)  # the command line goes to stderr with --json
    assert [r["method"] for r in payload] == ["single-hop", "MURRE [lexical removal]"]
    assert "rewrite requests" in captured.err
    assert main([*argv, "--method", "murre", "--rewriter", "coverage"]) == 1
    err = capsys.readouterr().err
    assert "no recorded JAR decompositions" in err
    assert "use --rewriter lexical" in err


def test_coverage_removal_over_recorded_decompositions(data_dir: Path) -> None:
    bench = load_benchmark("spider-union", data_dir)
    questions = [q.question for q in bench.questions[:40]]
    index = TableIndex.build(bench.catalog, HASHING, columns=False, progress=False)
    rw = CoverageRemovalRewriter(index.catalog, jar_decompositions("spider", data_dir))
    results = MurreRetriever(index, rw).retrieve(questions, 20)
    hop2_queries = 0
    for q, r in zip(questions, results, strict=True):
        steps: dict[str, list[tabret.TraceStep]] = defaultdict(list)
        for s in r.trace:
            steps[s.step].append(s)
        for step, path in steps.items():
            if not step.startswith("hop 2 beam "):
                continue
            if len(path) == 1:  # a hop-1 beam that stopped, carried with its score
                assert any(s.step.endswith(" stop") and s.table == path[0].table for s in r.trace)
                continue
            first, second = path
            assert first.query == q
            # the recorded sub-queries the path leaves uncovered, as `db.concept(attrs)`
            db = first.table.split(".", 1)[0]
            assert all(line.startswith(db + ".") for line in second.query.split("\n"))
            hop2_queries += 1
    assert hop2_queries >= 5 * len(questions) // 2
