"""A LangChain retriever over any tabret retriever (extra: ``pip install 'tabret[langchain]'``).

from tabret.integrations.langchain import TabretRetriever
docs = TabretRetriever(retriever=DenseRetriever(index), k=5).invoke("How many singers?")
"""

from __future__ import annotations

from typing import Any

from tabret.index import Retriever
from tabret.integrations._common import ContentFormat, missing_extra, table_documents

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise missing_extra(__name__, "langchain-core", "langchain") from err
from pydantic import ConfigDict, Field

__all__ = ["TabretRetriever"]


class TabretRetriever(BaseRetriever):
    """Returns one ``Document`` per retrieved table: the table's text as ``page_content``
    (DDL by default), database, table, score, rank and trace in ``metadata``, and a stable
    ``id`` (``tabret:<db>.<table>``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Any
    """A tabret retriever (``DenseRetriever``, ``LexicalRetriever``, ...)."""
    k: int = Field(default=5, gt=0)
    content: ContentFormat = "ddl"

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        retriever: Retriever = self.retriever
        return [
            Document(page_content=d.content, metadata=d.metadata, id=d.id)
            for d in table_documents(retriever, query, self.k, self.content)
        ]
