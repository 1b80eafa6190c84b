"""``tabret catalog``: load a schema and print its size (or convert it)."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from tabret.catalog import Catalog
from tabret.cli._common import LOADERS, add_source_arguments


@dataclass(frozen=True)
class CatalogOptions:
    format: str
    source: str
    save: str | None
    json: bool


HELP = "load a schema and print its size (or convert it)"
DESCRIPTION = None


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_source_arguments(p)
    p.add_argument("--save", metavar="OUT.json", help="also write tabret catalog JSON")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")


def command(args: argparse.Namespace) -> int:
    return run(CatalogOptions(args.format, args.source, args.save, args.json))


def _stats(cat: Catalog) -> dict[str, int]:
    return {
        "databases": cat.num_databases,
        "tables": cat.num_tables,
        "columns": cat.num_columns,
        "foreign_keys": cat.num_foreign_keys,
    }


def run(o: CatalogOptions) -> int:
    cat = LOADERS[o.format](o.source)
    if o.save:
        cat.save_json(o.save)
    stats = _stats(cat)
    if o.json:
        print(json.dumps(stats))
    else:
        for key, value in stats.items():
            print(f"{key.replace('_', ' '):>13}: {value:,}")
    return 0
