"""bench/report.py never reports a recall it did not measure: an approximate row whose exact
row failed (so nothing was compared) is neither shown as exact nor counted as meeting the
target, and it stops the report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench import report  # noqa: E402
from bench.hnsw_side_by_side import ratios  # noqa: E402


def _row(kind: str, **extra: Any) -> dict[str, Any]:
    return {
        "catalog": "spider2",
        "max_columns": 0,
        "kind": kind,
        "tables": 8255,
        "columns": 532388,
        "build_s": 7.0,
        "build_cpu_s": 7.0,
        "table_p50_ms": 0.2,
        "table_p99_ms": 0.3,
        "column_p50_ms": 1.9,
        "column_p99_ms": 2.5,
        "column_wall_p50_ms": 1.9,
        "index_mib": 900.0,
        "peak_rss_mib": 2800.0,
        **extra,
    }


def test_a_row_without_its_exact_row_is_not_measured_and_stops_the_report() -> None:
    failed_exact = {"catalog": "spider2", "max_columns": 0, "kind": "exact", "error": "timeout"}
    unmeasured = _row("hnsw")
    measured = _row("pca", column_score_recall_at_10=98.6, table_score_recall_at_10=100.0)
    lines = report.target_lines([failed_exact, unmeasured, measured], "MiniLM")
    hnsw = next(line for line in lines if line.startswith("- hnsw"))
    assert "not measured" in hnsw
    assert "all met" not in hnsw
    assert "recall@10 98.6 % (met)" in next(line for line in lines if line.startswith("- pca"))
    failing = report.below_target([{"rows": [failed_exact, unmeasured, measured]}])
    assert any("hnsw: recall@10 not measured" in f for f in failing)
    assert not any("pca" in f for f in failing)
    # exact itself needs no comparison
    assert report.below_target([{"rows": [_row("exact")]}]) == []


def test_the_winner_is_the_fastest_index_at_the_recall_target() -> None:
    sweep = [
        {"ef": 64, "column_score_recall": 60.0, "p50_ms": 0.2},
        {"ef": 1024, "column_score_recall": 96.0, "p50_ms": 1.5},
    ]
    rows = [
        _row("exact", column_p50_ms=22.0),
        _row("auto", searched={"tables": "pca", "columns": "pca"}, column_score_recall_at_10=98.6),
        _row("int8", column_p50_ms=16.0, column_score_recall_at_10=100.0),
        # fastest of all at ef 64, but below the target there: judged at ef 1024
        _row("hnsw", column_p50_ms=0.2, column_score_recall_at_10=60.0, ef_sweep=sweep,
             ef_for_target=1024),
        _row("pca", column_p50_ms=0.1, column_score_recall_at_10=90.0),  # below the target
    ]  # fmt: skip
    lines = report.winners_section([{"embedder": "minilm", "rows": rows}])
    row = next(line for line in lines if line.startswith("| MiniLM"))
    assert "| hnsw, ef 1024 | 1.50 | 96.0 |" in row
    assert "auto (tables pca, columns pca): 1.90 ms, 98.6 %" in row
    rows[3]["ef_for_target"] = None  # no ef reaches it: auto wins
    lines = report.winners_section([{"embedder": "minilm", "rows": rows}])
    assert "| auto (tables pca, columns pca) | 1.90 | 98.6 |" in lines[-2]


def _side_by_side(embedder: str, tabret_s: float) -> dict[str, Any]:
    def row(r: int, what: str, build_s: float) -> dict[str, Any]:
        return {
            "round": r, "what": what, "build_s": build_s, "build_cpu_s": 2 * build_s,
            "index_mib": 400.0, "p50_ms": 0.1, "p99_ms": 0.3, "wall_p50_ms": 0.1,
            "recall": 20.0, "load": [1.0, 1.2],
        }  # fmt: skip

    rows = [
        row(r, w, s) for r in range(2) for w, s in (("tabret", tabret_s), ("hnswlib wheel", 10))
    ]
    return {"embedder": embedder, "columns": 1000, "dim": 384, "vectors_mib": 1.5,
            "rows": rows, "ratios": ratios(rows)}  # fmt: skip


def test_the_hnsw_side_by_side_gives_each_embedder_its_rounds_and_ratios() -> None:
    lines = report.hnsw_side_by_side_section(
        [_side_by_side("hashing", 11.0), _side_by_side("minilm", 12.5)]
    )
    text = "\n".join(lines)
    assert "### With the hashing vectors: 1,000 columns" in text
    assert "### With the MiniLM vectors: 1,000 columns" in text
    assert "build wall 1.10x" in text
    assert "build wall 1.25x" in text
    assert "0.100 / 0.300 (0.100)" in text  # p50 / p99 (wall p50)
