"""Every script in examples/python runs to completion."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parents[2] / "examples" / "python").glob("*.py"))


def test_examples_exist() -> None:
    assert {p.name for p in EXAMPLES} >= {"quickstart.py", "langchain_text_to_sql.py"}


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script: Path) -> None:
    env = os.environ | {"HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
