"""The MCP server of ``tabret serve``, on the official MCP Python SDK (``tabret[serve]``): the
operations of :mod:`tabret.serve.tools` as tools, over stdio or streamable HTTP."""

from __future__ import annotations

import functools
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from tabret import __version__
from tabret._core import Error
from tabret.serve.service import IndexService
from tabret.serve.tools import Operation, operations

__all__ = ["INSTRUCTIONS", "build_mcp"]

INSTRUCTIONS = (
    "Schema retrieval for text-to-SQL over a catalog too large for a prompt. Call find_tables "
    "with the user's question to get the few tables its SQL needs and their CREATE TABLE "
    "statements; describe_tables for the columns and keys of tables you name; join_path for "
    "how two tables join; list_databases for what the catalog holds."
)

#: Every tool only reads the index.
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)


def _tool_errors(op: Operation) -> Operation:
    """``op`` with bad input (a :class:`ValueError` or :class:`tabret.Error`) as a tool error
    whose message the client sees: the SDK shows other exceptions' messages to nobody."""

    @functools.wraps(op)
    def tool(**kwargs: Any) -> Any:
        try:
            return op(**kwargs)
        except (ValueError, Error) as err:
            raise ToolError(str(err)) from err

    return tool


def build_mcp(service: IndexService) -> MCPServer[Any]:
    """An MCP server named ``tabret`` whose tools answer from ``service``."""
    server: MCPServer[Any] = MCPServer(
        "tabret", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    for op in operations(service):
        server.add_tool(_tool_errors(op), name=op.__name__, annotations=READ_ONLY)
    return server
