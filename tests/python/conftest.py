from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The benchmark data; skipped when absent, except under CI=true where absence fails."""
    path = Path(os.environ.get("TABRET_DATA_DIR") or REPO.parent / "shared" / "data")
    if not path.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"benchmark data directory missing under CI: {path}")
        pytest.skip(f"benchmark data directory not found: {path}")
    return path


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return FIXTURES
