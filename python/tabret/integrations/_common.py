"""What both framework adapters share: one retrieved table as text plus metadata."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from tabret.index import Retriever

if TYPE_CHECKING:
    from tabret._core import ColumnStats
    from tabret.catalog import Catalog
    from tabret.results import Retrieval

__all__ = [
    "ContentFormat",
    "RetrieverLike",
    "TableDocument",
    "documents",
    "missing_extra",
    "table_documents",
]

ContentFormat = Literal["ddl", "signature", "words", "described"]


#: Any tabret retriever (kept for code written before :class:`tabret.Retriever`).
RetrieverLike = Retriever


def missing_extra(module: str, package: str, extra: str) -> ImportError:
    """The error of an adapter ``module`` imported without its framework ``package``."""
    return ImportError(f"{module} needs {package}: pip install 'tabret[{extra}]'")


@dataclass(frozen=True)
class TableDocument:
    """One retrieved table, framework-neutral."""

    id: str  # stable across runs: "tabret:<db>.<table>"
    content: str
    metadata: dict[str, Any]


def table_documents(
    retriever: Retriever,
    question: str,
    k: int,
    content: ContentFormat = "ddl",
    *,
    samples: int = 0,
    stats: ColumnStats | None = None,
) -> list[TableDocument]:
    """The top-``k`` tables for ``question`` (cut where an adaptive method cut), best first."""
    if not isinstance(question, str):
        raise TypeError(f"question must be a str, got {type(question).__name__}")
    return documents(
        retriever.retrieve(question, k),
        retriever.index.catalog,
        content,
        samples=samples,
        stats=stats,
    )


def documents(
    res: Retrieval,
    catalog: Catalog,
    content: ContentFormat,
    *,
    samples: int = 0,
    stats: ColumnStats | None = None,
) -> list[TableDocument]:
    """The tables of one retrieval as documents (cut where an adaptive method cut), each as
    :meth:`Retrieval.to_prompt` writes it: ``content`` format, original names, ``samples``
    values per column from ``stats`` in the DDL."""
    tables = res.tables if res.cut is None else res.tables[: res.cut]
    out = []
    for rank, t in enumerate(tables):
        table = catalog.table(t.id)
        trace = [
            {"step": s.step, "query": s.query, "score": s.score}
            for s in res.trace
            if s.table == t.name
        ]
        out.append(
            TableDocument(
                id=f"tabret:{t.name}",
                content=catalog.serialize_table(
                    t.id, format=content, names="original", samples=samples, stats=stats
                ),
                metadata={
                    "database": catalog.database(table.database).name,
                    "table": table.name,
                    "qualified_name": t.name,
                    "table_id": t.id,
                    "score": t.score,
                    "rank": rank,
                    "trace": trace,
                },
            )
        )
    return out
