from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tabret.cli import main
from test_llms import Script, server  # noqa: F401  (the chat-completions server fixture)


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
    printed, errors = capsys.readouterr()
    assert "%|" not in errors  # --quiet: no progress bar (join graph, generated questions)
    assert "Over all 36 demo questions" in printed
    assert "| demo | hashing(" in printed
    # The default pipeline beside single-hop, per question and in the table.
    assert "   hybrid + reverse > greedy-join: " in printed
    assert "| single-hop |" in printed
    assert "| hybrid + reverse > greedy-join |" in printed
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


def test_index_then_query(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tabret import DenseRetriever, HashingEmbedder, LexicalRetriever, TableIndex, demo_catalog
    from tabret.datasets import _demo_file

    out = tmp_path / "idx"
    source = str(_demo_file("catalog.json"))
    assert main(["index", "json", source, str(out), "--embedder", "hashing", "--quiet"]) == 0
    assert "69 tables" in capsys.readouterr().out
    question = "How many customers signed up in 2023?"
    expected = DenseRetriever(TableIndex.build(demo_catalog(), HashingEmbedder(), progress=False))
    names = expected.retrieve(question, 3).table_names

    assert main(["query", str(out), question, "--k", "3", "--method", "single-hop"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "(rank. score  table; score: cosine similarity with the question)"
    assert printed[1] == question
    assert [line.split()[-1] for line in printed[2:]] == names

    # With no method: the default pipeline for what `tabret index` saved by default.
    from tabret.tuning import load_default

    assert main(["query", str(out), question, "--k", "3"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "(default pipeline: hybrid + reverse > greedy-join)"
    assert printed[2] == question
    default = load_default(out).retrieve(question, 3).table_names
    assert [line.split()[-1] for line in printed[3:]] == default

    questions = tmp_path / "questions.txt"
    question2 = "Which students enrolled in each course?"
    questions.write_text(f"{question}\n\n{question2}\n")
    assert main(["query", str(out), "--file", str(questions), "--json", "--method", "bm25"]) == 0
    results = json.loads(capsys.readouterr().out)
    assert [r["question"] for r in results] == [question, question2]
    lexical = LexicalRetriever(expected.index).retrieve(question2, 5)
    assert [t["name"] for t in results[1]["tables"]] == lexical.table_names != []
    assert results[1]["trace"][0]["step"] == "bm25"


def test_query_errors_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", str(tmp_path / "nothing"), "a question"]) == 1
    assert "nothing" in capsys.readouterr().err
    out = tmp_path / "idx"
    source = str(Path(__file__).parents[2] / "python/tabret/data/demo/catalog.json")
    assert main(["index", "json", source, str(out), "--embedder", "hashing", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["query", str(out)]) == 1
    assert "no question given" in capsys.readouterr().err
    assert main(["query", str(out), "q", "--embedder", "all-MiniLM-L6-v2"]) == 1
    assert "was built with embedder 'hashing(" in capsys.readouterr().err


def test_eval_output_then_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tabret.plot import load_results, recall_figure

    out = tmp_path / "demo.json"
    args = ["eval", "--benchmark", "demo", "--embedder", "hashing", "--quiet", "--k", "1", "3"]
    assert main([*args, "--method", "single-hop", "bm25", "--output", str(out)]) == 0
    png = tmp_path / "recall.png"
    assert main(["plot", str(out), "--output", str(png), "--metric", "recall"]) == 0
    assert png.read_bytes().startswith(b"\x89PNG")
    results = load_results([out])
    fig = recall_figure(results, "recall")
    (ax,) = fig.axes
    assert ax.get_title() == "demo"
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["single-hop (hashing)", "bm25 (hashing)"]
    for line, res in zip(lines, results, strict=True):
        assert np.asarray(line.get_xdata()).tolist() == [1, 3]
        assert np.asarray(line.get_ydata()).tolist() == [res["recall"]["1"], res["recall"]["3"]]
    bad = tmp_path / "bad.json"
    bad.write_text('[{"benchmark": "x"}]')
    capsys.readouterr()
    assert main(["plot", str(bad), "--output", str(png)]) == 1
    assert "is not an evaluation" in capsys.readouterr().err


def test_query_every_method_from_a_saved_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tabret index --join-graph --questions` saves what each method needs; `tabret query
    --method M` answers exactly as the Python API does on the same index."""
    from tabret import HashingEmbedder, TableIndex, demo_catalog
    from tabret.adaptive import AdaptiveRetriever, SimilarityScorer
    from tabret.datasets import _demo_file
    from tabret.index import DenseRetriever
    from tabret.join import GreedyJoinRetriever, JoinClosure, JoinGraph
    from tabret.murre import MurreRetriever
    from tabret.reverse import GeneratedQuestions, ReverseRetriever
    from tabret.rewriting import LexicalRemovalRewriter

    out = tmp_path / "idx"
    source = str(_demo_file("catalog.json"))
    argv = ["index", "json", source, str(out), "--embedder", "hashing", "--quiet"]
    assert main([*argv, "--join-graph", "--questions"]) == 0
    printed = capsys.readouterr().out
    assert "join graph:" in printed
    assert "generated questions: 69" in printed
    index = TableIndex.build(demo_catalog(), HashingEmbedder(), progress=False)
    graph = JoinGraph.build(index)
    expected = {
        "reverse": ReverseRetriever(index, GeneratedQuestions.build(index)),
        "murre": MurreRetriever(index, LexicalRemovalRewriter(index.catalog)),
        "greedy-join": GreedyJoinRetriever(index, graph),  # no LLM: the documented default
        "adaptive": AdaptiveRetriever(DenseRetriever(index), SimilarityScorer("zscore", 1.25)),
    }
    question = "Which students enrolled in each course, and who teaches it?"
    for method, retriever in expected.items():
        assert main(["query", str(out), question, "--method", method, "--json"]) == 0
        got = json.loads(capsys.readouterr().out)[0]
        want = retriever.retrieve(question, 5)
        assert [t["name"] for t in got["tables"]] == want.table_names, method
        assert got["cut"] == want.cut
    assert main(["query", str(out), question, "--method", "adaptive"]) == 0
    lines = capsys.readouterr().out.splitlines()
    want = expected["adaptive"].retrieve(question, 5)
    assert want.cut is not None
    assert len(lines) == 2 + want.cut  # legend, question, the cut (not --k)
    assert main(["query", str(out), question, "--method", "greedy-join", "--k", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "score: its gain in the join-aware objective when picked" in lines[0]
    assert [line.split(".")[0].strip() for line in lines[2:]] == ["1", "2", "3"]
    assert main(["query", str(out), question, "--method", "single-hop", "--closure", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)[0]
    want = JoinClosure(DenseRetriever(index)).retrieve(question, 5)
    assert [t["name"] for t in got["tables"]] == want.table_names
    assert [s["step"] for s in got["trace"]] == [s.step for s in want.trace]


def test_query_method_needs_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "idx"
    source = str(Path(__file__).parents[2] / "python/tabret/data/demo/catalog.json")
    bare = ["--join-graph", "none", "--no-questions"]
    assert main(["index", "json", source, str(out), "--embedder", "hashing", "--quiet", *bare]) == 0
    capsys.readouterr()
    for method, needs in [
        (
            "reverse",
            "has no generated questions: `tabret index` saves them (unless --no-questions)",
        ),
        ("greedy-join", "has no join graph: `tabret index` saves one (unless --join-graph none)"),
        ("crush", "give --llm local or --llm-url"),
    ]:
        assert main(["query", str(out), "q", "--method", method]) == 1
        assert needs in capsys.readouterr().err
    argv = ["index", "json", source, str(out), "--embedder", "hashing", "--column-stats"]
    assert main([*argv, "--join-graph", "none"]) == 1
    assert "--column-stats only feeds the join graph" in capsys.readouterr().err
    assert not (out / "join_graph.tjg").exists()
    argv = ["index", "json", source, str(tmp_path / "new"), "--join-graph", "--column-stats"]
    assert main(argv) == 1
    assert "needs a live database (sqlite or sqlalchemy), not json" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


def test_query_with_an_llm_endpoint(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    server: tuple[str, Script],  # noqa: F811  (the fixture imported above)
) -> None:
    """--llm-url: CRUSH's hallucination and greedy-join's decomposition come from the
    endpoint, one request per distinct prompt."""
    url, script = server
    out = tmp_path / "idx"
    source = str(Path(__file__).parents[2] / "python/tabret/data/demo/catalog.json")
    argv = ["index", "json", source, str(out), "--embedder", "hashing", "--quiet", "--join-graph"]
    assert main(argv) == 0
    capsys.readouterr()
    question = "How many customers signed up in 2023?"
    for method in ("crush", "greedy-join"):
        assert main(["query", str(out), question, "--method", method, "--llm-url", url]) == 0
        printed = capsys.readouterr()
        assert printed.out.splitlines()[1] == question
        assert 3 <= len(printed.out.splitlines()) <= 7
        assert "without --llm-url" not in printed.err
    prompts = script.prompts()
    assert len(prompts) == 2
    assert all(question in p for p in prompts)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import tabret

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"tabret {tabret.__version__}"


def _raising(error: BaseException) -> object:
    def command(args: object) -> int:
        raise error

    return command


@pytest.mark.parametrize(
    ("error", "code", "line"),
    [
        (KeyboardInterrupt(), 130, "tabret: interrupted"),
        (
            ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib"),
            1,
            "tabret: error: No module named 'matplotlib' (pip install 'tabret[plot]')",
        ),
        (
            ImportError("needs sqlglot: pip install 'tabret[benchmarks]'", name="sqlglot"),
            1,
            "tabret: error: needs sqlglot: pip install 'tabret[benchmarks]'",
        ),
        (ModuleNotFoundError("No module named 'zzz'", name="zzz"), 1, "No module named 'zzz'"),
        (PermissionError(13, "Permission denied", "/x"), 1, "Permission denied: '/x'"),
    ],
)
def test_failures_are_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: BaseException,
    code: int,
    line: str,
) -> None:
    """Ctrl-C exits 130 and a missing optional package names its extra: one line, no traceback."""
    from tabret.cli import demo

    monkeypatch.setattr(demo, "command", _raising(error))
    assert main(["demo", "--embedder", "hashing"]) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert line in err


def test_broken_pipe_is_not_reported_as_an_error() -> None:
    """A reader that left early (`| head`) is a BrokenPipeError, an OSError: no error line. In a
    subprocess, since the handler points the process's stdout at /dev/null."""
    script = (
        "from tabret.cli import demo, main\n"
        "def command(args):\n"
        "    raise BrokenPipeError\n"
        "demo.command = command\n"
        "raise SystemExit(main(['demo', '--embedder', 'hashing']))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (1, "")


def test_unknown_model_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sentence_transformers")
    source = str(Path(__file__).parents[2] / "python/tabret/data/demo/catalog.json")
    argv = ["index", "json", source, str(tmp_path / "idx"), "--embedder", str(tmp_path / "nope")]
    assert main([*argv, "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"embedding model '{tmp_path / 'nope'}' could not be loaded" in err
    assert "'hashing'" in err


def test_quiet_hides_the_model_loading_bar(tmp_path: Path) -> None:
    """transformers' "Loading weights" bar is shown by default and not under --quiet."""
    pytest.importorskip("sentence_transformers")
    source = str(Path(__file__).parents[2] / "python/tabret/data/demo/catalog.json")
    out = tmp_path / "idx"
    subprocess.run(
        [sys.executable, "-m", "tabret", "index", "json", source, str(out), "--quiet"],
        capture_output=True,
        check=True,
    )
    base = [sys.executable, "-m", "tabret", "query", str(out), "patients in wards", "--k", "1"]
    loud = subprocess.run(base, capture_output=True, text=True, check=True)
    quiet = subprocess.run([*base, "--quiet"], capture_output=True, text=True, check=True)
    assert "Loading weights" in loud.stderr
    assert "Loading weights" not in quiet.stderr
    assert quiet.stdout == loud.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--llm", "replay"], "--llm replay answers from a recording: give --llm-replay FILE"),
        (["--llm-record", "r.jsonl"], "--llm-record records a live model"),
        (["--llm-threads", "2"], "--llm-threads sets the threads of --llm local"),
        (["--llm", "local", "--llm-url", "http://h/v1"], "does not go with --llm local"),
    ],
)
def test_llm_option_combinations_are_checked(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad --llm combinations are one-line errors before anything runs (no server started)."""
    query = ["query", str(tmp_path / "no-index"), "q", "--method", "greedy-join"]
    assert main([*query, *args]) == 1
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_index_llm_needs_questions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = str(Path(__file__).parents[2] / "python/tabret/data/demo/catalog.json")
    args = ["index", "json", source, str(tmp_path / "idx"), "--embedder", "hashing"]
    assert main([*args, "--no-questions", "--llm", "replay", "--llm-replay", "r.jsonl"]) == 1
    assert "--llm writes the generated questions: drop --no-questions" in capsys.readouterr().err
    assert not (tmp_path / "idx").exists()


def test_llm_local_without_the_extra_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--llm local` where llama-cpp-python (or the model package) is not installed: one line
    naming the extra, before any index is read or server started."""
    import importlib.util

    real = importlib.util.find_spec

    def without_llama(name: str, *args: object) -> object:
        return None if name == "llama_cpp" else real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", without_llama)
    source = str(Path(__file__).parents[2] / "python/tabret/data/demo/catalog.json")
    out = tmp_path / "idx"
    assert main(["index", "json", source, str(out), "--embedder", "hashing", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["query", str(out), "q", "--method", "crush", "--llm", "local"]) == 1
    err = capsys.readouterr().err
    assert "llama-cpp-python[server]" in err
    assert "pip install 'tabret[local-llm]'" in err
    assert len(err.strip().splitlines()) == 1


def _demo_index(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> Path:
    """The demo catalog indexed with the hashing embedder into ``tmp_path/idx`` (what the
    command printed is read off)."""
    from tabret.datasets import _demo_file

    out = tmp_path / "idx"
    source = str(_demo_file("catalog.json"))
    argv = ["index", "json", source, str(out), "--embedder", "hashing", "--quiet", *extra]
    assert main(argv) == 0
    capsys.readouterr()
    return out


@pytest.mark.parametrize(
    ("argv", "dest", "positionals"),
    [
        (["query", "IDX", "--k", "3", "Q1", "Q2"], "question", ["Q1", "Q2"]),
        (["query", "--k", "3", "IDX", "Q1", "--json", "Q2"], "question", ["Q1", "Q2"]),
        (["plot", "a.json", "--output", "x.png", "b.json"], "results", ["a.json", "b.json"]),
    ],
)
def test_options_and_positional_lists_in_any_order(
    argv: list[str], dest: str, positionals: list[str]
) -> None:
    """Options before, between and after a positional list (issue 47, item 16)."""
    from tabret.cli import build_parser

    args = build_parser().parse_args(argv)
    assert getattr(args, dest) == positionals
    assert args.k == 3 if argv[0] == "query" else args.output == "x.png"


def test_query_with_options_before_the_question(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _demo_index(tmp_path, capsys)
    question = "Which physicians work in each ward?"
    assert main(["query", str(out), question, "--k", "3", "--json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert main(["query", str(out), "--k", "3", "--json", question]) == 0
    assert json.loads(capsys.readouterr().out) == expected
    assert len(expected[0]["tables"]) == 3


def test_query_file_with_a_byte_order_mark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A UTF-8 BOM is skipped, as docs/reliability.md says (issue 47, item 11)."""
    out = _demo_index(tmp_path, capsys)
    questions = tmp_path / "q.txt"
    questions.write_bytes("\ufeffWhich physicians?\r\nWhich wards?\r\n".encode())
    assert main(["query", str(out), "--file", str(questions), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [r["question"] for r in got] == ["Which physicians?", "Which wards?"]


def test_query_notes_fewer_tables_than_k(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """BM25 returns only tables sharing a term with the question: the command says so
    (issue 47, item 5); a full answer gets no note."""
    out = _demo_index(tmp_path, capsys)
    assert main(["query", str(out), "ward", "--method", "bm25", "--json"]) == 0
    printed, errors = capsys.readouterr()
    came = len(json.loads(printed)[0]["tables"])
    assert 0 < came < 5  # 'ward' names three of the demo's tables (two through their keys)
    assert (
        f"note: {came} of 5 tables came back: bm25 returns only tables that share a term with "
        "the question" in errors
    )
    assert main(["query", str(out), "ward", "physician", "--method", "bm25", "--k", "2"]) == 0
    assert "note" not in capsys.readouterr().err
    assert main(["query", str(out), "ward", "--k", "2"]) == 0
    assert "note" not in capsys.readouterr().err


def test_index_embedding_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`tabret index --embedding-cache DIR` keeps every table and column text's vector in DIR;
    a second index of a changed catalog embeds only its new texts (issue 47, item 19)."""
    from tabret import Catalog, DiskCachedEmbedder, HashingEmbedder, TableIndex
    from tabret.datasets import _demo_file

    cache = tmp_path / "cache"
    _demo_index(
        tmp_path, capsys, "--embedding-cache", str(cache), "--join-graph", "none", "--no-questions"
    )
    catalog = Catalog.from_json(_demo_file("catalog.json"))
    with DiskCachedEmbedder(HashingEmbedder(), cache) as cached:
        assert len(cached) == catalog.num_tables + catalog.num_columns
    catalog.add_ddl_text("CREATE TABLE visit (id INT, ward_id INT);", "clinic")
    changed = tmp_path / "changed.json"
    catalog.save_json(changed)
    argv = ["index", "json", str(changed), str(tmp_path / "idx2"), "--embedder", "hashing"]
    bare = ["--join-graph", "none", "--no-questions"]
    assert main([*argv, "--quiet", "--embedding-cache", str(cache), *bare]) == 0
    with DiskCachedEmbedder(HashingEmbedder(), cache) as cached:
        assert len(cached) == catalog.num_tables + catalog.num_columns  # 3 texts added
        index = TableIndex.build(catalog, cached, progress=False)
        assert cached.misses == 0
    fresh = TableIndex.build(catalog, HashingEmbedder(), progress=False)
    assert np.array_equal(np.asarray(index.core.table_vectors), fresh.core.table_vectors)
