"""A LangChain retriever over any tabret retriever (extra: ``pip install 'tabret[langchain]'``).

from tabret.integrations.langchain import TabretRetriever
docs = TabretRetriever(retriever=DenseRetriever(index), k=5).invoke("How many singers?")
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from tabret.index import Retriever
from tabret.integrations._common import ContentFormat, documents, missing_extra, table_documents

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnableConfig
    from langchain_core.runnables.config import run_in_executor
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise missing_extra(__name__, "langchain-core", "langchain") from err
from pydantic import ConfigDict, Field

__all__ = ["TabretRetriever"]

#: The retriever running a batch and the documents of the batch's questions, retrieved in one
#: native call (each batch sets its own: LangChain runs the batch's invocations in copies of
#: its context).
_PREFETCHED: ContextVar[tuple[object, dict[str, list[Document]]] | None] = ContextVar(
    "prefetched", default=None
)


class TabretRetriever(BaseRetriever):
    """Returns one ``Document`` per retrieved table: the table's text as ``page_content``
    (DDL by default), database, table, score, rank and trace in ``metadata``, and a stable
    ``id`` (``tabret:<db>.<table>``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Any
    """A tabret retriever (``DenseRetriever``, ``LexicalRetriever``, ...)."""
    k: int = Field(default=5, gt=0)
    content: ContentFormat = "ddl"
    samples: int = Field(default=0, ge=0)
    """Sample values per column in the DDL, from ``stats``."""
    stats: Any = None
    """Column statistics (:func:`tabret.column_stats_from_database`) for ``samples``."""

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        owner, prefetched = _PREFETCHED.get() or (None, {})
        if owner is self and query in prefetched:
            return [d.model_copy(deep=True) for d in prefetched[query]]
        retriever: Retriever = self.retriever
        return _to_langchain(
            table_documents(
                retriever, query, self.k, self.content, samples=self.samples, stats=self.stats
            )
        )

    def _prefetch(self, inputs: list[Any]) -> dict[str, list[Document]]:
        """The documents of every str input, from one batched ``retrieve``."""
        questions = list(dict.fromkeys(q for q in inputs if isinstance(q, str)))
        if not questions:
            return {}
        retriever: Retriever = self.retriever
        results = retriever.retrieve(questions, self.k)
        catalog = retriever.index.catalog
        return {
            q: _to_langchain(
                documents(r, catalog, self.content, samples=self.samples, stats=self.stats)
            )
            for q, r in zip(questions, results, strict=True)
        }

    def batch(
        self,
        inputs: list[Any],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """One native ``retrieve`` for the whole batch (not one per question); each input still
        runs as its own invocation, with its callbacks."""
        token = _PREFETCHED.set((self, self._prefetch(inputs)))
        try:
            return super().batch(inputs, config, return_exceptions=return_exceptions, **kwargs)
        finally:
            _PREFETCHED.reset(token)

    async def abatch(
        self,
        inputs: list[Any],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """As :meth:`batch`, asynchronously: the native retrieval runs in LangChain's executor,
        as ``ainvoke``'s does, so the event loop keeps running meanwhile."""
        cfg = config if config is None or isinstance(config, dict) else None
        prefetched = await run_in_executor(cfg, self._prefetch, inputs)
        token = _PREFETCHED.set((self, prefetched))
        try:
            return await super().abatch(
                inputs, config, return_exceptions=return_exceptions, **kwargs
            )
        finally:
            _PREFETCHED.reset(token)


def _to_langchain(docs: list[Any]) -> list[Document]:
    return [Document(page_content=d.content, metadata=d.metadata, id=d.id) for d in docs]
