from __future__ import annotations

import concurrent.futures
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tabret
from tabret.cli import main
from tabret.embedders import CallableEmbedder, HashingEmbedder
from tabret.index import DenseRetriever, TableIndex
from tabret.llms import ResponseCache
from tabret.results import Retrieval
from tabret.reverse import GeneratedQuestions, ReverseRetriever, reverse_fuse
from tabret.rewriting import TemplateQuestionGenerator

HASHING = HashingEmbedder()
QUESTIONS = ["How many beds does each ward have?", "List every course and its instructor."]


@pytest.fixture(scope="module")
def demo_index() -> TableIndex:
    return TableIndex.build(tabret.demo_catalog(), HASHING, progress=False)


@pytest.fixture(scope="module")
def template(demo_index: TableIndex) -> GeneratedQuestions:
    return GeneratedQuestions.build(demo_index)


class CountingLLM:
    """A fake LLM: one question per prompt naming the prompt's table line; counts calls."""

    name = "counting"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, prompts: list[str]) -> list[str]:
        self.calls.append(len(prompts))
        out = []
        for p in prompts:
            line = p[p.rindex("Table: ") + len("Table: ") :].splitlines()[0]
            out.append(f"Which rows does {line} hold?")
        return out


def test_fusion_arithmetic() -> None:
    # q = (0.6, 0.8), E_s = (1, 0), E_qo = (0, 1): r = 0.6, ř = 0.8, |E_s + E_qo| = sqrt 2
    r_c, alpha, fused = reverse_fuse(0.6, 0.8, math.sqrt(2))
    assert r_c == pytest.approx(1.4 / math.sqrt(2), rel=1e-6)
    assert alpha == pytest.approx(r_c, rel=1e-6)
    assert fused == pytest.approx(alpha * 0.6 + (1 - alpha) * 0.8, rel=1e-6)
    r_c, alpha, fused = reverse_fuse(0.0, -0.8, math.sqrt(3.2))  # r_c < 0: alpha = 1 - r_c > 1
    assert alpha == pytest.approx(1 - r_c, rel=1e-6)
    assert fused == pytest.approx(0.357771, rel=1e-5)
    assert reverse_fuse(0.4, -0.4, 0.0) == pytest.approx((0.0, 1.0, 0.4))


def test_template_questions_and_retrieval(
    demo_index: TableIndex, template: GeneratedQuestions
) -> None:
    assert len(template) == demo_index.catalog.num_tables == 69
    assert template.generator == "template"
    assert template[0] == TemplateQuestionGenerator(demo_index.catalog).generate([0])[0]
    r = ReverseRetriever(demo_index, template).retrieve(QUESTIONS[0], 5, k_columns=2)
    assert r.table_names[0] == "hospital.ward"
    assert len(r.tables) == 5
    assert len(r.columns) == 2
    assert [t.score for t in r.tables] == sorted((t.score for t in r.tables), reverse=True)
    first = [s for s in r.trace if s.table == "hospital.ward"]
    assert [s.step for s in first] == [
        "reverse",
        "reverse:schema",
        "reverse:question",
        "reverse:alpha",
    ]
    assert first[0].query == template[r.tables[0].id]
    assert first[0].score == pytest.approx(r.tables[0].score)
    assert first[1].query == demo_index.table_text(r.tables[0].id)
    assert first[3].score >= 0.5  # alpha = max(r_c, 1 - r_c)
    batch = ReverseRetriever(demo_index, template).retrieve(QUESTIONS, 3)
    assert [len(x.tables) for x in batch] == [3, 3]


def test_alpha_in_trace_matches_the_vectors(
    demo_index: TableIndex, template: GeneratedQuestions
) -> None:
    r = ReverseRetriever(demo_index, template).retrieve(QUESTIONS[1], 3)
    q = np.asarray(HASHING.embed([QUESTIONS[1]]))[0]
    q /= np.linalg.norm(q)
    for table in r.tables:
        steps = {s.step: s.score for s in r.trace if s.table == table.name}
        e_s = demo_index.core.table_vectors[table.id]
        e_qo = template.core.vectors[table.id]
        _, alpha, fused = reverse_fuse(
            float(q @ e_s), float(q @ e_qo), float(np.linalg.norm(e_s + e_qo))
        )
        assert steps["reverse:schema"] == pytest.approx(float(q @ e_s), abs=1e-5)
        assert steps["reverse:question"] == pytest.approx(float(q @ e_qo), abs=1e-5)
        assert steps["reverse:alpha"] == pytest.approx(alpha, abs=1e-5)
        assert table.score == pytest.approx(fused, abs=1e-5)


def test_llm_questions_one_batch_per_build_none_at_query_time(
    demo_index: TableIndex, tmp_path: Path
) -> None:
    llm = CountingLLM()
    cache = ResponseCache()
    built = GeneratedQuestions.build(demo_index, llm, cache=cache)
    assert llm.calls == [69]
    assert built.generator == "llm:counting"
    assert built[0].startswith("Which rows does ")
    retriever = ReverseRetriever(demo_index, built)
    before = retriever.retrieve(QUESTIONS, 5)
    assert llm.calls == [69]
    demo_index.save(tmp_path / "q", questions=built)  # questions live with their index
    loaded = GeneratedQuestions.load(tmp_path / "q", demo_index)
    assert loaded.questions == built.questions
    assert np.array_equal(loaded.core.vectors, built.core.vectors)
    assert ReverseRetriever(demo_index, loaded).retrieve(QUESTIONS, 5) == before
    assert llm.calls == [69]
    GeneratedQuestions.build(demo_index, llm, cache=cache)  # answered by the cache
    assert llm.calls == [69]


def test_saved_questions_are_verified(
    demo_index: TableIndex, template: GeneratedQuestions, tmp_path: Path
) -> None:
    path = tmp_path / "q"
    with pytest.raises(tabret.FileError, match="save the index there first"):
        template.save(path)
    demo_index.save(path)
    template.save(path)
    data = bytearray((path / "questions.json").read_bytes())
    data[3] ^= 0x20
    (path / "questions.json").write_bytes(bytes(data))
    with pytest.raises(tabret.FileError, match="checksum mismatch"):
        GeneratedQuestions.load(path, demo_index)
    template.save(path)
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["format"] = "something-else"
    (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(tabret.FileError, match="not a tabret index"):
        GeneratedQuestions.load(path, demo_index)
    # That manifest is no longer tabret's (unsealed): the directory is never replaced.
    with pytest.raises(tabret.FileError, match="not a saved tabret index"):
        demo_index.save(path, questions=template, replace=True)
    other = TableIndex.build(tabret.demo_catalog(), HashingEmbedder(dim=256), progress=False)
    demo_index.save(tmp_path / "q2", questions=template)
    with pytest.raises(tabret.Error, match="embedded with"):
        GeneratedQuestions.load(tmp_path / "q2", other)
    with pytest.raises(tabret.Error, match="embedded with"):
        ReverseRetriever(other, template)
    with pytest.raises(tabret.Error, match="returned 1 questions for 69 tables"):
        GeneratedQuestions.from_questions(demo_index, ["only one"])
    with pytest.raises(ValueError, match="'template' or an LLM"):
        GeneratedQuestions.build(demo_index, "templates")  # type: ignore[arg-type]


def test_one_embedder_call_per_batch() -> None:
    calls: list[int] = []

    def embed(texts: list[str]) -> Any:
        calls.append(len(texts))
        return HASHING.embed(texts)

    index = TableIndex.build(
        tabret.demo_catalog(), CallableEmbedder(embed, HASHING.name), progress=False
    )
    questions = GeneratedQuestions.build(index, batch_size=50)
    calls.clear()
    ReverseRetriever(index, questions).retrieve(QUESTIONS * 3, 4)
    assert calls == [6]
    assert len(questions) == 69


def test_reranker_gets_triples_in_one_batch(
    demo_index: TableIndex, template: GeneratedQuestions
) -> None:
    seen: list[list[tuple[str, str, str]]] = []

    def rerank(triples: list[tuple[str, str, str]]) -> list[float]:
        seen.append(triples)
        return [float(i % 7) for i in range(len(triples))]

    plain = ReverseRetriever(demo_index, template, candidates=7).retrieve(QUESTIONS, 7)
    res = ReverseRetriever(demo_index, template, reranker=rerank, candidates=7).retrieve(
        QUESTIONS, 3
    )
    assert len(seen) == 1
    assert len(seen[0]) == 14
    question, schema, q_o = seen[0][0]
    assert question == QUESTIONS[0]
    assert schema == demo_index.table_text(plain[0].tables[0].id)
    assert q_o == template[plain[0].tables[0].id]
    # the re-ranker prefers the last of the 7 candidates
    assert [t.id for t in res[0].tables] == [t.id for t in plain[0].tables][::-1][:3]
    assert [t.score for t in res[0].tables] == [6.0, 5.0, 4.0]
    assert res[0].trace[-1].step == "rerank"


@pytest.mark.parametrize(
    ("answer", "error", "message"),
    [
        (lambda n: [1.0] * (n - 1), ValueError, "scores for"),
        (lambda n: np.zeros((n, 2)), TypeError, "1-D"),
        (lambda n: "high", TypeError, "1-D"),
        (lambda n: [float("nan")] * n, tabret.Error, "NaN"),
    ],
)
def test_bad_reranker_answers(
    demo_index: TableIndex, template: GeneratedQuestions, answer: Any, error: Any, message: str
) -> None:
    retriever = ReverseRetriever(
        demo_index, template, reranker=lambda triples: answer(len(triples)), candidates=3
    )
    with pytest.raises(error, match=message):
        retriever.retrieve(QUESTIONS, 3)


def test_reranker_exception_keeps_its_type(
    demo_index: TableIndex, template: GeneratedQuestions
) -> None:
    def broken(triples: list[tuple[str, str, str]]) -> list[float]:
        raise KeyError("model offline")

    with pytest.raises(KeyError, match="model offline"):
        ReverseRetriever(demo_index, template, reranker=broken).retrieve(QUESTIONS, 3)
    with pytest.raises(TypeError, match="reranker must be a callable"):
        ReverseRetriever(demo_index, template, reranker=42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="candidates must be positive"):
        ReverseRetriever(demo_index, template, candidates=0)


def test_threads_match_serial(demo_index: TableIndex, template: GeneratedQuestions) -> None:
    retriever = ReverseRetriever(demo_index, template)
    batches = [[q] * 5 for q in QUESTIONS * 4]
    serial = [retriever.retrieve(b, 5) for b in batches]

    def run(batch: list[str]) -> list[Retrieval]:
        return retriever.retrieve(batch, 5)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(run, batches))
    assert threaded == serial


def test_differs_from_single_hop(demo_index: TableIndex, template: GeneratedQuestions) -> None:
    dense = DenseRetriever(demo_index).retrieve(QUESTIONS, 10)
    reverse = ReverseRetriever(demo_index, template).retrieve(QUESTIONS, 10)
    assert [r.tables for r in dense] != [r.tables for r in reverse]


def test_cli_eval_reverse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "--benchmark", "demo", "--embedder", "hashing", "--quiet", "--k", "3", "5"]
    assert main([*args, "--method", "single-hop", "reverse"]) == 0
    out = capsys.readouterr().out
    assert "| demo | hashing(" in out
    assert "| reverse |" in out
    none = str(tmp_path / "none")
    assert main([*args, "--method", "reverse", "--generated-questions", none]) == 1
    assert "none: no such directory" in capsys.readouterr().err


def _near_tie_embedder(dim: int = 384) -> CallableEmbedder:
    """Every text a unit vector near one direction (noise 0.01 a component, a stable function of
    the text): the scores of all tables lie within about 1e-4 of each other, where a matrix
    product over a batch of questions and a vector product for one question round differently
    in the 7th digit."""
    import zlib

    base = np.random.default_rng(7).standard_normal(dim).astype(np.float32)

    def embed(texts: list[str]) -> Any:
        rows = []
        for t in texts:
            noise = np.random.default_rng(zlib.crc32(t.encode())).standard_normal(dim)
            v = base + 0.01 * noise.astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32)

    return CallableEmbedder(embed, "near-ties")


def test_batch_and_single_rank_near_ties_alike() -> None:
    """Issue 47 item 7: a question ranks the same tables in the same order, with the same
    scores, in a batch and alone, near-ties included (before: 59 of 60 questions differed)."""
    cat = tabret.Catalog()
    db = cat.add_database("wide")
    for i in range(2000):
        cat.add_column(cat.add_table(db, f"table_{i}"), f"column_{i}", "int")
    index = TableIndex.build(cat, _near_tie_embedder(), kind="exact", progress=False)
    retriever = ReverseRetriever(index, GeneratedQuestions.build(index, progress=False))
    questions = [f"question number {i}" for i in range(60)]
    batch = retriever.retrieve(questions, 10)
    alone = [retriever.retrieve(q, 10) for q in questions]
    for b, a in zip(batch, alone, strict=True):
        assert [t.id for t in b.tables] == [t.id for t in a.tables], b.question
        assert [t.score for t in b.tables] == [t.score for t in a.tables], b.question
        scores = [t.score for t in b.tables]
        assert scores == sorted(scores, reverse=True)
        reverse = [e.score for e in b.trace if e.step == "reverse"]
        assert reverse == scores  # a table's score is its trace's R
