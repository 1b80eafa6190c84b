"""``tabret serve``: its MCP tools through the MCP SDK's own clients over stdio and streamable
HTTP, the JSON HTTP API beside them, reloads under load, and the guards (token, rate, body)."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tabret import (
    Catalog,
    HashingEmbedder,
    JoinGraph,
    TableIndex,
    __version__,
    demo_catalog,
    demo_questions,
)
from tabret.cli import main
from tabret.methods import METHODS

QUESTIONS = [q.question for q in demo_questions()[::4]]  # 9 questions, every database
BM25_QUESTION = "Which students enrolled in each course, and who teaches it?"
TOOLS = ["find_tables", "describe_tables", "join_path", "list_databases"]
DDL = Path(__file__).parent.parent / "data" / "ddl" / "postgres_hr.sql"


def _save_demo(path: Path) -> None:
    index = TableIndex.build(demo_catalog(), HashingEmbedder(), progress=False)
    index.save(path, join_graph=JoinGraph.build(index, progress=False), replace=True)


def _save_other(path: Path) -> None:
    """Another catalog (7 HR tables), no join graph."""
    index = TableIndex.build(Catalog.from_ddl(DDL), HashingEmbedder(), progress=False)
    index.save(path, replace=True)


def query_json(index: Path, questions: list[str], *args: str) -> list[dict[str, Any]]:
    """What ``tabret query --json`` answers."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["query", str(index), *questions, "--json", *args]) == 0
    results: list[dict[str, Any]] = json.loads(out.getvalue())
    return results


def ranked(tables: list[dict[str, Any]]) -> list[tuple[str, float]]:
    return [(t["name"], t["score"]) for t in tables]


def same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> bool:
    """The same tables in the same order with the same scores up to float32 rounding (a batch of
    questions is scored by another kernel than a single one, in another order of additions)."""
    return [n for n, _ in got] == [n for n, _ in want] and all(
        g == pytest.approx(w, rel=1e-5, abs=1e-6) for (_, g), (_, w) in zip(got, want, strict=True)
    )


def leaves(err: BaseException) -> Iterator[BaseException]:
    """The exceptions in a (nested) exception group, or ``err`` itself."""
    inner = getattr(err, "exceptions", None)
    if inner is None:
        yield err
    for e in inner or ():
        yield from leaves(e)


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("serve") / "demo"
    _save_demo(path)
    return path


@pytest.fixture(scope="module")
def other_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("serve") / "other"
    _save_other(path)
    return path


@dataclass(frozen=True)
class Expected:
    default: dict[str, list[tuple[str, float]]]  # question -> (table, score), best first
    bm25: list[tuple[str, float]]  # BM25_QUESTION's three tables by bm25


@pytest.fixture(scope="module")
def expected(demo_dir: Path) -> Expected:
    """``tabret query``'s answers over the demo index: QUESTIONS with its defaults (the default
    pipeline for an index with a join graph, k = 5), and BM25_QUESTION with ``--method bm25
    --k 3``."""
    (bm25,) = query_json(demo_dir, [BM25_QUESTION], "--method", "bm25", "--k", "3")
    return Expected(
        {r["question"]: ranked(r["tables"]) for r in query_json(demo_dir, QUESTIONS)},
        ranked(bm25["tables"]),
    )


#: What a server subprocess needs of this one's environment: tabret from a checkout, and under
#: `make sanitize` the preloaded sanitizer runtimes and their options.
_PASSED_ON = ("PYTHONPATH", "TABRET_DATA_DIR", "LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")


def _env() -> dict[str, str]:
    """The variables of :data:`_PASSED_ON` this process has (the SDK adds PATH, HOME, …)."""
    return {k: os.environ[k] for k in _PASSED_ON if k in os.environ}


@dataclass
class Server:
    """A ``tabret serve --http`` process; its stderr is collected as it comes."""

    proc: subprocess.Popen[str]
    url: str
    stderr: list[str] = field(default_factory=list)

    def get(self, path: str, token: str | None = None) -> tuple[int, dict[str, str], Any]:
        return _request(self.url + path, None, token)

    def post(self, path: str, body: object, token: str | None = None) -> tuple[int, Any]:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        status, _, answer = _request(self.url + path, data, token)
        return status, answer

    def generation(self) -> int:
        return int(self.get("/health")[2]["generation"])


def _request(url: str, data: bytes | None, token: str | None) -> tuple[int, dict[str, str], Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, _lower(r.headers.items()), json.loads(r.read())
    except urllib.error.HTTPError as err:
        with err:
            return err.code, _lower(err.headers.items()), json.loads(err.read())


def _lower(headers: list[tuple[str, str]]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers}


@contextlib.contextmanager
def serving(index: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    """``tabret serve INDEX --http 127.0.0.1:0 ARGS`` until the block ends (then SIGTERM)."""
    argv = [sys.executable, "-m", "tabret", "serve", str(index), "--http", "127.0.0.1:0", *args]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()
    found = re.search(r"MCP at (http://\S+)/mcp", first)
    if not found:
        proc.kill()
        with proc:
            pytest.fail(f"tabret serve did not start: {first}{proc.stderr.read()}")
    server = Server(proc, found[1], [first])
    drain = threading.Thread(target=lambda: server.stderr.extend(proc.stderr or []), daemon=True)
    drain.start()
    try:
        yield server
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        drain.join(timeout=10)
        proc.stderr.close()


@pytest.fixture(scope="module")
def server(demo_dir: Path) -> Iterator[Server]:
    with serving(demo_dir) as s:
        yield s


@contextlib.asynccontextmanager
async def mcp_http(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=300)) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's structured answer; a tool error fails the test with its message."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    answer: dict[str, Any] | None = result.structured_content
    assert answer is not None
    return answer


async def tool_error(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error
    text = result.content[0]
    assert text.type == "text"
    return text.text


async def check_tools(session: ClientSession, expected: Expected) -> None:
    """Every tool of a session over the demo index: answers and errors."""
    assert sorted(t.name for t in (await session.list_tools()).tools) == sorted(TOOLS)
    for question, want in expected.default.items():
        found = await call(session, "find_tables", question=question)
        assert same(ranked(found["tables"]), want)
        assert found["pipeline"] == "hybrid > greedy-join"  # the default with a join graph
        assert found["score"] == METHODS["greedy-join"].score
        assert all(t["why"] for t in found["tables"])
        assert found["prompt"].count("CREATE TABLE") == 5
    bm25 = await call(session, "find_tables", question=BM25_QUESTION, k=3, pipeline="bm25")
    assert same(ranked(bm25["tables"]), expected.bm25)
    assert bm25["tables"][0]["why"][0]["step"] == "bm25"

    databases = (await call(session, "list_databases"))["databases"]
    assert [(d["name"], d["tables"]) for d in databases][:2] == [
        ("hospital", 10),
        ("university", 11),
    ]
    (ward,) = (await call(session, "describe_tables", tables=["hospital.ward"]))["tables"]
    assert ward["name"] == "hospital.ward"
    assert ward["primary_key"] == ["ward_id"]
    assert "hospital.pt_admission.ward_id" in ward["referenced_by"]
    assert ward["ddl"].startswith("-- An inpatient ward")
    assert "CREATE TABLE ward" in ward["ddl"]
    path = await call(session, "join_path", from_table="hospital.ward", to_table="hospital.address")
    hops = [(s["from_table"], s["to_table"]) for s in path["steps"]]
    assert hops[0][0] == "hospital.ward"
    assert hops[-1][1] == "hospital.address"
    assert all(a[1] == b[0] for a, b in itertools.pairwise(hops))

    assert "question is empty" in await tool_error(session, "find_tables", question="  ")
    assert "greater than or equal to 1" in await tool_error(
        session, "find_tables", question="q", k=0
    )
    unknown = await tool_error(session, "find_tables", question="q", pipeline="no-such-method")
    assert "unknown method 'no-such-method'" in unknown
    assert "no table 'nope'" in await tool_error(session, "describe_tables", tables=["nope"])
    apart = await tool_error(
        session, "join_path", from_table="hospital.ward", to_table="webshop.Customer"
    )
    assert "no join path from hospital.ward to webshop.Customer" in apart


def test_tools_over_stdio(demo_dir: Path, expected: Expected) -> None:
    """The way MCP clients launch a server: a subprocess speaking MCP on stdin/stdout."""

    async def run() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "tabret", "serve", str(demo_dir)], env=_env()
        )
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await check_tools(session, expected)

    anyio.run(run)


def test_tools_over_http(server: Server, expected: Expected) -> None:
    async def run() -> None:
        async with mcp_http(server.url) as session:
            await check_tools(session, expected)

    anyio.run(run)


def test_eight_concurrent_clients_answer_as_query(server: Server, expected: Expected) -> None:
    """8 MCP sessions at once, each asking every question: `tabret query`'s answers."""
    answers: list[tuple[str, list[tuple[str, float]]]] = []

    async def client() -> None:
        async with mcp_http(server.url) as session:
            for question in QUESTIONS:
                found = await call(session, "find_tables", question=question)
                answers.append((question, ranked(found["tables"])))

    async def run() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(8):
                tg.start_soon(client)

    anyio.run(run)
    assert len(answers) == 8 * len(QUESTIONS)
    assert all(same(got, expected.default[question]) for question, got in answers)


def test_json_api(server: Server, expected: Expected) -> None:
    question = QUESTIONS[0]
    want = expected.default[question]
    status, found = server.post("/v1/find_tables", {"question": question})
    assert status == 200
    assert same(ranked(found["tables"]), want)
    status, found = server.post("/v1/find_tables", {"question": question, "k": 2})
    assert status == 200
    assert same(ranked(found["tables"]), want[:2])
    status, tables = server.post("/v1/describe_tables", {"tables": ["ward"]})  # one database has it
    assert (status, tables["tables"][0]["name"]) == (200, "hospital.ward")
    status, dbs = server.post("/v1/list_databases", b"")
    assert (status, len(dbs["databases"])) == (200, 6)
    status, path = server.post(
        "/v1/join_path", {"from_table": "hospital.ward", "to_table": "hospital.physician"}
    )
    assert status == 200
    assert path["steps"][0]["declared"] is True

    status, _, health = server.get("/health")
    assert (status, health) == (200, {"status": "ok", "generation": 1})
    versions = server.get("/version")[2]
    assert versions["tabret"] == __version__
    assert versions["index"]["tables"] == 69
    assert versions["index"]["join_graph"] is True
    spec = server.get("/openapi.json")[2]
    assert spec["openapi"].startswith("3.")
    assert sorted(spec["paths"]) == sorted([f"/v1/{t}" for t in TOOLS] + ["/health", "/version"])
    body = spec["paths"]["/v1/find_tables"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["required"] == ["question"]
    assert body["schema"]["properties"]["k"]["minimum"] == 1
    assert "FoundTables" in spec["components"]["schemas"]


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"question": ""}, 400, "question is empty"),
        ({"question": "q", "k": 0}, 400, "k: Input should be greater than or equal to 1"),
        ({"question": "q", "pipeline": "nope"}, 400, "unknown method 'nope'"),
        ({"question": "q", "pipeline": "bm25 > single-hop"}, 400, "cannot follow another stage"),
        ({"question": "q", "colour": "red"}, 400, "colour: Unexpected keyword argument"),
        ({}, 400, "question: Missing required argument"),
        (["q"], 400, "must be a JSON object"),
        (b"{not json", 400, "not JSON"),
        (b'{"question": "' + b"x" * 70_000 + b'"}', 413, "over 65536 bytes"),
    ],
)
def test_json_api_bad_input(server: Server, body: object, status: int, message: str) -> None:
    got, answer = server.post("/v1/find_tables", body)
    assert got == status
    assert message in answer["error"]


def test_token(demo_dir: Path) -> None:
    """With a token, every path but /health needs it, MCP's included."""
    with serving(demo_dir, "--token", "s3cret") as s:
        assert s.post("/v1/list_databases", {})[0] == 401
        assert s.post("/v1/list_databases", {}, token="wrong")[0] == 401
        assert s.post("/v1/list_databases", {}, token="s3cret")[0] == 200
        assert s.get("/version")[0] == 401
        assert s.get("/health")[0] == 200

        async def run(token: str) -> list[dict[str, Any]]:
            async with mcp_http(s.url, token) as session:
                databases: list[dict[str, Any]] = (await call(session, "list_databases"))[
                    "databases"
                ]
                return databases

        assert len(anyio.run(run, "s3cret")) == 6
        with pytest.raises(Exception) as refused:  # noqa: PT011  (a group: its leaves are read)
            anyio.run(run, "wrong")
        assert any(isinstance(e, MCPError) for e in leaves(refused.value))


def test_other_addresses_need_a_token(demo_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", str(demo_dir), "--http", "0.0.0.0:0", "--token", ""]) == 1
    err = capsys.readouterr().err
    assert "0.0.0.0:0 is not a loopback address" in err
    assert "--token or $TABRET_SERVE_TOKEN" in err


def test_token_from_the_environment(demo_dir: Path) -> None:
    """$TABRET_SERVE_TOKEN: a server on all addresses starts, and asks for it."""
    argv = [sys.executable, "-m", "tabret", "serve", str(demo_dir), "--http", "0.0.0.0:0"]
    env = {**os.environ, "TABRET_SERVE_TOKEN": "from-env"}
    with subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env) as proc:
        assert proc.stderr is not None
        _ask_for_the_token(proc, proc.stderr)


def _ask_for_the_token(proc: subprocess.Popen[str], stderr: IO[str]) -> None:
    try:
        found = re.search(r":(\d+)/mcp", stderr.readline())
        assert found
        url = f"http://127.0.0.1:{found[1]}/v1/list_databases"
        assert _request(url, b"{}", None)[0] == 401
        assert _request(url, b"{}", "from-env")[0] == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert "tabret serve: stopped" in stderr.read()


def test_rate_bound(demo_dir: Path) -> None:
    with serving(demo_dir, "--rate", "0.001", "--burst", "2") as s:
        assert s.get("/health")[0] == 200
        assert s.get("/health")[0] == 200
        status, headers, answer = s.get("/health")
        assert (status, answer["error"]) == (429, "too many requests")
        assert int(headers["retry-after"]) >= 1


def test_reload_under_load(tmp_path: Path, demo_dir: Path, other_dir: Path) -> None:
    """Clients query while the directory is saved again, twice: every answer comes from the old
    or the new index, none is an error, and the new one is served once loaded."""
    index = tmp_path / "idx"
    _save_demo(index)
    old = {r["question"]: ranked(r["tables"]) for r in query_json(demo_dir, QUESTIONS, "--k", "3")}
    new = {r["question"]: ranked(r["tables"]) for r in query_json(other_dir, QUESTIONS, "--k", "3")}
    assert not any(same(old[q], new[q]) for q in QUESTIONS)
    answers: list[tuple[int, str, Any]] = []
    with serving(index, "--reload-interval", "0.05", "--rate", "0") as s:
        stop = threading.Event()

        def client() -> None:
            while not stop.is_set():
                for question in QUESTIONS:
                    status, found = s.post("/v1/find_tables", {"question": question, "k": 3})
                    answers.append((status, question, found))

        threads = [threading.Thread(target=client) for _ in range(4)]
        for t in threads:
            t.start()

        def answered(more: int) -> None:
            seen = len(answers)
            while len(answers) < seen + more:
                threading.Event().wait(0.05)

        try:
            answered(2 * len(QUESTIONS))
            for save, generation in ((_save_other, 2), (_save_demo, 3)):
                save(index)
                while s.generation() < generation:  # the watcher loads it within moments
                    threading.Event().wait(0.05)
                answered(2 * len(QUESTIONS))  # clients see the new one
        finally:
            stop.set()
            for t in threads:
                t.join()

    assert [a for a in answers if a[0] != 200] == []
    assert {found["generation"] for _, _, found in answers} == {1, 2, 3}
    for _, question, found in answers:  # generations 1 and 3 are the demo index, 2 the other
        want = new if found["generation"] == 2 else old
        assert same(ranked(found["tables"]), want[question])


def test_a_failed_reload_keeps_the_old_index(tmp_path: Path) -> None:
    """A save the server cannot load (built with another embedder than its ``--embedder``) is
    logged and the old index served; the next save that loads is swapped in."""
    from tabret.serve.service import IndexService

    index = tmp_path / "idx"
    _save_demo(index)
    service = IndexService(str(index), embedder="hashing")
    assert service.reload_if_changed() is False  # nothing changed
    other = TableIndex.build(Catalog.from_ddl(DDL), HashingEmbedder(dim=256), progress=False)
    other.save(index, replace=True)
    assert service.reload_if_changed() is False
    assert service.reload_if_changed() is False  # not tried again until the next save
    assert service.status().generation == 1
    assert service.find_tables(QUESTIONS[0]).tables[0].name.startswith("hospital.")
    _save_other(index)
    assert service.reload_if_changed() is True
    assert (service.status().generation, service.status().tables) == (2, 7)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{tmp}/nothing"], "{tmp}/nothing"),
        (["{demo}", "--pipeline", "nope"], "unknown method 'nope'"),
        (["{other}", "--pipeline", "greedy-join"], "has no join graph"),
        (["{demo}", "--http", "localhost"], "not HOST:PORT: 'localhost'"),
    ],
)
def test_errors_before_serving(
    args: list[str],
    message: str,
    tmp_path: Path,
    demo_dir: Path,
    other_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    names = {"tmp": tmp_path, "demo": demo_dir, "other": other_dir}
    argv = ["serve", *(a.format(**names) for a in args)]
    try:
        code = main(argv)
    except SystemExit as exit:  # argparse refuses the option
        code = int(exit.code or 0)
    assert code in (1, 2)
    assert message.format(**names) in capsys.readouterr().err


def test_join_path_is_the_strongest(demo_dir: Path) -> None:
    """JoinGraph.path against every pair of one database: connected edges, from a to b, whose ω
    product no direct edge beats."""
    index = TableIndex.load(demo_dir)
    graph = JoinGraph.load(demo_dir, index)
    tables = index.catalog.database(0).tables
    for a in tables:
        for b in tables:
            path = graph.path(a, b)
            at = a
            strength = 1.0
            for e in path:
                assert at in (e.a, e.b)
                at = e.b if e.a == at else e.a
                strength *= e.weight
            assert at == b
            assert strength >= graph.weight(a, b) - 1e-9
    assert graph.path(tables[0], tables[0]) == []
