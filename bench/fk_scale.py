"""Scale of the catalog writers in foreign keys (issue 18, item 14): ``database_ddl`` and the
catalog JSON writer (used by every index save) over one database of N tables chained by
foreign keys (table i references table i-1). Both were quadratic in foreign keys (100k tables:
23 s and 32 s); they are linear now. Writes build/bench/fk_scale.json; wall times on a shared
machine, one run each.

Run: ``python -m bench.fk_scale [--sizes 10000 100000]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any

from bench.common import machine, write_json
from tabret import _core


def chain(n: int) -> _core.Catalog:
    cat = _core.Catalog()
    db = cat.add_database("chain")
    prev = -1
    for i in range(n):
        t = cat.add_table(db, f"t{i}")
        key = cat.add_column(t, "id", "int")
        ref = cat.add_column(t, "prev_id", "int")
        cat.set_primary_key(t, [key])
        if prev >= 0:
            cat.add_foreign_key(ref, prev)
        prev = key
    return cat


def row(n: int) -> dict[str, Any]:
    cat = chain(n)
    start = time.perf_counter()
    ddl = cat.database_ddl(0)
    ddl_s = time.perf_counter() - start
    start = time.perf_counter()
    text = _core.catalog_to_json_text(cat)
    json_s = time.perf_counter() - start
    assert ddl.count("FOREIGN KEY") == n - 1
    return {
        "tables": n,
        "foreign_keys": n - 1,
        "database_ddl_s": round(ddl_s, 3),
        "catalog_json_s": round(json_s, 3),
        "ddl_bytes": len(ddl),
        "json_bytes": len(text),
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = p.parse_args(argv)
    rows = []
    for n in args.sizes:
        rows.append(row(n))
        print(rows[-1], flush=True)
    write_json("fk_scale.json", {"machine": machine(), "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
