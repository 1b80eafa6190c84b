"""Key discovery against declared keys (issue 22, item 4): hide the declared foreign keys of
Spider (``spider/tables.json``, all 166 databases) and BIRD dev (``bird/dev_tables.json``),
infer keys from names (``tabret.infer_foreign_keys``) and compare with the declared ones, at
column-pair level (directed: referencing -> referenced) and at table-pair level (unordered),
per rule and overall. Two settings: primary keys kept (declared PKs are the key candidates),
and primary keys hidden too (names decide). Self-referencing declared keys (a table to
itself) are left out of the gold pairs: the rules never link a table to itself; their count
is printed. On the dev databases, whose statistics JAR recorded (uniqueness, first values),
also names with those values, and with a value-inclusion veto. Then Spider 2.0-lite (no
declared keys): edges, table pairs, and the fraction of same-database table pairs that get an
edge (the compatibility graph gives ω > 0 to nearly all of them). Writes
build/bench/key_discovery.json and prints markdown tables.

Run: ``python -m bench.key_discovery [--no-spider2]`` (``$TABRET_DATA_DIR`` or
``../shared/data``).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from bench.common import machine, write_json
from tabret import Catalog, _core
from tabret.datasets import data_dir
from tabret.keys import catalog_without_keys, infer_foreign_keys

Pair = tuple[int, int]

DATASETS = {"Spider": "spider/tables.json", "BIRD dev": "bird/dev_tables.json"}
SETTINGS = {"PK kept": True, "PK hidden": False}
RULES = ("same_name", "table_name_id", "role_prefixed")


def table_pair(cat: _core.Catalog, a: int, b: int) -> frozenset[int]:
    return frozenset((cat.column(a).table, cat.column(b).table))


def ratio(num: int, den: int) -> float | None:
    return round(num / den, 3) if den else None


def scores(
    cat: _core.Catalog, pred: set[Pair], gold: set[Pair], gold_tables: set[frozenset[int]]
) -> dict[str, Any]:
    tables = {table_pair(cat, a, b) for a, b in pred}
    hit = len(pred & gold)
    hit_tables = len(tables & gold_tables)
    return {
        "edges": len(pred),
        "correct": hit,
        "precision": ratio(hit, len(pred)),
        "recall": ratio(hit, len(gold)),
        "table_pairs": len(tables),
        "correct_table_pairs": hit_tables,
        "table_precision": ratio(hit_tables, len(tables)),
        "table_recall": ratio(hit_tables, len(gold_tables)),
    }


def measure(name: str, path: str) -> list[dict[str, Any]]:
    cat = Catalog.from_spider_json(data_dir() / path)
    declared = {(k.from_column, k.to_column) for k in cat.foreign_keys}
    gold = {(a, b) for a, b in declared if cat.column(a).table != cat.column(b).table}
    gold_tables = {table_pair(cat, a, b) for a, b in gold}
    rows = []
    for setting, keep in SETTINGS.items():
        hidden = catalog_without_keys(cat, keep_primary_keys=keep)
        assert hidden.num_foreign_keys == 0
        start = time.perf_counter()
        keys = infer_foreign_keys(hidden)
        seconds = time.perf_counter() - start
        by_rule: dict[str, set[Pair]] = {r: set() for r in RULES}
        for k in keys:
            by_rule[k.rule].add((k.from_column, k.to_column))
        common = {
            "dataset": name,
            "setting": setting,
            "databases": cat.num_databases,
            "tables": cat.num_tables,
            "columns": cat.num_columns,
            "declared_pairs": len(declared),
            "self_references": len(declared) - len(gold),
            "gold_table_pairs": len(gold_tables),
        }
        for rule in RULES:
            rows.append({**common, "rule": rule, **scores(cat, by_rule[rule], gold, gold_tables)})
        pred = {(k.from_column, k.to_column) for k in keys}
        overall = scores(cat, pred, gold, gold_tables)
        rows.append({**common, "rule": "all", **overall, "ms": round(seconds * 1000, 1)})
    return rows


#: The dev databases with JAR's recorded statistics (uniqueness and each column's first values).
VALUES: dict[str, tuple[str, Literal["spider", "bird"]]] = {
    "Spider dev": ("spider-dev", "spider"),
    "BIRD dev": ("bird-dev", "bird"),
}


def measure_values(name: str, benchmark: str, dataset: Literal["spider", "bird"]) -> list[Any]:
    """Declared keys (and primary keys) hidden; names alone, names with JAR's statistics, and
    the statistics with a value-inclusion veto of 0.9."""
    from tabret.benchmarks import load_benchmark
    from tabret.join import jar_column_stats

    cat = load_benchmark(benchmark).catalog
    gold = {
        (k.from_column, k.to_column)
        for k in cat.foreign_keys
        if cat.column(k.from_column).table != cat.column(k.to_column).table
    }
    gold_tables = {table_pair(cat, a, b) for a, b in gold}
    hidden = catalog_without_keys(cat)
    stats = jar_column_stats(hidden, dataset)
    rows = []
    for setting, st, veto in [
        ("names", None, 0.0),
        ("names + JAR values", stats, 0.0),
        ("names + JAR values, min_inclusion 0.9", stats, 0.9),
    ]:
        keys = infer_foreign_keys(hidden, st, min_inclusion=veto)
        pred = {(k.from_column, k.to_column) for k in keys}
        row = {"dataset": name, "setting": setting, "rule": "all", "databases": cat.num_databases}
        rows.append({**row, **scores(cat, pred, gold, gold_tables)})
    return rows


def spider2() -> dict[str, Any]:
    from tabret.spider2 import spider2_catalog

    start = time.perf_counter()
    cat = spider2_catalog()
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    keys = infer_foreign_keys(cat)
    seconds = time.perf_counter() - start
    pairs = {table_pair(cat, k.from_column, k.to_column) for k in keys}
    per_db: Counter[int] = Counter()
    for p in pairs:
        per_db[cat.table(next(iter(p))).database] += 1
    sizes = [len(d.tables) for d in cat.databases]
    possible = sum(n * (n - 1) // 2 for n in sizes)
    # The example: a 97-table warehouse (4,656 pairs, 4,652 with ω > 0).
    example = [
        {
            "database": d.name,
            "tables": len(d.tables),
            "pairs": len(d.tables) * (len(d.tables) - 1) // 2,
            "pairs_with_edge": per_db[i],
            "tables_with_edge": len(
                {t for p in pairs if cat.table(next(iter(p))).database == i for t in p}
            ),
        }
        for i, d in enumerate(cat.databases)
        if len(d.tables) == 97
    ]
    touched = {t for p in pairs for t in p}
    return {
        "databases": cat.num_databases,
        "tables": cat.num_tables,
        "columns": cat.num_columns,
        "edges": len(keys),
        "rules": dict(Counter(k.rule for k in keys)),
        "table_pairs": len(pairs),
        "same_database_pairs": possible,
        "fraction_of_pairs": possible and len(pairs) / possible,
        "tables_with_an_edge": len(touched),
        "databases_with_an_edge": len(per_db),
        "load_s": round(load_s, 2),
        "infer_s": round(seconds, 3),
        "ninety_seven_table_databases": example,
    }


def fmt(x: Any) -> str:
    return "" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def markdown(rows: list[dict[str, Any]]) -> str:
    head = (
        "| dataset | setting | rule | edges | col P | col R | table pairs | table P | "
        "table R | ms |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    lines = [head]
    for r in rows:
        cells = [
            r["dataset"],
            r["setting"],
            r["rule"],
            r["edges"],
            r["precision"],
            r["recall"],
            r["table_pairs"],
            r["table_precision"],
            r["table_recall"],
            None if "ms" not in r else f"{r['ms']:.1f}",
        ]
        lines.append("| " + " | ".join(fmt(c) for c in cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--no-spider2", action="store_true", help="skip Spider 2.0-lite")
    args = p.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for name, path in DATASETS.items():
        rows.extend(measure(name, path))
    values = [r for name, (b, d) in VALUES.items() for r in measure_values(name, b, d)]
    print(markdown(rows))
    print("\nWith JAR's recorded statistics of the dev databases (primary keys hidden too):\n")
    print(markdown(values))
    for name in DATASETS:
        r = next(r for r in rows if r["dataset"] == name)
        print(
            f"\n{name}: {r['databases']} databases, {r['tables']} tables, {r['columns']} "
            f"columns; {r['declared_pairs']} declared key pairs, {r['self_references']} "
            f"self-references left out; {r['gold_table_pairs']} gold table pairs"
        )
    out: dict[str, Any] = {"machine": machine(), "rows": rows, "values": values}
    if not args.no_spider2:
        s2 = spider2()
        out["spider2_lite"] = s2
        print(
            f"\nSpider 2.0-lite: {s2['databases']} databases, {s2['tables']} tables, "
            f"{s2['columns']} columns; {s2['edges']} inferred edges {s2['rules']}, "
            f"{s2['table_pairs']} table pairs of {s2['same_database_pairs']} same-database "
            f"pairs ({100 * s2['fraction_of_pairs']:.2f}%); {s2['tables_with_an_edge']} tables "
            f"with an edge in {s2['databases_with_an_edge']} databases; inferred in "
            f"{s2['infer_s']} s (catalog loaded in {s2['load_s']} s)"
        )
        for d in s2["ninety_seven_table_databases"]:
            print(
                f"  {d['database']}: {d['tables']} tables, {d['pairs_with_edge']} of "
                f"{d['pairs']} pairs with an edge ({d['tables_with_edge']} tables touched)"
            )
    print(f"\nwrote {write_json('key_discovery.json', out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
