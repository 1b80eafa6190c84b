"""Every method defined in C++ (bindings/methods/) is usable from Python, the command line,
pipelines and ``tabret eval`` with no other wiring (docs/write-your-own-method.md): these tests
run for each registered method, so a new one is tested by adding it."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from tabret import HashingEmbedder, TableIndex, _core, demo_catalog
from tabret.benchmarks import load_benchmark
from tabret.cli import main
from tabret.datasets import demo_values
from tabret.eval import evaluate
from tabret.index import DenseRetriever
from tabret.methods import METHODS, Inputs, NativeMethodRetriever, build_pipeline, method_table

NATIVE = [m.name for m in _core.native_methods()]
DOCS = Path(__file__).parents[2] / "docs"
#: A question that names a value (a course title), so that every method, the values stage
#: among them, has tables to return.
QUESTION = "Which students enrolled in Linear Algebra, and who teaches it?"


@pytest.fixture(scope="module")
def index() -> TableIndex:
    catalog = demo_catalog()
    return TableIndex.build(catalog, HashingEmbedder(), values=demo_values(catalog), progress=False)


def _native(name: str) -> _core.NativeMethod:
    return next(m for m in _core.native_methods() if m.name == name)


def _stage_before(name: str, index: TableIndex) -> Any:
    """What ``_core`` builds a native method over: nothing for a first stage, else dense
    retrieval (what tabret.methods gives a ``select`` or ``post`` method by default)."""
    return None if METHODS[name].kind == "first" else DenseRetriever(index)._stage()


def _spec(name: str) -> list[str]:
    """``--method NAME``, or for a ``post`` method (a pipeline stage only) the pipeline of it
    over single-hop."""
    return ["--method", name] if METHODS[name].cli else ["--pipeline", f"single-hop > {name}"]


@pytest.mark.parametrize("name", NATIVE)
def test_registered_with_its_cpp_defaults(name: str) -> None:
    method = METHODS[name]
    defaults = _native(name).defaults()
    assert {f.name: f.default for f in fields(method.options())} == defaults
    assert method.kind in ("first", "select", "post")
    assert f"| `{name}` |" in method_table()
    assert f"| `{name}` |" in (DOCS / "choosing-a-method.md").read_text()


@pytest.mark.parametrize("name", NATIVE)
def test_from_python(name: str, index: TableIndex) -> None:
    method = METHODS[name]
    retriever = method.build(index, Inputs(), method.options())
    assert isinstance(retriever, NativeMethodRetriever)
    one = retriever.retrieve(QUESTION, 3)
    assert 0 < len(one.tables) <= 3
    assert [t.score for t in one.tables] == sorted((t.score for t in one.tables), reverse=True)
    assert {s.table for s in one.trace} >= set(one.table_names)
    batch = retriever.retrieve([QUESTION, "singers"], 3)
    assert batch[0].table_names == one.table_names
    with pytest.raises(ValueError, match="k must be positive"):
        retriever.retrieve(QUESTION, 0)


@pytest.mark.parametrize("name", NATIVE)
def test_options_are_checked_by_name_and_type(name: str, index: TableIndex) -> None:
    native = _native(name)
    first = _stage_before(name, index)
    with pytest.raises(TypeError, match=f"{name} has no option 'no_such_option'"):
        native.build(index.core, index._embed, index.embedder_name, first, {"no_such_option": 1})
    option, value = next(iter(native.defaults().items()))
    wrong = 1 if isinstance(value, str) else "text"
    with pytest.raises(TypeError, match=f"{name} option '{option}': {wrong!r} is not a"):
        native.build(index.core, index._embed, index.embedder_name, first, {option: wrong})
    built = native.build(
        index.core, index._embed, index.embedder_name, first, {option: value}, index.values
    )
    assert built


@pytest.mark.parametrize("name", NATIVE)
def test_from_the_command_line(
    name: str, index: TableIndex, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "idx"
    index.save(out)  # with the demo's values, which `tabret index json` has no database to read
    capsys.readouterr()
    assert main(["query", str(out), QUESTION, *_spec(name), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)[0]
    want = build_pipeline(_spec(name)[1], index).retrieve(QUESTION, 5)
    assert [t["name"] for t in got["tables"]] == want.table_names


@pytest.mark.parametrize("name", NATIVE)
def test_in_tabret_eval(name: str, index: TableIndex, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "--benchmark", "demo", "--embedder", "hashing", "--quiet", "--k", "1", "3"]
    args += ["--values"]  # the demo's own, for the values stage
    assert main([*args, *_spec(name), "--json"]) == 0
    (got,) = json.loads(capsys.readouterr().out)
    retriever = build_pipeline(_spec(name)[1], index)
    want = evaluate(retriever.retrieve, load_benchmark("demo"), (1, 3), progress=False)
    assert got["method"] == (METHODS[name].display if METHODS[name].cli else _spec(name)[1])
    assert {int(k): v for k, v in got["complete_recall"].items()} == want.complete_recall


@pytest.mark.parametrize("name", NATIVE)
def test_in_a_pipeline(name: str, index: TableIndex) -> None:
    kind = METHODS[name].kind
    spec = {"first": f"{name} + bm25 > closure", "select": f"bm25 > {name}"}.get(
        kind, f"bm25 > {name}"
    )
    pipeline = build_pipeline(spec, index)
    assert pipeline.name == spec
    assert 0 < len(pipeline.retrieve(QUESTION, 4).tables) <= 4


def test_write_your_own_method_shows_the_files_as_they_are() -> None:
    """docs/write-your-own-method.md: every block marked ``<!-- file: PATH -->`` is PATH."""
    page = (DOCS / "write-your-own-method.md").read_text("utf-8")
    root = DOCS.parent
    blocks = page.split("<!-- file: ")[1:]
    assert len(blocks) == 2
    for block in blocks:
        path, rest = block.split(" -->\n", 1)
        code = rest.split("```", 2)[1].split("\n", 1)[1]
        assert code == (root / path).read_text("utf-8"), f"{path} differs from the page"
