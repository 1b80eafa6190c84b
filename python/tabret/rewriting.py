"""Query rewriting: prompt templates, parsers of messy LLM answers, and rewriters that turn a
question (and the tables retrieved so far) into search texts, with an LLM or without one.

Every rewriter has one call shape, ``rewrite(requests) -> results``: a list of
:class:`RewriteRequest` (or plain question strings, for an empty path) in, one
:class:`RewriteResult` (``stop`` or ``queries``) per request out, in order. An LLM-backed rewriter
makes one LLM call per batch, with identical prompts sent once, and runs without the GIL; a
Python LLM is entered once per batch.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from tabret import _core
from tabret._core import (
    Completion,
    CoverageRemovalRewriter,
    LexicalRemovalRewriter,
    LLMParseError,
    NativeLLM,
    Probe,
    PromptSet,
    RecordedRewriter,
    RewriteRequest,
    RewriteResult,
    SubQuery,
    TemplateError,
    TemplateQuestionGenerator,
    builtin_prompts,
    extract_question,
    loose_question_key,
    normalize_question,
    parse_completion,
    parse_decomposition,
    parse_hallucinated_schema,
    parse_question,
)
from tabret.catalog import Catalog
from tabret.llms import LLM, _checked_llm

__all__ = [
    "Completion",
    "CompletionForm",
    "CoverageRemovalRewriter",
    "CrushRewriter",
    "DecompositionRewriter",
    "LLMParseError",
    "LLMQuestionGenerator",
    "LexicalRemovalRewriter",
    "MurreRewriter",
    "OnParseFailure",
    "Probe",
    "PromptSet",
    "QueryRewriter",
    "RecordedRewriter",
    "RemovalOutput",
    "RewriteRequest",
    "RewriteResult",
    "SchemaFallback",
    "SubQuery",
    "TemplateError",
    "TemplateQuestionGenerator",
    "builtin_prompts",
    "default_prompts",
    "extract_question",
    "loose_question_key",
    "normalize_question",
    "parse_completion",
    "parse_decomposition",
    "parse_hallucinated_schema",
    "parse_question",
    "prompts_dir",
]

PathLike = str | os.PathLike[str]
#: What parse_hallucinated_schema does with an answer without any ``name(cols)``.
SchemaFallback = Literal["whole_answer", "fail"]
#: What the MURRE prompt asks for: missing tables, or a rewritten question.
CompletionForm = Literal["tables", "question"]
#: What an LLM rewriter does with an answer that does not parse.
OnParseFailure = Literal["use_question", "raise"]
#: What a removal rewriter writes: ``db(w1, w2)``-style tables, or plain words.
RemovalOutput = Literal["tabulated", "terms"]
LLMLike = LLM | NativeLLM | Callable[[list[str]], list[str]]


@runtime_checkable
class QueryRewriter(Protocol):
    """A batch rewriter: one result per request, in order."""

    def rewrite(self, requests: Sequence[RewriteRequest | str]) -> list[RewriteResult]: ...


def prompts_dir() -> Path:
    """The shipped prompt templates: ``tabret/data/prompts/<name>.txt``."""
    return Path(str(resources.files("tabret") / "data" / "prompts"))


def default_prompts(
    overrides: Mapping[str, str] | None = None, directory: PathLike | None = None
) -> PromptSet:
    """The shipped templates, then every ``*.txt`` of ``directory`` (by file stem), then
    ``overrides`` (name -> template text). A built-in name must keep its placeholders
    (:func:`builtin_prompts`); a broken template raises :class:`TemplateError` naming it."""
    prompts = PromptSet.from_directory(prompts_dir())
    if directory is not None:
        prompts.load_directory(directory)
    for name, text in (overrides or {}).items():
        prompts.set(name, text)
    prompts.require_builtins()
    return prompts


class CrushRewriter(_core.CrushRewriter):
    """CRUSH4SQL: asks for the question's hallucinated schema (``crush_bird`` or
    ``crush_spider``) and returns its ``table.column`` probes; the path is ignored, never stops.
    An answer with no ``name(cols)`` becomes one whole-answer probe; an empty answer falls back
    to the question (``on_parse_failure="use_question"``) or raises :class:`LLMParseError`."""

    def __init__(
        self,
        llm: LLMLike,
        prompts: PromptSet | None = None,
        template: str = "crush_bird",
        on_parse_failure: OnParseFailure = "use_question",
    ) -> None:
        super().__init__(_checked_llm(llm), _prompts(prompts), template, on_parse_failure)


class MurreRewriter(_core.MurreRewriter):
    """MURRE: for a non-empty path, asks for the missing tables (``form="tables"``,
    ``murre_tabulated``) or a rewritten question (``form="question"``, ``murre_question``);
    an answer such as ``None`` stops. An empty path costs no call: the query is the question."""

    def __init__(
        self,
        catalog: Catalog | _core.Catalog,
        llm: LLMLike,
        prompts: PromptSet | None = None,
        form: CompletionForm = "tables",
        on_parse_failure: OnParseFailure = "use_question",
    ) -> None:
        super().__init__(catalog, _checked_llm(llm), _prompts(prompts), form, on_parse_failure)


class DecompositionRewriter(_core.DecompositionRewriter):
    """JAR-style decomposition (``jar_decompose``): the question's ``concept:attribute``
    sub-queries; the path is ignored, never stops."""

    def __init__(
        self,
        llm: LLMLike,
        prompts: PromptSet | None = None,
        on_parse_failure: OnParseFailure = "use_question",
    ) -> None:
        super().__init__(_checked_llm(llm), _prompts(prompts), on_parse_failure)


class LLMQuestionGenerator(_core.LLMQuestionGenerator):
    """Reverse Engineering at index time: one LLM-written question per table
    (``reverse_question``), one batch for all tables; an answer that does not parse falls back to
    :class:`TemplateQuestionGenerator`."""

    def __init__(
        self, catalog: Catalog | _core.Catalog, llm: LLMLike, prompts: PromptSet | None = None
    ) -> None:
        super().__init__(catalog, _checked_llm(llm), _prompts(prompts))


def _prompts(prompts: PromptSet | None) -> PromptSet:
    return prompts if prompts is not None else default_prompts()
