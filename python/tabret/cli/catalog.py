"""``tabret catalog``: load a schema and print its size (or convert it)."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from tabret.catalog import Catalog
from tabret.cli._common import LOADERS, abbreviation_dictionary, add_source_arguments


@dataclass(frozen=True)
class CatalogOptions:
    format: str
    source: str
    save: str | None
    json: bool
    show_abbreviations: bool = False
    abbreviations: str | None = None


HELP = "load a schema and print its size (or convert it)"
DESCRIPTION = None


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_source_arguments(p)
    p.add_argument("--save", metavar="OUT.json", help="also write tabret catalog JSON")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.add_argument(
        "--show-abbreviations",
        action="store_true",
        help="also print, per database, the abbreviations its names teach: what "
        "`--identifiers expand` rewrites beyond the built-in dictionary (needs wordninja)",
    )
    p.add_argument(
        "--abbreviations",
        metavar="FILE.json",
        help="with --show-abbreviations: your own {token: expansion} object, as "
        "`tabret index --abbreviations` takes it (its tokens are then not learned)",
    )


def command(args: argparse.Namespace) -> int:
    return run(
        CatalogOptions(
            args.format,
            args.source,
            args.save,
            args.json,
            args.show_abbreviations,
            args.abbreviations,
        )
    )


def _taught(cat: Catalog, abbreviations: str | None) -> dict[str, dict[str, str]]:
    """What each database's names teach, on the names `--identifiers expand` reads (split)."""
    from tabret.identifiers import learned_by_database, segment_names

    return learned_by_database(segment_names(cat), abbreviation_dictionary(abbreviations))


def _stats(cat: Catalog) -> dict[str, int]:
    return {
        "databases": cat.num_databases,
        "tables": cat.num_tables,
        "columns": cat.num_columns,
        "foreign_keys": cat.num_foreign_keys,
    }


def run(o: CatalogOptions) -> int:
    if o.abbreviations is not None and not o.show_abbreviations:
        raise ValueError("--abbreviations goes with --show-abbreviations")
    cat = LOADERS[o.format](o.source)
    if o.save:
        cat.save_json(o.save)
    stats = _stats(cat)
    taught = _taught(cat, o.abbreviations) if o.show_abbreviations else None
    if o.json:
        print(json.dumps(stats if taught is None else {**stats, "abbreviations": taught}))
        return 0
    for key, value in stats.items():
        print(f"{key.replace('_', ' '):>13}: {value:,}")
    if taught is not None:
        print(
            f"abbreviations learned: {sum(map(len, taught.values())):,} in {len(taught)} databases"
        )
        for db, learned in taught.items():
            print(f"  {db}: " + ", ".join(f"{t} -> {w}" for t, w in sorted(learned.items())))
    return 0
