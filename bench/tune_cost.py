"""What ``tabret tune`` costs, with each question embedded once (``TableIndex.with_question_memo``,
as :func:`tabret.tuning.tune` runs) and, for comparison, embedded again by every pipeline (as
before the memo): seconds for one tune over the tuning half of a benchmark (questions shuffled
with seed 0, as ``bench/tune_holdout.py``), and the choice, which must be the same.

Run: ``python -m bench.tune_cost [--benchmark spider-union] [--embedder all-MiniLM-L6-v2]``.
"""

from __future__ import annotations

import argparse
import time
from unittest import mock

from bench.common import machine, write_json
from bench.tune_holdout import halves, indexed, log
from tabret.benchmarks import load_benchmark
from tabret.index import DEFAULT_TABLE_FORMAT, TableIndex
from tabret.tuning import TuneReport, tune


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--benchmark", default="spider-union")
    p.add_argument("--embedder", default="all-MiniLM-L6-v2")
    args = p.parse_args()
    bench = load_benchmark(args.benchmark)
    index, inputs, _ = indexed(bench, args.embedder, DEFAULT_TABLE_FORMAT)
    tuning, _ = halves(bench, 0)

    def timed() -> tuple[float, TuneReport]:
        start = time.perf_counter()
        report = tune(index, tuning, inputs, k=5)
        return time.perf_counter() - start, report

    memo_s, memo = timed()
    log(f"memo: {memo_s:.1f} s, chosen {memo.chosen.label}")
    with mock.patch.object(TableIndex, "with_question_memo", lambda self: self):
        plain_s, plain = timed()
    log(f"no memo: {plain_s:.1f} s, chosen {plain.chosen.label}")
    if memo.to_json() != plain.to_json():
        raise SystemExit("the memo changed what tune chose or scored")
    path = write_json(
        f"tune_cost_{args.benchmark}_{args.embedder}.json",
        {
            "machine": machine(),
            "benchmark": args.benchmark,
            "embedder": args.embedder,
            "questions": len(tuning.questions),
            "pipelines": len(memo.trials),
            "seconds_memo": memo_s,
            "seconds_no_memo": plain_s,
            "chosen": memo.chosen.label,
        },
    )
    print(
        f"{args.benchmark} ({args.embedder}), {len(tuning.questions)} questions, "
        f"{len(memo.trials)} pipelines: {memo_s:.1f} s with the memo, {plain_s:.1f} s without; "
        f"both chose {memo.chosen.label}",
        flush=True,
    )
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
