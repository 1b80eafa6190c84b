"""The table of docs/results.md ("LLM steps with a live model") from the outputs of
bench/live_llm.sh: for each benchmark and LLM method, the recorded, offline and live (Gemma 3
270M) rewriters side by side, with the live model's requests, tokens and seconds per question.

    python3 bench/live_llm_table.py build/live-llm
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

BENCHES = ["spider-union", "bird-union"]
METHODS = ["greedy-join", "crush", "murre", "reverse"]
SOURCES = ["recorded", "offline", "local"]
USAGE = re.compile(
    r"(?P<requests>[\d.]+) per question\), (?P<prompt>\d+) prompt \+ (?P<completion>[\d.]+) "
    r"completion tokens and (?P<llm>[\d.]+) s of requests per question"
    r"(?:; tabret (?P<tabret>[\d.]+) s per question)?"
)


def _row(text: str) -> list[str] | None:
    """The cells of the results table's one data row (data, embedder, method, k=…, r@…)."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 11 and cells[0] != "data":
            return cells
    return None


def _questions(text: str) -> str:
    found = re.search(r"; (\d+) questions, Catalog", text)
    return found.group(1) if found else "?"


def main(out: Path) -> int:
    print(
        "| data | method | LLM step | questions | k=3 | k=5 | k=10 | k=20 | r@3 | r@5 | r@10 "
        "| r@20 | requests/q | tokens/q (prompt + completion) | LLM s/q | tabret s/q |"
    )
    print("|---" * 16 + "|")
    for bench in BENCHES:
        for method in METHODS:
            for source in SOURCES:
                path = out / f"{bench}-{method}-{source}.txt"
                if not path.exists():
                    continue
                text = path.read_text("utf-8")
                cells = _row(text)
                if cells is None:
                    print(f"{path}: no results row", file=sys.stderr)
                    continue
                usage = USAGE.search(text)
                cost = ["", "", "", ""]
                if usage:
                    cost = [
                        usage["requests"],
                        f"{usage['prompt']} + {usage['completion']}",
                        usage["llm"],
                        usage["tabret"] or "",
                    ]
                label = "Gemma 3 270M live" if source == "local" else source
                print(
                    f"| {cells[0]} | {method} | {label} | {_questions(text)} | "
                    + " | ".join(cells[3:] + cost)
                    + " |"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "build/live-llm")))
