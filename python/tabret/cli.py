"""The ``tabret`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from tabret._core import Error
from tabret.catalog import Catalog
from tabret.datasets import demo_catalog, demo_questions

_LOADERS: dict[str, Callable[[str], Catalog]] = {
    "spider": Catalog.from_spider_json,
    "ddl": Catalog.from_ddl,
    "sqlite": Catalog.from_sqlite,
    "json": Catalog.from_json,
    "sqlalchemy": Catalog.from_sqlalchemy,
}


def _stats(cat: Catalog) -> dict[str, int]:
    return {
        "databases": cat.num_databases,
        "tables": cat.num_tables,
        "columns": cat.num_columns,
        "foreign_keys": cat.num_foreign_keys,
    }


def _cmd_catalog(args: argparse.Namespace) -> int:
    cat = _LOADERS[args.format](args.source)
    if args.save:
        cat.save_json(args.save)
    stats = _stats(cat)
    if args.json:
        print(json.dumps(stats))
    else:
        for key, value in stats.items():
            print(f"{key.replace('_', ' '):>13}: {value:,}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    cat = demo_catalog()
    questions = demo_questions()
    print(f"demo catalog: {cat!r}")
    for db in cat.databases:
        print(f"\n{db.name}: {db.description}")
        for t in db.tables:
            print(f"  {cat.serialize_table(t, names=args.names)}")
    print(f"\n{len(questions)} questions with gold tables, e.g.:")
    for q in questions[: args.limit]:
        print(f"  [{q.db}] {q.question}\n      -> {', '.join(q.gold_tables)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tabret", description="Table retrieval for text-to-SQL over large catalogs."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("catalog", help="load a schema and print its size (or convert it)")
    p.add_argument("format", choices=sorted(_LOADERS), help="what SOURCE is")
    p.add_argument("source", help="file path, or a SQLAlchemy URL for 'sqlalchemy'")
    p.add_argument("--save", metavar="OUT.json", help="also write tabret catalog JSON")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(func=_cmd_catalog)
    p = sub.add_parser("demo", help="show the bundled demo catalog and its questions")
    p.add_argument(
        "--names",
        choices=["natural", "original"],
        default="natural",
        help="which names to print (default: natural)",
    )
    p.add_argument("--limit", type=int, default=5, help="questions to show (default: 5)")
    p.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (Error, FileNotFoundError) as err:
        print(f"tabret: error: {err}", file=sys.stderr)
        return 1
