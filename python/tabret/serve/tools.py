"""The operations of ``tabret serve`` as typed functions of their JSON arguments: one definition,
read by the MCP server (:mod:`tabret.serve.mcp_server`: the tools' input and output schemas
and descriptions) and by the JSON HTTP API (:mod:`tabret.serve.http_api`: the request
validation and the OpenAPI description)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from tabret.cli.query import DEFAULT_K
from tabret.serve.service import (
    MAX_DESCRIBE,
    MAX_K,
    DatabaseInfo,
    FoundTables,
    IndexService,
    JoinPath,
    TableDescription,
)

__all__ = ["Databases", "DescribedTables", "operations"]

Question = Annotated[
    str, Field(description="the question the SQL must answer, in natural language")
]
K = Annotated[
    int,
    Field(
        ge=1,
        le=MAX_K,
        description="how many tables to return (the adaptive cut may return fewer)",
    ),
]
Pipeline = Annotated[
    str | None,
    Field(
        description="a pipeline as `tabret query --pipeline` takes it, e.g. 'bm25', 'hybrid', "
        "'single-hop > greedy-join > closure'; default: the server's"
    ),
]
TableName = Annotated[str, Field(description="a table as find_tables names it: db.table")]
TableNames = Annotated[
    list[TableName], Field(min_length=1, max_length=MAX_DESCRIBE, description="tables: db.table")
]


@dataclass(frozen=True)
class DescribedTables:
    tables: list[TableDescription]


@dataclass(frozen=True)
class Databases:
    databases: list[DatabaseInfo]


Operation = Callable[..., Any]


def operations(service: IndexService) -> list[Operation]:
    """``find_tables``, ``describe_tables``, ``join_path`` and ``list_databases`` over
    ``service``; each raises :class:`ValueError` (or a :class:`tabret.Error`) for bad input."""

    def find_tables(question: Question, k: K = DEFAULT_K, pipeline: Pipeline = None) -> FoundTables:
        """The tables of the index that the SQL answering `question` needs, best first, with
        their scores, the trace steps that chose each, and `prompt`: their CREATE TABLE
        statements, ready for a text-to-SQL prompt."""
        return service.find_tables(question, k, pipeline)

    def describe_tables(tables: TableNames) -> DescribedTables:
        """The columns (type, description, constraints, the foreign key each is), primary key,
        incoming foreign keys and CREATE TABLE statement of each named table."""
        return DescribedTables(service.describe_tables(tables))

    def join_path(from_table: TableName, to_table: TableName) -> JoinPath:
        """The strongest join path between two tables of one database in the index's join
        graph (declared foreign keys weigh 1, inferred joins less): each step's tables and
        columns. An error when the index was saved without a join graph."""
        return service.join_path(from_table, to_table)

    def list_databases() -> Databases:
        """The databases of the index, with their descriptions and numbers of tables."""
        return Databases(service.list_databases())

    return [find_tables, describe_tables, join_path, list_databases]
