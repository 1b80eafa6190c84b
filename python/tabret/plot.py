"""Recall@k curves from evaluation JSON (``tabret eval --output``): one panel per benchmark,
one line per method and embedder. Needs matplotlib (``pip install 'tabret[plot]'``)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Metric", "load_results", "recall_figure", "save_recall_plot"]

Metric = Literal["complete_recall", "recall"]
_LABELS = {"complete_recall": "complete recall (k=), %", "recall": "recall (r@k), %"}


def load_results(paths: Iterable[str | os.PathLike[str]]) -> list[dict[str, Any]]:
    """The evaluation results in each JSON file (a list of results, or one result)."""
    out: list[dict[str, Any]] = []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text("utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: not JSON ({err})") from None
        items = data if isinstance(data, list) else [data]
        for i, item in enumerate(items):
            missing = {"benchmark", "method", "embedder", "recall", "complete_recall"} - set(
                item if isinstance(item, Mapping) else ()
            )
            if missing:
                raise ValueError(f"{path}: result {i} is not an evaluation (missing {missing})")
            out.append(dict(item))
    return out


def recall_figure(
    results: Sequence[Mapping[str, Any]], metric: Metric = "complete_recall"
) -> Figure:
    """One panel per benchmark (in order of first appearance); x = k, y = ``metric``."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    if metric not in _LABELS:
        raise ValueError(f"metric must be 'complete_recall' or 'recall', not {metric!r}")
    if not results:
        raise ValueError("no evaluation results to plot")
    benchmarks = list(dict.fromkeys(str(r["benchmark"]) for r in results))
    fig = Figure(figsize=(5.5 * len(benchmarks), 4.2), layout="constrained")
    axes = fig.subplots(1, len(benchmarks), squeeze=False)[0]
    for ax, bench in zip(axes, benchmarks, strict=True):
        for r in results:
            if r["benchmark"] != bench:
                continue
            points = sorted((int(k), float(v)) for k, v in r[metric].items())
            label = f"{r['method']} ({r['embedder'].split('(')[0]})"
            ax.plot([k for k, _ in points], [v for _, v in points], marker="o", label=label)
        ax.set_title(bench)
        ax.set_xscale("log")
        ax.set_xlabel("k (tables)")
        ax.set_ylabel(_LABELS[metric])
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    return fig


def save_recall_plot(
    paths: Iterable[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    metric: Metric = "complete_recall",
) -> None:
    """Reads evaluation JSON files and writes the figure (format from the suffix: .png, .svg)."""
    fig = recall_figure(load_results(paths), metric)
    fig.savefig(output, dpi=120)
