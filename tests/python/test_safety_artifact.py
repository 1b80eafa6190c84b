"""Data safety of saved index directories (issue 18, items 1-5): a save never deletes what
tabret did not write, keeps the join graph and questions saved with the index, takes turns with a
concurrent save, and a load racing saves in other processes gets one whole index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

import tabret
from tabret import Catalog
from tabret.cli import main
from tabret.embedders import HashingEmbedder
from tabret.index import DenseRetriever, TableIndex, load_saved
from tabret.join import JoinGraph
from tabret.reverse import GeneratedQuestions

REPO = Path(__file__).resolve().parents[2]
SHOP = REPO / "tests" / "data" / "ddl" / "sqlite_shop.sql"
HASHING = HashingEmbedder(dim=16)
QUESTIONS = ["which customers placed orders", "product prices"]


def env() -> dict[str, str]:
    """Child processes import the tabret this process imported."""
    return {**os.environ, "PYTHONPATH": str(Path(tabret.__file__).resolve().parents[1])}


def edges(graph: JoinGraph) -> list[tuple[int, int, float]]:
    return [(e.a, e.b, e.weight) for e in graph.edges]


def test_cli_index_keeps_a_directory_it_did_not_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "manifest.json").write_text('{"manifest_version": 3}')
    (d / "thesis.tex").write_text("x")
    assert main(["index", "ddl", str(SHOP), str(d), "--embedder", "hashing", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{d}: exists and is not a saved tabret index" in err
    assert sorted(p.name for p in d.iterdir()) == ["manifest.json", "thesis.tex"]
    assert (d / "thesis.tex").read_text() == "x"


def test_a_file_added_to_an_index_is_never_deleted(tmp_path: Path) -> None:
    d = tmp_path / "idx"
    index = TableIndex.build(Catalog.from_ddl(SHOP), HASHING, progress=False)
    index.save(d)
    (d / "notes.md").write_text("mine")
    with pytest.raises(tabret.FileError, match=r"tabret did not write \('notes\.md'\)"):
        index.save(d)
    assert (d / "notes.md").read_text() == "mine"
    assert TableIndex.load(d, HASHING).catalog.num_tables == index.catalog.num_tables


def test_resaving_an_index_keeps_its_join_graph_and_questions(tmp_path: Path) -> None:
    d = tmp_path / "idx"
    argv = ["index", "ddl", str(SHOP), str(d), "--embedder", "hashing", "--quiet"]
    assert main([*argv, "--join-graph", "--questions"]) == 0
    index, graph, questions = load_saved(d, "hashing")
    assert graph is not None
    assert questions is not None
    index.save(d)  # what the docs say a user may do: the index alone
    assert main([*argv]) == 0  # and the CLI again, without the extras
    again, graph2, questions2 = load_saved(d, "hashing")
    assert graph2 is not None
    assert edges(graph2) == edges(graph)
    assert questions2 is not None
    assert questions2.questions == questions.questions
    assert edges(JoinGraph.load(d, again)) == edges(graph)
    assert GeneratedQuestions.load(d, again).questions == questions.questions

    # Another catalog's index would orphan them: refused unless replace (CLI --replace).
    demo = TableIndex.build(tabret.demo_catalog(), "hashing", progress=False)
    with pytest.raises(tabret.FileError, match="another catalog or embedder"):
        demo.save(d)
    demo.save(d, replace=True)
    loaded, graph3, questions3 = load_saved(d, "hashing")
    assert loaded.catalog.num_tables == demo.catalog.num_tables
    assert graph3 is None
    assert questions3 is None
    # Parts are saved only into the directory of their index.
    with pytest.raises(tabret.FileError, match="another catalog"):
        graph.save(d)
    with pytest.raises(tabret.FileError, match="save the index there first"):
        graph.save(tmp_path / "elsewhere")


def test_threads_saving_to_one_path_take_turns(tmp_path: Path) -> None:
    d = tmp_path / "idx"
    small = TableIndex.build(Catalog.from_ddl(SHOP), HASHING, progress=False)
    demo = TableIndex.build(tabret.demo_catalog(), HASHING, progress=False)
    errors: list[BaseException] = []

    def save(index: TableIndex) -> None:
        for _ in range(10):
            try:
                index.save(d, replace=True)
            except BaseException as err:  # collected: the assertion below reports it
                errors.append(err)

    threads = [threading.Thread(target=save, args=(i,)) for i in (small, demo, small, demo)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    n = TableIndex.load(d, HASHING).catalog.num_tables
    assert n in (small.catalog.num_tables, demo.catalog.num_tables)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


SAVER = textwrap.dedent(
    """
    import sys, time
    from tabret import _core
    source, target, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    index, graph, questions, _, _ = _core.load_index(source)
    print("ready", flush=True)
    sys.stdin.readline()
    for _ in range(rounds):
        _core.save_index(target, index, graph, questions, True)
    print("done", flush=True)
    """
)

LOADER = textwrap.dedent(
    """
    import json, os, sys
    from tabret import _core
    target, stop, most = sys.argv[1], sys.argv[2], int(sys.argv[3])
    seen, errors = {}, []
    print("ready", flush=True)
    sys.stdin.readline()
    for _ in range(most):  # until the savers are done (the stop file), at most `most` loads
        if os.path.exists(stop):
            break
        try:
            index, graph, questions, _, _ = _core.load_index(target)
            n = index.catalog.num_tables
            # One whole artifact: every part is of the index's catalog.
            key = f"{n}:{len(graph) if graph else -1}:{len(questions) if questions else -1}"
            seen[key] = seen.get(key, 0) + 1
        except Exception as err:
            errors.append(f"{type(err).__name__}: {err}")
    print(json.dumps({"seen": seen, "errors": errors[:5], "n_errors": len(errors)}), flush=True)
    """
)


def test_processes_saving_and_loading_one_path_never_mix(tmp_path: Path) -> None:
    """Two processes save different HNSW indexes (each with its join graph and questions) to one
    path while a third loads it: every load is one whole artifact, none fails."""
    sources: dict[str, Any] = {}
    for name, cat in (("a", Catalog.from_ddl(SHOP)), ("b", tabret.demo_catalog())):
        index = TableIndex.build(cat, HASHING, kind="hnsw", progress=False)
        graph = JoinGraph.build(index)
        questions = GeneratedQuestions.build(index)
        index.save(tmp_path / name, join_graph=graph, questions=questions)
        sources[name] = f"{cat.num_tables}:{len(graph)}:{len(questions)}"
    target = tmp_path / "shared"
    TableIndex.load(tmp_path / "a", HASHING).save(target)
    pipes: dict[str, Any] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True}
    savers = [
        subprocess.Popen(
            [sys.executable, "-c", SAVER, str(tmp_path / n), str(target), "25"], env=env(), **pipes
        )
        for n in ("a", "b")
    ]
    stop = tmp_path / "stop"
    loader = subprocess.Popen(
        [sys.executable, "-c", LOADER, str(target), str(stop), "50000"], env=env(), **pipes
    )
    procs = [*savers, loader]
    try:
        for p in procs:
            assert p.stdout is not None
            assert p.stdout.readline() == "ready\n"
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        for p in savers:
            out, _ = p.communicate(timeout=180)
            assert out.strip().endswith("done")
            assert p.returncode == 0
        stop.touch()
        out, _ = loader.communicate(timeout=150)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    report = json.loads(out.strip().splitlines()[-1])
    assert report["n_errors"] == 0, report["errors"]
    first = f"{sources['a'].split(':')[0]}:-1:-1"  # the index alone, saved before the savers ran
    assert set(report["seen"]) <= {sources["a"], sources["b"], first}
    assert sum(report["seen"].values()) > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "shared", "stop"]


def test_saved_index_answers_like_the_built_one(tmp_path: Path) -> None:
    index = TableIndex.build(Catalog.from_ddl(SHOP), HASHING, kind="hnsw", progress=False)
    index.save(tmp_path / "idx")
    loaded = TableIndex.load(tmp_path / "idx", HASHING)
    assert DenseRetriever(loaded).retrieve(QUESTIONS, 3) == DenseRetriever(index).retrieve(
        QUESTIONS, 3
    )
