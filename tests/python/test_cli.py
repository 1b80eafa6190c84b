from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tabret.cli import main


def test_catalog_json_output(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "spider", str(data_dir / "spider" / "tables.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "databases": 166,
        "tables": 876,
        "columns": 4503,
        "foreign_keys": 795,
    }


def test_catalog_error_is_reported_not_raised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalog", "json", str(tmp_path / "missing.json")]) == 1
    assert "missing.json: no such file" in capsys.readouterr().err


def test_catalog_convert_then_reload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo.json"
    assert main(["demo", "--limit", "2", "--embedder", "hashing", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "Over all 36 demo questions" in printed
    assert "| demo | hashing(" in printed
    from tabret.datasets import _demo_file

    assert main(["catalog", "json", str(_demo_file("catalog.json")), "--save", str(out)]) == 0
    assert "tables: 69" in capsys.readouterr().out
    assert out.exists()


def test_module_entry_point_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tabret", "--help"], capture_output=True, text=True, check=True
    )
    assert "catalog" in result.stdout
    assert "demo" in result.stdout
