"""Prompts, parsers and rewriters from Python: the team's messy answers (tests/data/llm), a few
more written here, prompt overrides, offline rewriters and the LLM rewriters with fake LLMs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tabret
from tabret.rewriting import (
    Completion,
    CoverageRemovalRewriter,
    CrushRewriter,
    DecompositionRewriter,
    LexicalRemovalRewriter,
    LLMQuestionGenerator,
    MurreRewriter,
    Probe,
    PromptSet,
    QueryRewriter,
    RecordedRewriter,
    RewriteRequest,
    RewriteResult,
    SubQuery,
    TemplateQuestionGenerator,
    builtin_prompts,
    default_prompts,
    extract_question,
    normalize_question,
    parse_completion,
    parse_decomposition,
    parse_hallucinated_schema,
    parse_question,
    prompts_dir,
)

LLM_FIXTURES = Path(__file__).resolve().parents[1] / "data" / "llm"


def _cases(name: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads((LLM_FIXTURES / name).read_text(encoding="utf-8"))
    return cases


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [str(c["name"]) for c in cases]


SCHEMA_CASES = _cases("hallucinated_schema.json")
COMPLETION_CASES = _cases("completion.json")
DECOMPOSITION_CASES = _cases("decomposition.json")
QUESTION_CASES = _cases("question.json")


def test_every_parser_has_at_least_30_messy_answers() -> None:
    for cases in (SCHEMA_CASES, COMPLETION_CASES, DECOMPOSITION_CASES, QUESTION_CASES):
        assert len(cases) >= 30


# ---------------------------------------------------------------------------------------------
# Parsers over the shared fixtures


def _check(
    case: dict[str, Any], parse: Callable[[str], object], want: Callable[[Any], object]
) -> None:
    """``parse`` of the case's answer equals ``want`` of its ``expected``, or raises
    LLMParseError where ``expected`` is "error"."""
    if case["expected"] == "error":
        with pytest.raises(tabret.LLMParseError):
            parse(case["answer"])
        return
    assert parse(case["answer"]) == want(case["expected"])


@pytest.mark.parametrize("case", SCHEMA_CASES, ids=_ids(SCHEMA_CASES))
def test_hallucinated_schema_fixture(case: dict[str, Any]) -> None:
    _check(case, parse_hallucinated_schema, lambda e: [Probe(t, c) for t, c in e])


@pytest.mark.parametrize("case", COMPLETION_CASES, ids=_ids(COMPLETION_CASES))
def test_completion_fixture(case: dict[str, Any]) -> None:
    form = case.get("form", "tables")
    _check(case, lambda a: parse_completion(a, form), lambda e: Completion(e["stop"], e["lines"]))


@pytest.mark.parametrize("case", DECOMPOSITION_CASES, ids=_ids(DECOMPOSITION_CASES))
def test_decomposition_fixture(case: dict[str, Any]) -> None:
    _check(case, parse_decomposition, lambda e: [SubQuery(c, a) for c, a in e])


@pytest.mark.parametrize("case", QUESTION_CASES, ids=_ids(QUESTION_CASES))
def test_question_fixture(case: dict[str, Any]) -> None:
    _check(case, parse_question, lambda e: e)


# ---------------------------------------------------------------------------------------------
# A few more messy answers, written for the Python side


def test_long_answers_parse_each_item_once_and_huge_ones_are_refused() -> None:
    """A 20,000-line answer keeps each item once, in answer order (the duplicate check is a
    hash look-up: bench/cpp/micro.cpp's BM_ParseLongAnswer times it); an answer over the 1 MiB
    a parser reads is an LLMParseError before any work, for every parser."""
    lines = [f"table_{i % 10_000}(a, b)" for i in range(20_000)]  # each item twice
    probes = parse_hallucinated_schema("\n".join(lines))
    assert [p.text for p in probes[:3]] == ["table_0.a", "table_0.b", "table_1.a"]
    assert len(probes) == 20_000
    completion = parse_completion("\n".join(lines))
    assert completion.lines[:2] == ["table_0(a, b)", "table_1(a, b)"]
    assert len(completion.lines) == 10_000
    huge = "x(y)\n" * 209_716  # 1 MiB and 4 bytes
    for parse in (parse_hallucinated_schema, parse_completion, parse_decomposition):
        with pytest.raises(tabret.LLMParseError, match="over the 1048576 bytes a parser reads"):
            parse(huge)
    with pytest.raises(tabret.LLMParseError, match="max_answer_bytes"):
        parse_question(huge)
    assert parse_hallucinated_schema(huge[: 1 << 20])[0].text == "x.y"  # at the bound: read


def test_schema_parser_messy_answers() -> None:
    answer = (
        "Sure! Here is the schema you asked for:\n```sql\n"
        "1. Schools(School_ID INT PRIMARY KEY, County VARCHAR(20))\n"
        "2. `frpm`(CDSCode, 'Free Meal Count', ...)\n```\nHope this helps."
    )
    probes = parse_hallucinated_schema(answer)
    assert [p.text for p in probes] == [
        "Schools.School_ID",
        "Schools.County",
        "frpm.CDSCode",
        "frpm.Free Meal Count",
    ]
    assert probes[0] == Probe("Schools", "School_ID")
    assert probes[0] != Probe("Schools", "County")
    assert probes[0] != "Schools.School_ID"
    assert hash(probes[0]) == hash(Probe("Schools", "School_ID"))
    whole = parse_hallucinated_schema("the number of students per county")
    assert whole == [Probe("", "the number of students per county")]
    assert whole[0].text == "the number of students per county"
    with pytest.raises(tabret.LLMParseError, match="hallucinated schema") as info:
        parse_hallucinated_schema("the number of students", "fail")
    assert info.value.parser == "hallucinated schema"
    assert info.value.answer == "the number of students"
    assert isinstance(info.value, tabret.ParseError)
    assert isinstance(info.value, ValueError)
    with pytest.raises(ValueError, match="fallback"):
        parse_hallucinated_schema("x(y)", "maybe")  # type: ignore[arg-type]


def test_completion_parser_messy_answers() -> None:
    assert parse_completion("None.") == Completion(stop=True)
    assert parse_completion("Missing tables: none needed, the path is complete.").stop
    tables = parse_completion(
        "Missing tables:\n- concert.singer_in_concert(singer id, concert id) which links them\n"
        "- concert.concert(concert id, year)\nThese two complete the path."
    )
    assert tables == Completion(
        False,
        ["concert.singer_in_concert(singer id, concert id)", "concert.concert(concert id, year)"],
    )
    question = parse_completion(
        'Remaining question: "Which concerts did they sing in?" (the singers are known)',
        "question",
    )
    assert question.lines == ["Which concerts did they sing in?"]
    with pytest.raises(tabret.LLMParseError, match="completion"):
        parse_completion("  \n ")


def test_decomposition_parser_messy_answers() -> None:
    assert parse_decomposition('["singers:age", "concerts:year"]') == [
        SubQuery("singers", "age"),
        SubQuery("concerts", "year"),
    ]
    answer = (
        "Here is the decomposition:\n1. singers: name\n2. singers -> age\n"
        "3. Singers:Name\nNote: each line is one concept and one attribute."
    )
    assert [s.text for s in parse_decomposition(answer)] == ["singers:name", "singers:age"]
    assert SubQuery("stock").text == "stock"
    assert SubQuery("stock").attribute == ""
    with pytest.raises(tabret.LLMParseError, match="decomposition"):
        parse_decomposition("")


def test_question_parser_messy_answers() -> None:
    assert (
        parse_question(
            'Sure! Here is a question: "What is the name of the longest track?" It '
            "uses the duration column."
        )
        == "What is the name of the longest track?"
    )
    assert parse_question("User question: How many albums does each artist have?") == (
        "How many albums does each artist have?"
    )
    assert parse_question("1. What is the oldest album?\n2. Who sang it?") == (
        "What is the oldest album?"
    )
    with pytest.raises(tabret.LLMParseError, match="question"):
        parse_question("Sure!")


# ---------------------------------------------------------------------------------------------
# Prompts


def test_shipped_prompts_load_and_render() -> None:
    prompts = default_prompts()
    assert set(builtin_prompts()) <= set(prompts.names())
    assert builtin_prompts()["murre_tabulated"] == ["question", "tables"]
    assert len(prompts) >= 6
    assert "crush_bird" in prompts
    assert prompts.placeholders("reverse_question") == ["table"]
    text = prompts.render("crush_spider", {"question": "How many singers?"})
    assert text.rstrip().endswith("Schema:")
    assert extract_question(text) == "How many singers?"
    assert (prompts_dir() / "jar_decompose.txt").read_text(encoding="utf-8") == prompts.text(
        "jar_decompose"
    )
    with pytest.raises(tabret.TemplateError, match="no value for placeholder"):
        prompts.render("crush_bird", {})
    with pytest.raises(tabret.TemplateError, match="no prompt template 'nope'"):
        prompts.render("nope", {})


def test_prompt_overrides(tmp_path: Path) -> None:
    (tmp_path / "jar_decompose.txt").write_text("Split it.\nQuestion: {question}\nParts:")
    (tmp_path / "my_prompt.txt").write_text("{{literal}} {x}")
    prompts = default_prompts({"crush_bird": "Schema for:\nQuestion: {question}\n"}, tmp_path)
    assert prompts.render("crush_bird", {"question": "Q?"}) == "Schema for:\nQuestion: Q?\n"
    assert prompts.render("jar_decompose", {"question": "Q?"}).startswith("Split it.")
    assert prompts.render("my_prompt", {"x": "1", "unused": "2"}) == "{literal} 1"
    with pytest.raises(tabret.TemplateError, match="missing required placeholder"):
        default_prompts({"murre_tabulated": "Question: {question}"})
    with pytest.raises(tabret.TemplateError, match="unknown placeholder"):
        default_prompts({"crush_bird": "Question: {question} {schema}"})
    with pytest.raises(tabret.TemplateError, match="line 1, column 3"):
        PromptSet().set("x", "a {b")
    with pytest.raises(tabret.FileError):
        default_prompts(directory=tmp_path / "missing")
    empty = PromptSet()
    with pytest.raises(tabret.TemplateError, match="missing prompt templates"):
        empty.require_builtins()
    copy = prompts.copy()
    copy.set("crush_bird", "Other\nQuestion: {question}")
    assert prompts.render("crush_bird", {"question": "Q"}) != copy.render(
        "crush_bird", {"question": "Q"}
    )


def test_prompt_override_changes_what_the_llm_sees() -> None:
    seen: list[str] = []

    def llm(prompts: list[str]) -> list[str]:
        seen.extend(prompts)
        return ["t(a)"] * len(prompts)

    prompts = default_prompts({"crush_bird": "Mine.\nQuestion: {question}\nSchema:"})
    assert CrushRewriter(llm, prompts).rewrite(["Q?"]) == [RewriteResult(False, ["t.a"])]
    assert seen == ["Mine.\nQuestion: Q?\nSchema:"]
    with pytest.raises(tabret.TemplateError):
        CrushRewriter(llm, prompts, template="no_such_template")


# ---------------------------------------------------------------------------------------------
# Rewriters


def school() -> tabret.Catalog:
    """school: student(student_id, name, age), course(course_id, title, teacher_id),
    enrollment(student_id, course_id), teacher(teacher_id, name); shop: product(id, price)."""
    cat = tabret.Catalog()
    db = cat.add_database("school")
    for table, columns in {
        "student": ["student_id", "name", "age"],
        "course": ["course_id", "title", "teacher_id"],
        "enrollment": ["student_id", "course_id"],
        "teacher": ["teacher_id", "name"],
    }.items():
        t = cat.add_table(db, table)
        for c in columns:
            cat.add_column(t, c)
    shop = cat.add_database("shop")
    product = cat.add_table(shop, "product")
    cat.add_column(product, "id")
    cat.add_column(product, "price")
    return cat


STUDENT, COURSE, ENROLLMENT, TEACHER, PRODUCT = range(5)


def test_lexical_removal() -> None:
    rewriter = LexicalRemovalRewriter(school())
    assert isinstance(rewriter, QueryRewriter)
    question = "What are the names of students enrolled in the course titled 'Algebra'?"
    results = rewriter.rewrite(
        [
            question,
            RewriteRequest(question, [STUDENT]),
            RewriteRequest(question, [STUDENT, COURSE, ENROLLMENT]),
        ]
    )
    assert results[0] == RewriteResult(False, [normalize_question(question)])
    assert results[1] == RewriteResult(False, ["school(enrolled, course, titled)"])
    assert results[2].stop or results[2].queries  # whatever is left after three tables
    assert "algebra" not in LexicalRemovalRewriter.content_terms(question)
    terms = LexicalRemovalRewriter(school(), "terms")
    assert terms.rewrite([RewriteRequest(question, [STUDENT])])[0].queries == [
        "enrolled course titled"
    ]
    assert rewriter.remaining_terms(RewriteRequest(question, [STUDENT])) == [
        "enrolled",
        "course",
        "titled",
    ]
    with pytest.raises(TypeError, match="list of RewriteRequest or str"):
        rewriter.rewrite("a question")
    with pytest.raises(TypeError, match="RewriteRequest or a str"):
        rewriter.rewrite([42])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="output"):
        LexicalRemovalRewriter(school(), "table")  # type: ignore[arg-type]


def test_the_rewriter_owns_its_catalog() -> None:
    cat = school()
    rewriter = TemplateQuestionGenerator(cat)
    del cat
    assert rewriter.generate([TEACHER]) == ["What are the teacher id and name of each teacher?"]


def test_coverage_removal_with_recorded_and_callable_decompositions() -> None:
    question = "What is the title of each course of teacher Smith, and the age of its students?"
    source = tabret.llms.ReplaySource("decomp", "decomposition")
    source.add(question, ["course:title", "teacher:name", "student:age"])
    recorded = CoverageRemovalRewriter(school(), source)

    def decompose(q: str) -> list[SubQuery | str]:
        assert q == question
        return [SubQuery("course", "title"), "teacher:name", "student: age"]

    by_callable = CoverageRemovalRewriter(school(), decompose)
    for rewriter in (recorded, by_callable):
        out = rewriter.rewrite(
            [
                RewriteRequest(question, [COURSE]),
                RewriteRequest(question, [COURSE, TEACHER, STUDENT]),
            ]
        )
        assert out[0] == RewriteResult(False, ["school.teacher(name)", "school.student(age)"])
        assert out[1] == RewriteResult(True, [])
        assert rewriter.uncovered(RewriteRequest(question, [COURSE, TEACHER])) == [
            SubQuery("student", "age")
        ]
    with pytest.raises(tabret.MissingRecordingError):
        recorded.rewrite([RewriteRequest("Unknown?", [COURSE])])
    crush = tabret.llms.ReplaySource("crush", "hallucinated_schema")
    with pytest.raises(tabret.Error, match="not a decomposition"):
        CoverageRemovalRewriter(school(), crush)

    def bad(q: str) -> Any:
        return 3

    with pytest.raises(TypeError, match="list of SubQuery or str"):
        CoverageRemovalRewriter(school(), bad).rewrite([RewriteRequest(question, [COURSE])])


def test_murre_rewriter_with_a_fake_llm() -> None:
    calls: list[list[str]] = []

    def llm(prompts: list[str]) -> list[str]:
        calls.append(prompts)
        return [
            "None"
            if "school.teacher(" in p.split("Retrieved tables:")[-1]
            else "school.teacher(name)"
            for p in prompts
        ]

    rewriter = MurreRewriter(school(), llm)
    question = "Which teacher teaches Algebra?"
    out = rewriter.rewrite(
        [
            RewriteRequest(question),
            RewriteRequest(question, [COURSE]),
            RewriteRequest(question, [COURSE]),
            RewriteRequest(question, [COURSE, TEACHER]),
        ]
    )
    assert out == [
        RewriteResult(False, [question]),
        RewriteResult(False, ["school.teacher(name)"]),
        RewriteResult(False, ["school.teacher(name)"]),
        RewriteResult(True, []),
    ]
    assert len(calls) == 1
    assert len(calls[0]) == 2  # hop 1 costs nothing; identical prompts are sent once
    prompt = rewriter.prompt(RewriteRequest(question, [COURSE]))
    assert "school.course(course id, title, teacher id)" in prompt
    assert extract_question(prompt) == question
    assert MurreRewriter(school(), llm).rewrite([question]) == [RewriteResult(False, [question])]
    assert len(calls) == 1


def test_parse_failure_policy() -> None:
    def empty(prompts: list[str]) -> list[str]:
        return [""] * len(prompts)

    assert DecompositionRewriter(empty).rewrite(["How  many?"]) == [
        RewriteResult(False, ["How many?"])
    ]
    with pytest.raises(tabret.LLMParseError) as info:
        DecompositionRewriter(empty, on_parse_failure="raise").rewrite(["How many?"])
    assert info.value.answer == ""
    with pytest.raises(ValueError, match="on_parse_failure"):
        DecompositionRewriter(empty, on_parse_failure="ignore")  # type: ignore[arg-type]


def test_question_generators() -> None:
    cat = school()
    template = TemplateQuestionGenerator(cat, max_columns=2)
    assert template.generate([STUDENT, PRODUCT]) == [
        "What are the student id and name of each student?",
        "What are the id and price of each product?",
    ]

    def llm(prompts: list[str]) -> list[str]:
        return [
            "Sure! Question: Which products cost more than 10 dollars? (uses price)"
            if "product" in p.splitlines()[-2]
            else "I cannot help with that."
            for p in prompts
        ]

    generator = LLMQuestionGenerator(cat, llm)
    questions = generator.generate([PRODUCT, STUDENT])
    assert questions[0] == "Which products cost more than 10 dollars?"
    assert questions[1]  # a parsed line or the template fallback
    with pytest.raises(tabret.SchemaError):
        template.generate([99])


def test_recorded_rewriter() -> None:
    source = tabret.llms.ReplaySource("crush", "hallucinated_schema")
    source.add("How many singers?", ["singer(singer_id, name)", "concert(year)"])
    rewriter = RecordedRewriter(source)
    assert rewriter.rewrite(["How many singers?"]) == [
        RewriteResult(False, ["singer.singer_id", "singer.name", "concert.year"])
    ]
    with pytest.raises(tabret.MissingRecordingError, match="no recorded answer"):
        rewriter.rewrite(["Who?"])


def test_requests_and_results_are_values() -> None:
    r = RewriteRequest("Q?", [1, 2])
    assert r == RewriteRequest("Q?", [1, 2])
    assert r != RewriteRequest("Q?")
    assert {r, RewriteRequest("Q?", [1, 2])} == {r}
    assert r.path == [1, 2]
    assert "Q?" in repr(r)
    result = RewriteResult(queries=["a"])
    assert not result.stop
    assert repr(result) == "RewriteResult(stop=False, queries=['a'])"
