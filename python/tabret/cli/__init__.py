"""The ``tabret`` command line: one module per subcommand (:mod:`tabret.cli.catalog`,
``index``, ``query``, ``eval``, ``plot``, ``demo``). Each turns its argparse namespace into a
typed options dataclass in its ``command`` function; nothing past that function sees argparse.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from tabret._core import Error
from tabret.cli import catalog, demo, index, plot, query
from tabret.cli import eval as eval_command

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tabret", description="Table retrieval for text-to-SQL over large catalogs."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for module in (catalog, index, query, plot, demo, eval_command):
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    try:
        return int(args.func(args))
    except (Error, FileNotFoundError, ValueError) as err:
        print(f"tabret: error: {err}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `tabret query ... | head`: the reader left early
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
