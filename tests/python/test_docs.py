"""Every code block in README.md and docs/ runs as written, or says why not (issue 20, item 5).

A fenced block names its language. Each kind is checked:

- ``python``: a document's Python blocks run in order in one fresh interpreter, in an empty
  directory (with ``HF_HUB_OFFLINE=1``, the data directory in ``TABRET_DATA_DIR`` and a
  non-interactive matplotlib), so a later block may use what an earlier one made;
- ``sh``: each block runs under ``bash -euo pipefail`` in that directory, after the Python;
- ``json``: parses; a ``tabret-catalog`` document loads with ``Catalog.from_json``;
- ``sql``: loads with ``Catalog.add_ddl_text``;
- ``cpp`` / ``cmake``: must be checked elsewhere, said by a marker (below);
- ``text``: output, diagrams, listings: not code.

A block that cannot run alone (it needs a server, an API key, the user's data, or minutes of
benchmark time) is marked on the line before it with ``<!-- fragment: why -->``; one that is
checked elsewhere with ``<!-- checked: where -->`` (a test's name), or, for a file shown in
full, ``<!-- file: path -->``, which this test compares with the file.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tabret

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LANGUAGES = {"python", "sh", "json", "sql", "cpp", "cmake", "text"}
# What a marker looks like: the non-empty line right before the opening fence.
MARKER = re.compile(r"<!-- (fragment|checked|file): (\S.*?) -->")
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


@dataclasses.dataclass(frozen=True)
class Block:
    doc: Path
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    marker: str  # "", "fragment", "checked" or "file"
    why: str  # the marker's text

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(REPO)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    text = doc.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.fullmatch(before.strip())
        out.append(
            Block(
                doc,
                text.count("\n", 0, m.start()) + 1,
                m[1].strip(),
                m[2],
                marker[1] if marker else "",
                marker[2] if marker else "",
            )
        )
    return out


ALL = [b for doc in DOCS for b in blocks(doc)]


def test_docs_have_code_blocks() -> None:
    # The fence pattern still matches the documents (a changed fence style would check nothing).
    assert len(ALL) > 60
    assert {b.language for b in ALL} >= {"python", "sh", "cpp", "text"}


@pytest.mark.parametrize("block", ALL, ids=lambda b: b.where)
def test_block_names_a_known_language_and_a_fitting_marker(block: Block) -> None:
    assert block.language in LANGUAGES, (
        f"{block.where}: fence language {block.language!r}; use one of {sorted(LANGUAGES)}"
    )
    if block.language in ("cpp", "cmake"):
        assert block.marker, (
            f"{block.where}: a {block.language} block needs <!-- checked: ... -->, "
            "<!-- file: ... --> or <!-- fragment: ... --> on the line before it"
        )
    if block.language == "text":
        assert not block.marker, f"{block.where}: a text block is not code: no marker"


FILES = [b for b in ALL if b.marker == "file"]


@pytest.mark.parametrize("block", FILES, ids=lambda b: b.where)
def test_file_blocks_show_the_file(block: Block) -> None:
    path = REPO / block.why
    assert path.is_file(), f"{block.where}: no file {block.why}"
    assert block.code == path.read_text(encoding="utf-8"), (
        f"{block.where}: the block differs from {block.why}; copy the file into the doc"
    )


CHECKED = [b for b in ALL if b.marker == "checked"]


@pytest.mark.parametrize("block", CHECKED, ids=lambda b: b.where)
def test_checked_blocks_name_an_existing_test(block: Block) -> None:
    # `ctest NAME` must be a test that tests/CMakeLists.txt defines; `pytest FILE::TEST` a
    # function in that file.
    m = re.fullmatch(r"ctest (\S+)|pytest (tests/python/\S+\.py)::(\w+)", block.why)
    assert m, f"{block.where}: say `ctest NAME` or `pytest tests/python/FILE.py::TEST`"
    if m[1]:
        cmake = (REPO / "tests" / "CMakeLists.txt").read_text(encoding="utf-8")
        assert re.search(rf"add_test\(NAME {re.escape(m[1])}\s", cmake), (
            f"{block.where}: no ctest {m[1]}"
        )
    else:
        source = (REPO / m[2]).read_text(encoding="utf-8")
        assert f"def {m[3]}(" in source, f"{block.where}: no {m[3]} in {m[2]}"


@pytest.mark.parametrize("block", [b for b in ALL if b.marker == "fragment"], ids=lambda b: b.where)
def test_fragments_say_why(block: Block) -> None:
    assert len(block.why.split()) >= 3, f"{block.where}: say why the block cannot run alone"


@pytest.mark.parametrize(
    "block", [b for b in ALL if b.language == "json" and not b.marker], ids=lambda b: b.where
)
def test_json_blocks_parse(block: Block, tmp_path: Path) -> None:
    doc = json.loads(block.code)
    if isinstance(doc, dict) and doc.get("format") == "tabret-catalog":
        path = tmp_path / "catalog.json"
        path.write_text(block.code, encoding="utf-8")
        assert tabret.Catalog.from_json(path).num_tables > 0


@pytest.mark.parametrize(
    "block", [b for b in ALL if b.language == "sql" and not b.marker], ids=lambda b: b.where
)
def test_sql_blocks_load_as_ddl(block: Block) -> None:
    cat = tabret.Catalog()
    cat.add_ddl_text(block.code, "doc", block.where)
    assert cat.num_tables > 0


def _env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1",
        MPLBACKEND="Agg",
        TABRET_DATA_DIR=str(tabret.datasets.data_dir().resolve()),
        # The tabret under test, also for `tabret` commands run by sh blocks.
        PYTHONPATH=os.pathsep.join(
            [str(Path(tabret.__file__).parents[1]), env.get("PYTHONPATH", "")]
        ),
        HOME=str(work),
    )
    return env


def _run(args: list[str], work: Path, what: str) -> None:
    result = subprocess.run(args, cwd=work, env=_env(work), capture_output=True, text=True)
    assert result.returncode == 0, (
        f"{what} exited {result.returncode}\nstdout:\n{result.stdout[-4000:]}\n"
        f"stderr:\n{result.stderr[-4000:]}"
    )


RUNNABLE = [
    doc for doc in DOCS if any(b.language in ("python", "sh") and not b.marker for b in blocks(doc))
]


@pytest.mark.parametrize("doc", RUNNABLE, ids=lambda d: str(d.relative_to(REPO)))
def test_doc_code_runs(doc: Path, tmp_path: Path) -> None:
    runnable = [b for b in blocks(doc) if not b.marker]
    python = [b for b in runnable if b.language == "python"]
    if python:
        # One interpreter for the document's blocks, each block marked so a failure names it.
        script = "\n".join(f"# --- {b.where}\n{b.code}" for b in python)
        (tmp_path / "doc.py").write_text(script, encoding="utf-8")
        _run([sys.executable, "doc.py"], tmp_path, f"the Python blocks of {doc.name}")
    bin_dir = tmp_path / "bin"  # `tabret` and `python` as the ones under test
    bin_dir.mkdir()
    for name, args in (("tabret", " -m tabret"), ("python", "")):
        (bin_dir / name).write_text(f'#!/bin/sh\nexec "{sys.executable}"{args} "$@"\n')
        (bin_dir / name).chmod(0o755)
    for b in runnable:
        if b.language == "sh":
            env_path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
            _run(
                ["bash", "-euo", "pipefail", "-c", f"export PATH='{env_path}'\n{b.code}"],
                tmp_path,
                b.where,
            )


def _published_installs(text: str) -> list[tuple[int, str]]:
    """(line, argument) of each ``pip install`` argument in ``text`` that names tabret as a
    published distribution (``tabret``, ``'tabret[extra]'``), which no package index serves; a
    path (``".[extra]"``, ``dist/tabret-….whl``) is what installs it. The arguments run to the
    end of the line, a backtick or a comment (a command wrapped right after ``install`` goes on
    on the next line)."""
    found = []
    for m in re.finditer(r"pip\s+install\b[ \t]*\n?", text):
        args = re.split(r"[`#\n]", text[m.end() :], maxsplit=1)[0]
        line = text.count("\n", 0, m.start()) + 1
        found += [
            (line, a) for a in args.split() if re.fullmatch(r"tabret(\[.*\])?", a.strip("'\""))
        ]
    return found


def test_install_lines_install_from_the_repository_or_the_wheel() -> None:
    """tabret is not on a package index: every install line in the docs installs from a clone
    or the wheel (issue 47, item 14)."""
    found = [
        f"{doc.relative_to(REPO)}:{line}: pip install {arg}"
        for doc in DOCS
        for line, arg in _published_installs(doc.read_text("utf-8"))
    ]
    assert found == []
