from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ALLOWLIST = Path(__file__).with_name("stubtest-allowlist.txt")


def test_core_stubs_match_the_extension() -> None:
    """The hand-written _core.pyi agrees with what the extension really exports."""
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "tabret._core", "--allowlist", str(ALLOWLIST)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
