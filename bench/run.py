"""One command for every benchmark of issue 11: ``python3 bench/run.py`` (or ``make bench``).

Parts (each writes JSON to build/bench/):
  algorithms  per-method selection step, tabret vs the Python reference shape (algorithms.json)
  callbacks   embedder / LLM calls and prompt tokens per question (callbacks.json)
  e2e         per-question latency with MiniLM, one per call and batched, model vs tabret
              time, with and without the embedding cache (end_to_end.json)
  scale       SocialDB and Spider 2.0-lite: build, latency, memory, HNSW recall (scale.json);
              Spider 2.0-lite with MiniLM vectors, every dense index kind (scale_minilm.json;
              vectors from the embedding cache $TABRET_EMBEDDING_CACHE, default
              build/bench/embeddings, which the first run fills: 50 to 120 minutes);
              all of Spider 2.0-lite with table families collapsed (scale_families.json);
              DDL and catalog JSON over FK-chained tables (fk_scale.json);
              JoinGraph.build over 8k and 50k tables of one database (join_scale.json);
              tabret's HNSW beside the hnswlib wheel, interleaved, hashing and MiniLM vectors
              (hnsw_side_by_side.json, hnsw_side_by_side_minilm.json);
              tabret's auto and HNSW beside the hnswlib, faiss and usearch wheels' HNSW on
              the MiniLM and the hashing vectors (wheels_minilm.json, wheels_hashing.json);
              the exact scan, float32 and int8, single and batched, beside numpy and a
              bandwidth scan (exact_scan_hashing.json, exact_scan_random.json)
  pgvector    tabret.pgvector (PostgreSQL + pgvector, a throwaway server) beside in-process exact
              search over Spider 2.0-lite columns: publish, exact and HNSW latency and recall
              over 100k columns (pgvector.json) and all 532k (pgvector_532k.json)
  micro       the C++ Google Benchmark micro-benchmarks, default flags and -march=native
              (micro.json, micro_native.json); needs libbenchmark-dev
  profile     perf profile of the slowest selection step (profile.txt)
  serve       tabret serve under load: find_tables p50/p99 and questions per second for 1 and 8
              clients over MCP streamable HTTP and the JSON API, and 8 clients while the index
              is saved again every half second (serve.json)
  report      docs/benchmarks.md and docs/benchmarks_scale.png from the JSON above; it stops
              with an error when an approximate index reaches its recall target (95% of the
              exact top 10) at no swept ef, unless --allow-below-target (rows then marked)

The benchmarks import the installed tabret (``make bench`` installs this tree first).
Everything runs under ``nice -n 5`` with one BLAS thread (both sides single-threaded, so the
ratio compares implementations, not thread counts). The full run takes about an hour on 2
shared cores, most of it the HNSW build over Spider 2.0-lite's 532,388 columns.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PARTS = (
    "algorithms",
    "callbacks",
    "e2e",
    "micro",
    "pgvector",
    "profile",
    "scale",
    "serve",
    "report",
)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)  # the bench package; tabret is the installed build
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    return env


def _run(cmd: Sequence[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(["nice", "-n", "5", *cmd], cwd=REPO, env=_env(), check=True)


def _python(module: str, *args: str) -> None:
    _run([sys.executable, "-m", module, *args])


def _micro(build: str, native: bool, out: str, min_time: str) -> None:
    flags = [
        "-DCMAKE_BUILD_TYPE=Release",
        "-DTABRET_BUILD_BENCH=ON",
        f"-DTABRET_BENCH_NATIVE={'ON' if native else 'OFF'}",
        "-DTABRET_BUILD_TESTS=OFF",
        "-DTABRET_BUILD_EXAMPLES=OFF",
        "-DTABRET_BUILD_TOOLS=OFF",
        "-DTABRET_INSTALL=OFF",
        "-DTABRET_WERROR=ON",
    ]
    _run(["cmake", "-S", ".", "-B", build, "-G", "Ninja", *flags])
    _run(["cmake", "--build", build, "-j2", "--target", "tabret_bench"])
    _run(
        [
            f"{build}/bench/cpp/tabret_bench",
            f"--benchmark_min_time={min_time}",
            "--benchmark_format=console",
            f"--benchmark_out=build/bench/{out}",
            "--benchmark_out_format=json",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    p.add_argument(
        "--quick",
        action="store_true",
        help="smaller runs (100 questions, scale up to 100k columns, no HNSW above 100k)",
    )
    p.add_argument(
        "--allow-below-target",
        action="store_true",
        help="write the report even when an approximate index misses its recall target",
    )
    args = p.parse_args(argv)
    (REPO / "build" / "bench").mkdir(parents=True, exist_ok=True)
    questions = "100" if args.quick else "300"
    if "algorithms" in args.parts:
        _python("bench.algorithms", "--questions", questions)
    if "callbacks" in args.parts:
        _python("bench.callbacks", "--questions", "50")
    if "e2e" in args.parts:
        _python("bench.end_to_end", "--questions", "100" if args.quick else "200")
    if "micro" in args.parts:
        min_time = "0.1" if args.quick else "0.5"
        _micro("build/bench-cpp", False, "micro.json", min_time)
        _micro("build/bench-cpp-native", True, "micro_native.json", min_time)
    if "pgvector" in args.parts:
        size = "20000" if args.quick else "100000"
        _python("bench.pgvector_scale", "--max-columns", size, "--hnsw")
        if not args.quick:  # all 532,388 columns
            _python("bench.pgvector_scale", "--max-columns", "0", "--queries", "20", "--hnsw")
    if "profile" in args.parts:
        _python("bench.profile")
    if "scale" in args.parts:
        extra = ["--hnsw-max", "100000", "--sizes", "1000", "10000"] if args.quick else []
        _python("bench.scale", *extra)
        cache = os.environ.get("TABRET_EMBEDDING_CACHE", str(REPO / "build/bench/embeddings"))
        dense = ["--sizes", "10000", "--queries", "100"] if args.quick else []
        _python("bench.scale", "--embedding-cache", cache, *dense)
        if not args.quick:
            _python("bench.scale", "--families", "--embedding-cache", cache)
        _python("bench.fk_scale", *(["--sizes", "10000"] if args.quick else []))
        _python("bench.join_scale", *(["--sizes", "8000"] if args.quick else []))
        _python("bench.hnsw_side_by_side", *(["--max-columns", "20000"] if args.quick else []))
        if not args.quick:  # all 532,388 columns with MiniLM's vectors
            _python("bench.hnsw_side_by_side", "--embedding-cache", cache, "--max-columns", "0")
        wheels = ["--max-columns", "10000", "--queries", "100"] if args.quick else []
        _python("bench.wheels", "--embedding-cache", cache, *wheels)
        _python("bench.wheels", *wheels)
        rows = ["--max-columns", "100000"] if args.quick else []
        _python("bench.exact_scan", *rows)
        _python("bench.exact_scan", "--dim", "384", *rows)
    if "serve" in args.parts:
        _python("bench.serve_load", "--requests", "100" if args.quick else "200")
    if "report" in args.parts:
        _python("bench.report", *(["--allow-below-target"] if args.allow_below_target else []))
    return 0


if __name__ == "__main__":
    if __package__ in (None, ""):
        sys.path[:0] = [str(REPO)]
    raise SystemExit(main())
