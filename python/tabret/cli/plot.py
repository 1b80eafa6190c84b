"""``tabret plot``: recall@k curves from ``tabret eval --output`` files."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Literal

from tabret.cli._common import add_choice


@dataclass(frozen=True)
class PlotOptions:
    results: list[str]
    output: str
    metric: Literal["complete_recall", "recall"]


HELP = "plot recall@k curves from `tabret eval --output` files"
DESCRIPTION = (
    "One panel per benchmark, one line per method and embedder (needs "
    "matplotlib: pip install 'tabret[plot]')."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", nargs="+", metavar="EVAL.json", help="evaluation output files")
    p.add_argument("--output", required=True, metavar="FILE.png", help="image to write")
    add_choice(
        p,
        "--metric",
        ["complete_recall", "recall"],
        "complete_recall",
        "complete recall k= (default) or recall r@",
    )


def command(args: argparse.Namespace) -> int:
    return run(PlotOptions(list(args.results), args.output, args.metric))


def run(o: PlotOptions) -> int:
    from tabret.plot import save_recall_plot

    save_recall_plot(o.results, o.output, o.metric)
    print(f"wrote {o.output}")
    return 0
