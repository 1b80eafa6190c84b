"""Every LLM step against a real model: Gemma 3 270M in llama-cpp-python's server on 127.0.0.1
(tabret.local_llm), not a fake. Each rewriter's prompt goes to the model, its real completion
through the parser, and the parsed result into retrieval; plus batching, caching, concurrency,
a server killed mid-run, a slow answer and a timeout.

Needs the local-llm extra (in the test extra); skipped without it, except under CI=true."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import tabret
from tabret import LLMError
from tabret.datasets import demo_catalog, demo_questions
from tabret.embedders import HashingEmbedder
from tabret.index import TableIndex
from tabret.llms import CachedLLM, OpenAICompatibleLLM, ResponseCache, Sampling
from tabret.rewriting import (
    CrushRewriter,
    DecompositionRewriter,
    LLMQuestionGenerator,
    MurreRewriter,
    RewriteRequest,
    default_prompts,
    parse_completion,
    parse_decomposition,
    parse_hallucinated_schema,
)

try:
    from tabret.local_llm import LocalLLMServer, require_local_llm

    require_local_llm()
    MISSING = ""
except ImportError as err:
    MISSING = str(err)

if MISSING:
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"the live-LLM tests must run under CI: {MISSING}")
    pytest.skip(MISSING, allow_module_level=True)

PROMPTS = default_prompts()
QUESTIONS = [
    "Which singers from France released albums after 2001?",
    "How many flights depart from airports in Canada?",
]


def _server(**kwargs: object) -> LocalLLMServer:
    # Under the sanitizers the tests run with libasan preloaded; the model server is not
    # instrumented, so it starts without that preload.
    preload = os.environ.pop("LD_PRELOAD", None)
    try:
        return LocalLLMServer(**kwargs).start()  # type: ignore[arg-type]
    finally:
        if preload is not None:
            os.environ["LD_PRELOAD"] = preload


@pytest.fixture(scope="module")
def server() -> Iterator[LocalLLMServer]:
    s = _server()
    yield s
    s.stop()


@pytest.fixture
def llm(server: LocalLLMServer) -> OpenAICompatibleLLM:
    return server.llm()


@pytest.fixture(scope="module")
def index() -> TableIndex:
    return TableIndex.build(demo_catalog(), HashingEmbedder(), columns=True, progress=False)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def test_the_server_is_a_base_model_answered_by_completions(
    server: LocalLLMServer, llm: OpenAICompatibleLLM
) -> None:
    """Gemma 3 270M carries no chat template: the client uses the completions protocol, and
    the answer to a few-shot prompt stops at the prompt's stop sequence (one answer, not the
    next example)."""
    assert server.running
    assert server.api() == "completions"
    assert llm.api == "completions"
    prompt = PROMPTS.render("jar_decompose", {"question": QUESTIONS[0]})
    (answer,) = llm([prompt])
    assert "Question:" not in answer
    assert "\n\n" not in answer.strip()
    assert llm.usage.requests == 1
    assert llm.usage.prompt_tokens > 100  # the few-shot prompt, as the server counted it


def test_decomposition_live(llm: OpenAICompatibleLLM, index: TableIndex) -> None:
    """JAR's decomposition: prompt -> real completion -> parser -> sub-queries, and a
    greedy-join retrieval that asks the model once per question."""
    prompts = [PROMPTS.render("jar_decompose", {"question": q}) for q in QUESTIONS]
    raw = llm(prompts)
    rewritten = DecompositionRewriter(llm).rewrite(QUESTIONS)
    for question, answer, result in zip(QUESTIONS, raw, rewritten, strict=True):
        parsed = [s.text for s in parse_decomposition(answer)]
        assert parsed, f"no sub-query parsed from {answer!r}"
        assert result.queries == parsed  # the rewriter reads the same completion
        assert result.queries != [question]  # the model's, not the fallback
    # each answer is about its own question (order kept in a batch)
    assert "singer" in _words(raw[0])
    assert "singer" not in _words(raw[1])
    assert _words(raw[1]) & {"flight", "airport", "departure"}

    graph = tabret.JoinGraph.build(index, progress=False)
    before = llm.usage.requests
    results = tabret.GreedyJoinRetriever(index, graph, llm).retrieve(QUESTIONS, 5)
    assert [len(r.tables) for r in results] == [5, 5]
    assert llm.usage.requests - before == len(QUESTIONS)


def test_crush_live(llm: OpenAICompatibleLLM, index: TableIndex) -> None:
    """CRUSH: a hallucinated schema from the model, parsed into probes, drives the
    collective selection of columns."""
    prompt = PROMPTS.render("crush_spider", {"question": QUESTIONS[0]})
    (answer,) = llm([prompt])
    probes = parse_hallucinated_schema(answer)
    assert probes
    assert all(p.table or p.column for p in probes)
    (result,) = CrushRewriter(llm, template="crush_spider").rewrite([QUESTIONS[0]])
    assert result.queries == [p.text for p in probes]
    retriever = tabret.CrushRetriever(index, llm=llm, template="crush_spider")
    (retrieval,) = retriever.retrieve([QUESTIONS[0]], 5, k_columns=8)
    assert 1 <= len(retrieval.tables) <= 5
    assert len(retrieval.columns) == 8
    assert {t.query for t in retrieval.trace} <= {p.text for p in probes}


def test_murre_live(llm: OpenAICompatibleLLM, index: TableIndex) -> None:
    """MURRE: each hop asks the model for the missing tables of each beam; the completion is
    parsed as tables (or "None") and becomes the next hop's query."""
    rewriter = MurreRewriter(index.catalog, llm)
    question = demo_questions()[2].question  # four tables of the hospital database
    physician = index.catalog.find_table("hospital", "physician")
    assert physician is not None
    request = RewriteRequest(question, [physician])
    prompt = rewriter.prompt(request)
    assert "hospital.physician(" in prompt
    (answer,) = llm([prompt])
    completion = parse_completion(answer)
    (result,) = rewriter.rewrite([request])
    assert result.stop == completion.stop
    if completion.stop:
        assert result.queries == []
    else:
        assert result.queries  # the missing tables the model wrote, as the next query

    before = llm.usage.requests
    murre = tabret.MurreRetriever(index, rewriter, beam=2, hops=2)
    (retrieval,) = murre.retrieve([question], 5)
    assert len(retrieval.tables) == 5
    assert 1 <= llm.usage.requests - before <= 2  # one prompt per beam (identical ones once)


def test_reverse_question_generation_live(llm: OpenAICompatibleLLM, index: TableIndex) -> None:
    """Reverse Engineering: one generated question per table, in the table's words."""
    cat = index.catalog
    hospital = [i for i in range(cat.num_tables) if cat.table(i).database == 0]
    assert cat.database(0).name == "hospital"
    tables = hospital[:4]
    questions = LLMQuestionGenerator(cat, llm).generate(tables)
    assert len(questions) == len(tables)
    for table, question in zip(tables, questions, strict=True):
        assert question.strip()
        assert "\n" not in question.strip()
        assert question != cat.table(table).nl_name


def test_batch_cache_and_concurrency(server: LocalLLMServer, tmp_path: Path) -> None:
    """A batch keeps its order with concurrent requests; two threads share the client; a
    cached rerun asks the model nothing."""
    client = server.llm(concurrency=2)
    prompts = [PROMPTS.render("jar_decompose", {"question": q}) for q in QUESTIONS] * 2
    cached = CachedLLM(client, ResponseCache(tmp_path / "responses.sqlite"))
    results: list[list[str]] = []
    threads = [threading.Thread(target=lambda: results.append(cached(prompts))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2
    assert results[0] == results[1]
    assert results[0][:2] == results[0][2:]
    assert "singer" in _words(results[0][0])
    assert "singer" not in _words(results[0][1])
    asked = client.usage.requests
    assert 2 <= asked <= 4  # each distinct prompt once per thread at most
    again = CachedLLM(client, ResponseCache(tmp_path / "responses.sqlite"))
    assert again(prompts) == results[0]
    assert client.usage.requests == asked  # the rerun made zero calls


def test_server_killed_mid_run(tmp_path: Path) -> None:
    """The server dies during a batch: a typed LLMError naming the URL, and nothing of the
    failed batch is cached (a rerun asks again, not a wrong answer)."""
    victim = _server()
    client = victim.llm(max_retries=1, backoff=0.05, timeout=30)
    cache = ResponseCache(tmp_path / "responses.sqlite")
    cached = CachedLLM(client, cache)
    prompts = [PROMPTS.render("reverse_question", {"table": f"shop.t{i}(a, b)"}) for i in range(40)]
    done = threading.Event()

    def kill_after_first_answer() -> None:
        while client.usage.requests < 1 and not done.is_set():
            done.wait(0.01)
        victim.stop()

    killer = threading.Thread(target=kill_after_first_answer)
    killer.start()
    try:
        with pytest.raises(LLMError, match=re.escape(victim.base_url)):
            cached(prompts)
    finally:
        done.set()
        killer.join()
        victim.stop()
    assert 1 <= client.usage.requests < len(prompts)
    assert len(cache) == 0


def test_slow_answer_and_timeout(server: LocalLLMServer) -> None:
    """A long answer arrives whole within a generous timeout; the same request with a timeout
    far below its generation time fails with an LLMError saying it timed out."""
    prompt = "Write a long story about a database.\n\n"
    long = Sampling(max_tokens=96)
    slow = server.llm(sampling=long)
    (story,) = slow([prompt])
    assert slow.usage.completion_tokens >= 48
    assert len(story) > 100
    hasty = server.llm(sampling=long, timeout=0.01, max_retries=0)
    # the socket's timeout, or the attempt's deadline (_http: each attempt bounded as a whole)
    with pytest.raises(LLMError, match=r"timed out|no whole answer within timeout=0\.01 s"):
        hasty([prompt + "Another one.\n"])


def test_cli_index_and_query_with_local_llm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tabret index --join-graph --questions --llm local` saves questions the model wrote;
    `tabret query --method greedy-join --llm local` uses its decompositions, and `--method
    reverse` the saved questions; each command starts the model server and stops it."""
    from tabret.cli import main
    from tabret.reverse import GeneratedQuestions

    source = str(Path(tabret.__file__).parent / "data/demo/catalog.json")
    out = tmp_path / "idx"
    question = demo_questions()[2].question
    preload = os.environ.pop("LD_PRELOAD", None)  # see _server
    try:
        args = ["index", "json", source, str(out), "--embedder", "hashing", "--join-graph"]
        assert main([*args, "--questions", "--llm", "local", "--quiet"]) == 0
        assert "(llm:gemma-3-270m-q4_k_m.gguf)" in capsys.readouterr().out
        for method in ("greedy-join", "reverse"):
            query = ["query", str(out), question, "--method", method, "--quiet"]
            assert main([*query, "--llm", "local"]) == 0
            shown = capsys.readouterr().out.splitlines()
            assert shown[1] == question
            assert len(shown) == 2 + 5  # legend, question, five tables
    finally:
        if preload is not None:
            os.environ["LD_PRELOAD"] = preload
    index = TableIndex.load(out)
    saved = GeneratedQuestions.load(out, index)
    assert saved.generator == "llm:gemma-3-270m-q4_k_m.gguf"
    assert len(saved) == index.catalog.num_tables
    assert len(set(saved.questions)) > index.catalog.num_tables // 2  # not one canned answer
