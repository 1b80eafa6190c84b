"""Part 4b: where the slowest selection step spends its time. Runs CRUSH (paper objective,
B=20) over BirdUnion questions several times with precomputed inputs, under ``perf record``
when perf works here (else callgrind is suggested), and writes the top symbols of
``perf report`` to build/bench/profile.txt.

Usage: python3 -m bench.profile [--questions 300] [--repeat 5]
(``--inner`` runs the workload itself; the outer call wraps it in perf.)
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence

from bench.algorithms import Setup, crush_rewriter, time_tabret
from bench.common import OUT, RecordedRewriter
from tabret import CrushRetriever, DenseRetriever, _core
from tabret.benchmarks import load_benchmark


def workload(questions: int, repeat: int) -> None:
    s = Setup.for_benchmark(load_benchmark("bird-union"), questions)
    retriever = CrushRetriever(s.index, RecordedRewriter(crush_rewriter(s)))
    for _ in range(repeat):
        retriever._raw(s.questions, 20, 20)


def _breakdown_line(name: str, questions: int) -> str:
    s = Setup.for_benchmark(load_benchmark(name), questions)
    rec = RecordedRewriter(crush_rewriter(s))
    crush = CrushRetriever(s.index, rec)
    total = time_tabret(lambda: crush._raw(s.questions, 20, 20), [s.embedder, rec])[1].cpu
    texts = []
    for q in s.questions:
        answer = rec.lookup([_core.RewriteRequest(q)])[0]
        probes = list(dict.fromkeys(p for p in answer.queries if p)) or [q]
        texts += [p if p == q else f"{q} {p}" for p in probes]
    dense = DenseRetriever(s.index)
    search = time_tabret(lambda: dense._raw(texts, 1, 100), [s.embedder])[1].cpu
    n = len(s.questions)
    return (
        f"{name}: {n} questions, {len(texts) / n:.2f} probes each: total "
        f"{1000 * total / n:.3f} ms = column search (top 100 per probe over "
        f"{s.column_vectors.shape[0]} columns) {1000 * search / n:.3f} ms + candidates, "
        f"scores and selection {1000 * (total - search) / n:.3f} ms"
    )


def breakdown(questions: int) -> list[str]:
    """Manual timing breakdown of CRUSH per question (process CPU time, callbacks
    subtracted): the column search for the same probe texts alone, and the rest (candidate
    union, cosines, entropy weighting, selection)."""
    lines = ["manual breakdown, CRUSH paper objective B=20, per question (CPU ms)"]
    lines += [_breakdown_line(name, questions) for name in ("spider-union", "bird-union")]
    return lines


def _compact(line: str) -> str:
    """A perf report line without its empty IPC columns and its padding."""
    return re.sub(r" {3,}", "  ", re.sub(r"\s+-\s+-\s*$", "", line)).rstrip()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--questions", type=int, default=300)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.inner:
        workload(args.questions, args.repeat)
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    data = OUT / "perf.data"
    inner = [sys.executable, "-m", "bench.profile", "--inner"]
    inner += ["--questions", str(args.questions), "--repeat", str(args.repeat)]
    if shutil.which("perf") is None:
        (OUT / "profile.txt").write_text("perf is not installed\n" + "\n".join(breakdown(300)))
        return 0
    rec = subprocess.run(
        ["perf", "record", "-F", "499", "-o", str(data), "--", *inner],
        capture_output=True,
        text=True,
        check=False,
    )
    if rec.returncode != 0:
        (OUT / "profile.txt").write_text(f"perf record failed:\n{rec.stderr}\n")
        return 0
    text = []
    for sort, top in (("dso", 8), ("dso,symbol", 20)):
        report = subprocess.run(
            ["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort", sort],
            capture_output=True,
            text=True,
            check=False,
        )
        lines = [_compact(ln) for ln in report.stdout.splitlines() if ln and ln[0] != "#"]
        text += [f"perf report --sort {sort} (top {top})", *lines[:top], ""]
    text += breakdown(args.questions)
    (OUT / "profile.txt").write_text("\n".join(text) + "\n")
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
