"""A LlamaIndex retriever over any tabret retriever (extra: ``pip install 'tabret[llamaindex]'``).

from tabret.integrations.llama_index import TabretRetriever
nodes = TabretRetriever(DenseRetriever(index), k=5).retrieve("How many singers?")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tabret.index import Retriever
from tabret.integrations._common import ContentFormat, missing_extra, table_documents

if TYPE_CHECKING:
    from tabret._core import ColumnStats

try:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise missing_extra(__name__, "llama-index-core", "llamaindex") from err

__all__ = ["TabretRetriever"]

# Bookkeeping that would only distract an LLM or an embedder reading the node.
_NOT_FOR_MODELS = ["table_id", "score", "rank", "trace"]


class TabretRetriever(BaseRetriever):
    """Returns one ``NodeWithScore`` per retrieved table: a ``TextNode`` with the table's text
    (DDL by default), a stable ``id_`` (``tabret:<db>.<table>``) and database, table, score,
    rank and trace in ``metadata``; the node's score is tabret's score."""

    def __init__(
        self,
        retriever: Retriever,
        k: int = 5,
        content: ContentFormat = "ddl",
        *,
        samples: int = 0,
        stats: ColumnStats | None = None,
    ) -> None:
        super().__init__()
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        if samples < 0:
            raise ValueError(f"samples must be >= 0, got {samples}")
        self._retriever = retriever
        self._k = k
        self._content: ContentFormat = content
        self._samples = samples
        self._stats = stats

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        docs = table_documents(
            self._retriever,
            query_bundle.query_str,
            self._k,
            self._content,
            samples=self._samples,
            stats=self._stats,
        )
        return [
            NodeWithScore(
                node=TextNode(
                    id_=d.id,
                    text=d.content,
                    metadata=d.metadata,
                    excluded_llm_metadata_keys=_NOT_FOR_MODELS,
                    excluded_embed_metadata_keys=_NOT_FOR_MODELS,
                ),
                score=float(d.metadata["score"]),
            )
            for d in docs
        ]
