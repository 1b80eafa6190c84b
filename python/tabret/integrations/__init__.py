"""Adapters for LLM frameworks: ``tabret.integrations.langchain`` and
``tabret.integrations.llama_index`` (optional extras ``langchain`` and ``llamaindex``).

Both turn any tabret retriever into the framework's retriever; each retrieved table becomes one
document whose content is the table's text (DDL by default, what a SQL-writing LLM needs) and
whose metadata carry the database, table, score, rank and trace.
"""

from tabret.integrations._common import RetrieverLike, TableDocument, table_documents

__all__ = ["RetrieverLike", "TableDocument", "table_documents"]
