"""``tabret plot``: recall@k curves from ``tabret eval --output`` files."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class PlotOptions:
    results: list[str]
    output: str
    metric: Literal["complete_recall", "recall"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "plot",
        help="plot recall@k curves from `tabret eval --output` files",
        description="One panel per benchmark, one line per method and embedder (needs "
        "matplotlib: pip install 'tabret[plot]').",
    )
    p.add_argument("results", nargs="+", metavar="EVAL.json", help="evaluation output files")
    p.add_argument("--output", required=True, metavar="FILE.png", help="image to write")
    p.add_argument(
        "--metric",
        default="complete_recall",
        choices=["complete_recall", "recall"],
        help="complete recall k= (default) or recall r@",
    )
    p.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    return run(PlotOptions(list(args.results), args.output, args.metric))


def run(o: PlotOptions) -> int:
    from tabret.plot import save_recall_plot

    save_recall_plot(o.results, o.output, o.metric)
    print(f"wrote {o.output}")
    return 0
