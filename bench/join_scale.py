"""Scale of ``JoinGraph.build`` in the tables of one database (issue 18, item 13): one database
of N synthetic tables (id primary key, a name, two descriptive columns from a 60-word
vocabulary, an amount, a date and a reference ``t{j}_id`` to another table, every third one a
declared foreign key), embedded with the hashing embedder (256 dims). Scoring every table pair
was quadratic (8k tables: 49 s, 2.2 GB, 32 M edges; 50k: out of memory); a database above
``exhaustive_max_tables`` (2,000) now scores only the pairs found by blocking and keeps at most
32 inferred edges per table plus the declared keys.

Every configuration runs in its own process (``--worker``) so that its peak RSS (ru_maxrss) is
its own: catalog + table index + join graph. Wall and CPU time are of ``JoinGraph.build`` alone;
peak RSS is the whole process's. Writes build/bench/join_scale.json; one run each on a shared
machine. ``--exhaustive`` forces the old all-pairs scoring (the "before" row).

Run: ``python -m bench.join_scale [--sizes 8000 50000] [--exhaustive]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

from bench.common import machine, write_json

WORDS = [
    "customer",
    "order",
    "product",
    "store",
    "region",
    "city",
    "country",
    "price",
    "cost",
    "status",
    "type",
    "code",
    "category",
    "brand",
    "supplier",
    "invoice",
    "payment",
    "account",
    "balance",
    "employee",
    "manager",
    "department",
    "project",
    "task",
    "event",
    "ticket",
    "flight",
    "airport",
    "hotel",
    "booking",
    "room",
    "guest",
    "school",
    "student",
    "course",
    "teacher",
    "grade",
    "exam",
    "movie",
    "actor",
    "genre",
    "song",
    "artist",
    "album",
    "player",
    "team",
    "match",
    "season",
    "league",
    "patient",
    "doctor",
    "drug",
    "hospital",
    "claim",
    "policy",
    "vehicle",
    "driver",
    "route",
    "stop",
]


def catalog(n: int) -> Any:
    from tabret import _core

    cat = _core.Catalog()
    db = cat.add_database("big")
    ids, refs = [], []
    for i in range(n):
        t = cat.add_table(db, f"t{i}")
        key = cat.add_column(t, "id", "integer")
        cat.set_primary_key(t, [key])
        cat.add_column(t, "name", "text")
        cat.add_column(t, f"{WORDS[i % len(WORDS)]}_{WORDS[(i * 7) % len(WORDS)]}", "text")
        cat.add_column(t, f"{WORDS[(i * 3) % len(WORDS)]}_code", "varchar(20)")
        cat.add_column(t, f"amount_{i % 20}", "real")
        cat.add_column(t, "created_at", "date")
        refs.append(cat.add_column(t, f"t{(i * 7919 + 1) % n}_id", "integer"))
        ids.append(key)
    for i in range(0, n, 3):
        if (j := (i * 7919 + 1) % n) != i:
            cat.add_foreign_key(refs[i], ids[j])
    return cat


def worker(n: int, exhaustive: bool) -> dict[str, Any]:
    from tabret import Catalog, HashingEmbedder
    from tabret.index import TableIndex
    from tabret.join import JoinGraph

    cat = Catalog(catalog(n))
    index = TableIndex.build(cat, HashingEmbedder(dim=256), columns=False, progress=False)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wall, cpu = time.perf_counter(), time.process_time()
    graph = JoinGraph.build(index, exhaustive_max_tables=10**9 if exhaustive else 2000)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    edges = graph.edges
    return {
        "tables": n,
        "columns": n * 7,
        "mode": "exhaustive" if exhaustive else "blocked",
        "build_wall_s": round(wall, 2),
        "build_cpu_s": round(cpu, 2),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rss_before_build_mib": round(rss_before / 1024, 1),
        "edges": len(edges),
        "declared_edges": sum(1 for e in edges if e.declared),
        "max_edges_per_table": 32,
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    p.add_argument("--sizes", type=int, nargs="+", default=[8000, 50000])
    p.add_argument("--exhaustive", action="store_true", help="score every pair (the old way)")
    p.add_argument("--timeout", type=int, default=1800, help="seconds per configuration")
    args = p.parse_args(argv)
    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.exhaustive)), flush=True)
        return 0
    rows: list[dict[str, Any]] = []
    for n in args.sizes:
        cmd = [sys.executable, "-m", "bench.join_scale", "--worker", str(n)]
        cmd += ["--exhaustive"] if args.exhaustive else []
        try:
            done = subprocess.run(
                cmd, capture_output=True, text=True, timeout=args.timeout, check=False
            )
        except subprocess.TimeoutExpired:
            rows.append({"tables": n, "error": f"timed out after {args.timeout} s"})
        else:
            if done.returncode == 0:
                rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
            else:
                rows.append({"tables": n, "error": done.stderr.strip()[-500:]})
        print(rows[-1], flush=True)
    name = "join_scale_exhaustive.json" if args.exhaustive else "join_scale.json"
    write_json(name, {"machine": machine(), "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
