"""Reverse Engineering (Liu et al.): a question generated per table at index time, fused with
the schema similarity by a dynamic weight, and an optional conditional re-ranker.

At index time every table gets one generated question q_o (:class:`GeneratedQuestions`: from
the offline template generator, or from an LLM in one batch, optionally through a response
cache), embedded once with the index's embedder and saved beside the index, so that an index
built once never asks the LLM again. At query time (:class:`ReverseRetriever`), with
r = cos(q, schema), r_hat = cos(q, q_o) and r_c = cos(q, E_s + E_qo) (cosine is scale-invariant,
so normalising the sum would not change it), the score is R = alpha * r + (1 - alpha) * r_hat
with alpha = max(r_c, 1 - r_c). The top K (40) by R may go to a re-ranker callable that scores
``(question, schema, q_o)`` triples.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from tabret import _core
from tabret.index import Progress, TableIndex, _NativeRetriever, _progress
from tabret.llms import CachedLLM, ResponseCache, _name_of
from tabret.rewriting import LLMLike, LLMQuestionGenerator, PromptSet, TemplateQuestionGenerator

if TYPE_CHECKING:
    from tabret._core import FloatMatrix

__all__ = ["GeneratedQuestions", "Reranker", "ReverseRetriever", "reverse_fuse"]

PathLike = str | os.PathLike[str]
#: Scores a batch of ``(question, schema text, generated question)`` triples, one float each
#: (higher is better): a list, tuple or 1-D array.
Reranker = Callable[[list[tuple[str, str, str]]], Any]

_REVERSE = _core.ReverseRetriever.defaults


def reverse_fuse(r: float, r_hat: float, sum_norm: float) -> tuple[float, float, float]:
    """``(r_c, alpha, R)`` from r = cos(q, E_s), r_hat = cos(q, E_qo) and sum_norm =
    ``|E_s + E_qo|`` (unit vectors): r_c = (r + r_hat) / sum_norm (0 for a zero sum),
    alpha = max(r_c, 1 - r_c), R = alpha * r + (1 - alpha) * r_hat."""
    r_c, alpha, fused = _core.reverse_fuse(r, r_hat, sum_norm)
    return r_c, alpha, fused


class GeneratedQuestions:
    """The generated question q_o of every table of one :class:`TableIndex`, embedded once with
    the index's embedder. Build with :meth:`build` (template or LLM) or :meth:`from_questions`,
    then :meth:`save` / :meth:`load` (a versioned, checksummed directory; loading never calls a
    generator and checks that the questions belong to the index)."""

    def __init__(self, core: _core.QuestionIndex, index: TableIndex) -> None:
        self._core = core
        self.index = index

    @classmethod
    def build(
        cls,
        index: TableIndex,
        generator: Literal["template"] | LLMLike = "template",
        *,
        prompts: PromptSet | None = None,
        cache: ResponseCache | PathLike | None = None,
        max_columns: int = 6,
        batch_size: int = 512,
        progress: Progress = True,
    ) -> GeneratedQuestions:
        """One question per table: ``"template"`` (offline, ``What are the c1, … and cn of each
        <table>?`` over the first ``max_columns`` columns) or an LLM asked once for every table
        (``reverse_question`` prompt; through ``cache`` when given, so a rebuild is free)."""
        ids = list(range(index.catalog.num_tables))
        if isinstance(generator, str):
            if generator != "template":
                raise ValueError(f"generator must be 'template' or an LLM, not {generator!r}")
            texts = TemplateQuestionGenerator(index.catalog, max_columns).generate(ids)
            name = "template" if max_columns == 6 else f"template:{max_columns}"
        else:
            llm: LLMLike = CachedLLM(generator, cache) if cache is not None else generator
            texts = LLMQuestionGenerator(index.catalog, llm, prompts).generate(ids)
            name = f"llm:{_name_of(llm)}"
        return cls.from_questions(index, texts, name, batch_size=batch_size, progress=progress)

    @classmethod
    def from_questions(
        cls,
        index: TableIndex,
        questions: Sequence[str],
        generator: str = "given",
        *,
        batch_size: int = 512,
        progress: Progress = True,
    ) -> GeneratedQuestions:
        """Given questions, ``questions[t]`` for table ``t`` (e.g. written by a fine-tuned model
        elsewhere), embedded with the index's embedder (a bar while they are, unless
        ``progress=False``); ``generator`` names them in the manifest."""
        core = _core.QuestionIndex.from_questions(
            index.core,
            list(questions),
            index._embed,
            index.embedder_name,
            generator,
            batch_size,
            _progress(progress),
        )
        return cls(core, index)

    @classmethod
    def load(cls, path: PathLike, index: TableIndex) -> GeneratedQuestions:
        """Loads the questions saved in the index directory ``path`` for ``index``; a corrupt
        file or a directory without questions raises :class:`tabret.FileError`, questions of
        another index :class:`tabret.Error`."""
        return cls(_core.QuestionIndex.load(path, index.core), index)

    def save(self, path: PathLike) -> None:
        """Saves the questions into the index directory ``path``, which must hold their index
        (saved, replaced and loaded with it; ``index.save(path, questions=q)`` does both)."""
        self._core.save(path)

    @property
    def core(self) -> _core.QuestionIndex:
        return self._core

    @property
    def embedder_name(self) -> str:
        return self._core.embedder_name

    def _embedded(self) -> list[tuple[list[str], FloatMatrix]]:
        """Each question, with its vector (:func:`tabret.index.reusing`)."""
        return [(self._core.questions, self._core.vectors)]

    @property
    def questions(self) -> list[str]:
        return self._core.questions

    @property
    def generator(self) -> str:
        return self._core.generator

    def __len__(self) -> int:
        return len(self._core)

    def __getitem__(self, table: int) -> str:
        return self._core.questions[table]

    def __repr__(self) -> str:
        return f"GeneratedQuestions({len(self)} tables, generator={self.generator!r})"


class ReverseRetriever(_NativeRetriever):
    """Reverse Engineering retrieval: tables ranked by the fused score R (see the module),
    or, with a ``reranker``, the top ``max(k, candidates)`` by R re-scored by it in one call per
    batch. A batch of questions costs one embedder call; no LLM is called at query time.

    Each returned table's trace has steps ``reverse`` (query = q_o, score = R),
    ``reverse:schema`` (r), ``reverse:question`` (r_hat), ``reverse:alpha`` and, when re-ranked,
    ``rerank``. Columns (``k_columns``) are ranked by plain cosine, as single-hop does."""

    ranks_columns = True

    def __init__(
        self,
        index: TableIndex,
        questions: GeneratedQuestions | None = None,
        *,
        reranker: Reranker | None = None,
        candidates: int = _REVERSE["candidates"],
    ) -> None:
        if candidates <= 0:
            raise ValueError(f"candidates must be positive, got {candidates}")
        self.index = index
        self.questions = questions if questions is not None else GeneratedQuestions.build(index)
        self._core = _core.ReverseRetriever(
            index.core,
            self.questions.core,
            index._embed,
            index.embedder_name,
            reranker=reranker,
            candidates=candidates,
        )
