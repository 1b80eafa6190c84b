"""Issue 18, item 7: the OpenAI-compatible clients never send the API key to another origin,
never show a key given in the URL, and put the path before the query.

Every test talks to real HTTP servers on 127.0.0.1 (``http.server`` in a thread, shut down at
the end); the clients run with no retries and a 5 s socket timeout, so nothing here can hang.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from local_http import serving
from tabret import EmbeddingError, LLMError
from tabret.cli import main
from tabret.embedders import OpenAICompatibleEmbedder
from tabret.llms import OpenAICompatibleLLM, ResponseCache
from tabret.recordings import read_recording

KEY = "sk-SECRET-bearer-0123456789"
URL_PASSWORD = "pw-SECRET-in-userinfo-42"
QUERY_KEY = "qk-SECRET-in-query-77"

CHAT = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "answer"}}]}
EMBEDDINGS = {"data": [{"index": 0, "embedding": [1.0, 0.0]}]}


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Server:
    """A recording server; ``respond(handler_request) -> (status, headers, body)``."""

    respond: Callable[[Request], tuple[int, dict[str, str], bytes]]
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def seen(self) -> list[Request]:
        with self.lock:
            return list(self.requests)


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length", "0") or 0)
            request = Request(
                self.command, self.path, dict(self.headers.items()), self.rfile.read(length)
            )
            with server.lock:
                server.requests.append(request)
            status, headers, body = server.respond(request)
            try:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass

        do_GET = _handle
        do_POST = _handle

    return Handler


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[Request], tuple[int, dict[str, str], bytes]]], Server]]:
    """Starts servers on 127.0.0.1 (each its own port, so its own origin); all are stopped at
    the end of the test."""
    with ExitStack() as running:

        def start(respond: Callable[[Request], tuple[int, dict[str, str], bytes]]) -> Server:
            server = Server(respond)
            server.url = running.enter_context(serving(_handler(server)))
            return server

        yield start


def _answer(payload: dict[str, Any]) -> Callable[[Request], tuple[int, dict[str, str], bytes]]:
    return lambda request: (200, {}, json.dumps(payload).encode())


def _redirect(code: int, location: str) -> Callable[[Request], tuple[int, dict[str, str], bytes]]:
    return lambda request: (code, {"Location": location}, b"{}")


def _llm(base_url: str, api_key: str | None = KEY) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(
        base_url, "m", api_key, timeout=5.0, max_retries=0, backoff=0.0, proxies={}
    )


def _embedder(base_url: str, api_key: str | None = KEY) -> OpenAICompatibleEmbedder:
    return OpenAICompatibleEmbedder(
        base_url, "m", api_key, timeout=5.0, max_retries=0, backoff=0.0, proxies={}
    )


def _call(kind: str, base_url: str, api_key: str | None = KEY) -> object:
    if kind == "llm":
        return _llm(base_url, api_key)(["q"])
    return _embedder(base_url, api_key).embed(["q"])


ERRORS: dict[str, type[Exception]] = {"llm": LLMError, "embedder": EmbeddingError}
PATHS = {"llm": "chat/completions", "embedder": "embeddings"}
ANSWERS = {"llm": CHAT, "embedder": EMBEDDINGS}


# ---------------------------------------------------------------------------------------------
# Redirects


@pytest.mark.parametrize("kind", ["llm", "embedder"])
@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_cross_origin_redirect_is_refused_and_the_key_stays_home(
    serve: Callable[..., Server], kind: str, code: int
) -> None:
    elsewhere = serve(_answer(ANSWERS[kind]))
    home = serve(_redirect(code, f"{elsewhere.url}/v1/{PATHS[kind]}"))
    with pytest.raises(ERRORS[kind]) as caught:
        _call(kind, f"{home.url}/v1?api-key={QUERY_KEY}&api-version=2")
    message = str(caught.value)
    assert f"HTTP {code} redirect to another origin" in message
    assert elsewhere.url + " " in message or elsewhere.url + ")" in message  # the target origin
    assert f"{home.url}/v1/{PATHS[kind]}?api-key=***&api-version=2" in message  # the URL asked
    assert QUERY_KEY not in message
    assert KEY not in message
    _assert_unchained(caught.value)
    assert elsewhere.seen() == [], "nothing at all may reach the other origin"
    assert len(home.seen()) == 1


def test_redirect_to_another_port_or_scheme_of_the_same_host_is_another_origin(
    serve: Callable[..., Server],
) -> None:
    """127.0.0.1 and localhost, or http and https, are different origins too."""
    target = serve(_answer(CHAT))
    port = target.url.rsplit(":", 1)[1]
    for location in (f"http://localhost:{port}/v1/chat/completions", "https://127.0.0.1/x"):
        home = serve(_redirect(307, location))
        with pytest.raises(LLMError, match="redirect to another origin"):
            _call("llm", f"{home.url}/v1")
    assert target.seen() == []


@pytest.mark.parametrize("kind", ["llm", "embedder"])
@pytest.mark.parametrize("code", [307, 308])
def test_same_origin_307_308_is_followed_as_the_same_post(
    serve: Callable[..., Server], kind: str, code: int
) -> None:
    def respond(request: Request) -> tuple[int, dict[str, str], bytes]:
        if request.path.startswith("/old/"):
            return code, {"Location": request.path.replace("/old/", "/new/", 1)}, b"{}"
        return 200, {}, json.dumps(ANSWERS[kind]).encode()

    server = serve(respond)
    result = _call(kind, f"{server.url}/old?api-version=2")
    assert result is not None
    first, second = server.seen()
    assert first.path == f"/old/{PATHS[kind]}?api-version=2"
    assert second.path == f"/new/{PATHS[kind]}?api-version=2"
    assert second.method == "POST"
    assert second.body == first.body
    assert json.loads(second.body)["model"] == "m"
    assert second.headers["Authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("code", [301, 302, 303])
def test_same_origin_301_302_303_is_refused_not_turned_into_a_get(
    serve: Callable[..., Server], code: int
) -> None:
    """Following would re-send the POST as a GET, whose answer is no completion."""

    def respond(request: Request) -> tuple[int, dict[str, str], bytes]:
        if request.method == "POST":
            return code, {"Location": "/elsewhere"}, b"{}"
        return 200, {}, json.dumps(CHAT).encode()  # a GET would "succeed"

    server = serve(respond)
    with pytest.raises(LLMError, match=f"HTTP {code} redirect that would re-send the POST"):
        _call("llm", f"{server.url}/v1")
    assert [r.method for r in server.seen()] == ["POST"]


def test_redirect_loop_within_the_origin_ends_with_an_error(serve: Callable[..., Server]) -> None:
    server = serve(lambda request: (307, {"Location": request.path}, b"{}"))
    with pytest.raises(LLMError, match="HTTP 307"):
        _call("llm", f"{server.url}/v1")
    assert 1 < len(server.seen()) <= 11


# ---------------------------------------------------------------------------------------------
# The path goes before the query


@pytest.mark.parametrize("kind", ["llm", "embedder"])
@pytest.mark.parametrize("suffix", ["", "/"])
def test_the_path_goes_before_the_query_string(
    serve: Callable[..., Server], kind: str, suffix: str
) -> None:
    server = serve(_answer(ANSWERS[kind]))
    _call(kind, f"{server.url}/v1{suffix}?api-version=2024-02-01#frag")
    assert [r.path for r in server.seen()] == [f"/v1/{PATHS[kind]}?api-version=2024-02-01"]
    client = _llm(f"{server.url}/v1{suffix}?api-version=2") if kind == "llm" else None
    if client is not None:
        assert client.url == f"{server.url}/v1/chat/completions?api-version=2"


# ---------------------------------------------------------------------------------------------
# Keys in the URL are never shown


def _secret_url(server: Server) -> str:
    host = server.url.removeprefix("http://")
    return f"http://user:{URL_PASSWORD}@{host}/v1?api-key={QUERY_KEY}&api-version=2"


def _assert_clean(text: str) -> None:
    for secret in (KEY, URL_PASSWORD, QUERY_KEY):
        assert secret not in text, f"{secret} leaked: {text}"


def _assert_unchained(error: BaseException) -> None:
    """No exception rides along (urllib's HTTPError keeps the real URL in ``.url``, a
    JSONDecodeError the whole answer in ``.doc``)."""
    assert error.__cause__ is None
    assert error.__context__ is None


@pytest.mark.parametrize("kind", ["llm", "embedder"])
def test_a_key_in_the_url_is_used_but_never_shown(serve: Callable[..., Server], kind: str) -> None:
    server = serve(_answer(ANSWERS[kind]))
    client: OpenAICompatibleLLM | OpenAICompatibleEmbedder = (
        _llm(_secret_url(server), None) if kind == "llm" else _embedder(_secret_url(server), None)
    )
    for shown in (repr(client), client.url, client.base_url):
        _assert_clean(shown)
        assert "***" in shown
    _call(kind, _secret_url(server), None)
    (request,) = server.seen()
    # The userinfo is sent as HTTP Basic, the query as it is; neither in the request line's host.
    expected = base64.b64encode(f"user:{URL_PASSWORD}".encode()).decode()
    assert request.headers["Authorization"] == f"Basic {expected}"
    assert request.path == f"/v1/{PATHS[kind]}?api-key={QUERY_KEY}&api-version=2"
    assert URL_PASSWORD not in request.headers.get("Host", "")


@pytest.mark.parametrize("kind", ["llm", "embedder"])
@pytest.mark.parametrize("status", [400, 401, 500])
def test_errors_never_show_a_key_even_when_the_server_echoes_it(
    serve: Callable[..., Server], kind: str, status: int
) -> None:
    def respond(request: Request) -> tuple[int, dict[str, str], bytes]:
        """Echoes every credential it got: the header, a decoded Basic pair, the query."""
        auth = request.headers.get("Authorization", "")
        decoded = base64.b64decode(auth[6:]).decode() if auth.startswith("Basic ") else ""
        echo = f"bad credentials {auth!r} ({decoded}) at {request.path}"
        return status, {}, json.dumps({"error": echo}).encode()

    server = serve(respond)
    host = server.url.removeprefix("http://")
    for base, api_key in (
        (f"{server.url}/v1?api-key={QUERY_KEY}", KEY),
        (f"http://user:{URL_PASSWORD}@{host}/v1?token={QUERY_KEY}", None),
    ):
        with pytest.raises(ERRORS[kind]) as caught:
            _call(kind, base, api_key)
        _assert_clean(str(caught.value))
        _assert_clean(repr(caught.value))
        _assert_unchained(caught.value)
        assert f"HTTP {status}" in str(caught.value)


@pytest.mark.parametrize("kind", ["llm", "embedder"])
def test_malformed_answers_echoing_the_key_do_not_show_it(
    serve: Callable[..., Server], kind: str
) -> None:
    server = serve(lambda request: (200, {}, f'{{"oops": "{KEY}"}}'.encode()))
    with pytest.raises(ERRORS[kind]) as caught:
        _call(kind, f"{server.url}/v1")
    _assert_clean(str(caught.value))
    _assert_unchained(caught.value)


def test_unreachable_url_with_credentials_is_reported_redacted() -> None:
    """Connection refused (port 1 on 127.0.0.1): the error names the URL, redacted."""
    base = f"http://user:{URL_PASSWORD}@127.0.0.1:1/v1?api-key={QUERY_KEY}&api-version=2"
    for kind in ("llm", "embedder"):
        with pytest.raises(ERRORS[kind]) as caught:
            _call(kind, base, None)
        message = str(caught.value)
        _assert_clean(message)
        assert "http://***@127.0.0.1:1/v1/" in message
        assert "api-key=***&api-version=2" in message


@pytest.mark.parametrize(
    "base",
    [
        f"ftp://user:{URL_PASSWORD}@host/v1",
        f"http://user:{URL_PASSWORD}@host:notaport/v1",
        f"http:///v1?api-key={QUERY_KEY}",
        f"user:{URL_PASSWORD}@host/v1",
        KEY,  # the key given as base_url by mistake
    ],
)
def test_bad_base_urls_are_refused_without_showing_the_key(base: str) -> None:
    with pytest.raises(ValueError, match="base_url") as caught:
        _llm(base, None)
    _assert_clean(str(caught.value))


def test_credentials_in_the_url_and_an_api_key_are_ambiguous() -> None:
    with pytest.raises(ValueError, match="give one of them") as caught:
        _llm(f"http://user:{URL_PASSWORD}@127.0.0.1:1/v1", KEY)
    _assert_clean(str(caught.value))


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://h/v1", "http://h/v1"),
        ("http://u:p4ssword@h:8/v1", "http://***@h:8/v1"),
        ("http://tokenonly@h/v1", "http://***@h/v1"),
        (
            "https://h/v1?api-version=2&api-key=abcd&key=efgh&access_token=ijkl&x=1",
            "https://h/v1?api-version=2&api-key=***&key=***&access_token=***&x=1",
        ),
        ("https://h/v1?Subscription-Key=abcd#frag", "https://h/v1?Subscription-Key=***"),
        ("u:p4ssword@h/v1", "<15 characters that are no URL, not shown>"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    from tabret._http import redact_url

    assert redact_url(url) == shown


# ---------------------------------------------------------------------------------------------
# Bounds: the answer's size, the time a call takes, answers that do not decode (issue 47, items
# 8 and 11)

MIB = 1024 * 1024


@dataclass
class Stream:
    """A server that answers ``status`` with up to ``total`` bytes in ``chunk``-byte writes,
    ``pause`` seconds apart (until ``stop``), declaring their length or not; it counts what it
    could write and sets ``done`` when a handler ends."""

    status: int = 200
    total: int = 64 * MIB
    chunk: int = 64 * 1024
    pause: float = 0.0
    declare: bool = True
    written: int = 0
    requests: int = 0
    done: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)


def _stream_handler(stream: Stream) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # without Content-Length, the body ends at the close

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
            stream.requests += 1
            try:
                self.send_response(stream.status)
                self.send_header("Content-Type", "application/json")
                if stream.declare:
                    self.send_header("Content-Length", str(stream.total))
                self.end_headers()
                while stream.written < stream.total and not stream.stop.is_set():
                    self.wfile.write(b" " * min(stream.chunk, stream.total - stream.written))
                    self.wfile.flush()
                    stream.written += stream.chunk
                    if stream.pause:
                        stream.stop.wait(stream.pause)
            except OSError:
                pass  # the client stopped reading
            finally:
                stream.done.set()

    return Handler


@pytest.fixture
def stream() -> Iterator[tuple[Stream, str]]:
    """A :class:`Stream` server on 127.0.0.1 and its ``/v1`` URL."""
    state = Stream()
    with serving(_stream_handler(state)) as url:
        try:
            yield state, f"{url}/v1"
        finally:
            state.stop.set()


def _client(kind: str, base_url: str, **options: Any) -> Callable[[], object]:
    """A call of a client of ``kind`` with ``options`` (no retries unless given)."""
    settings: dict[str, Any] = {"max_retries": 0, "backoff": 0.0, "proxies": {}, **options}
    if kind == "llm":
        return lambda: OpenAICompatibleLLM(base_url, "m", **settings)(["q"])
    return lambda: OpenAICompatibleEmbedder(base_url, "m", **settings).embed(["q"])


@pytest.mark.parametrize("kind", ["llm", "embedder"])
@pytest.mark.parametrize("declare", [True, False], ids=["content-length", "no-length"])
def test_an_answer_over_max_response_bytes_is_refused_early(
    stream: tuple[Stream, str], kind: str, declare: bool
) -> None:
    """A 64 MiB answer to a client allowing 1 MiB: refused (not retried) naming the URL and
    the limit, once the Content-Length says so or 1 MiB has come, not after reading it all
    (a 400 MB body used to take the process to 844 MB)."""
    state, url = stream
    state.declare = declare
    call = _client(kind, url, max_response_bytes=MIB, max_retries=2)
    with pytest.raises(ERRORS[kind]) as caught:
        call()
    message = str(caught.value)
    assert f"{url}/{PATHS[kind]}: the answer is larger than max_response_bytes=1048576" in message
    assert ("Content-Length: 67108864" in message) == declare
    assert state.done.wait(10)
    assert state.requests == 1
    assert state.written < state.total  # the client stopped reading


def test_an_endless_error_body_is_not_read_whole(stream: tuple[Stream, str]) -> None:
    """An HTTP 500 with 64 MiB of body: the error comes after the body's start, not its end."""
    state, url = stream
    state.status, state.declare = 500, False
    with pytest.raises(LLMError, match=r"HTTP 500"):
        _client("llm", url)()
    assert state.done.wait(10)
    assert state.written < state.total


def _returns_within(seconds: float, call: Callable[[], object]) -> BaseException:
    """Runs ``call`` in a thread; it must raise within ``seconds``: returns what it raised."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as err:  # handed to the test
            raised.append(err)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the call was still running after {seconds} s"
    assert raised, "the call returned instead of raising"
    return raised[0]


@pytest.mark.parametrize("kind", ["llm", "embedder"])
def test_a_dripping_server_is_cut_off_at_timeout(stream: tuple[Stream, str], kind: str) -> None:
    """A server that sends a byte every 0.1 s (a 10,000-byte answer: 1,000 s) holds a call with
    ``timeout=1`` and one retry for about 2 s, not until it is done (a ``timeout=3`` call used to
    take 80 s): ``timeout`` bounds each attempt, not each socket read."""
    state, url = stream
    state.total, state.chunk, state.pause = 10_000, 1, 0.1
    error = _returns_within(30, _client(kind, url, timeout=1.0, max_retries=1))
    assert isinstance(error, ERRORS[kind])
    assert "failed after 2 attempts" in str(error)
    assert "no whole answer within timeout=1 s" in str(error)
    assert state.requests == 2


def test_total_timeout_bounds_every_attempt_and_wait(stream: tuple[Stream, str]) -> None:
    """``total_timeout`` ends the call, retries included: 10 retries of 1 s attempts end at
    2.5 s."""
    state, url = stream
    state.total, state.chunk, state.pause = 10_000, 1, 0.1
    call = _client("llm", url, timeout=1.0, total_timeout=2.5, max_retries=10, backoff=0.1)
    error = _returns_within(30, call)
    assert isinstance(error, LLMError)
    assert "within total_timeout=2.5 s" in str(error)
    assert state.requests <= 3


def test_timeout_settings_are_checked() -> None:
    for options, what in (
        ({"total_timeout": 0}, "total_timeout"),
        ({"max_response_bytes": 0}, "max_response_bytes"),
    ):
        with pytest.raises(ValueError, match=what):
            OpenAICompatibleLLM("http://127.0.0.1:1/v1", "m", **options)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=what):
            OpenAICompatibleEmbedder("http://127.0.0.1:1/v1", "m", **options)  # type: ignore[arg-type]


DEEP = "[" * 200_000 + "]" * 200_000
#: Answers that are JSON only in name, by client kind: (answer, what the error says).
UNDECODABLE: dict[str, tuple[str, bytes, str]] = {
    "llm-lone-surrogate": (
        "llm",
        b'{"choices": [{"message": {"content": "schools(\\ud83d)"}}]}',
        "choices[0].message.content is not valid Unicode (a lone surrogate at character 8)",
    ),
    "llm-deep-content": (
        "llm",
        f'{{"choices": [{{"message": {{"content": {DEEP}}}}}]}}'.encode(),
        "nested too deeply to parse",
    ),
    "llm-deep-answer": ("llm", DEEP.encode(), "nested too deeply to parse"),
    "embedder-deep-answer": ("embedder", DEEP.encode(), "nested too deeply to parse"),
}


@pytest.mark.parametrize(("kind", "answer", "says"), UNDECODABLE.values(), ids=list(UNDECODABLE))
def test_an_undecodable_answer_is_the_clients_error(
    serve: Callable[..., Server], kind: str, answer: bytes, says: str
) -> None:
    """A lone surrogate escape (``"\\ud83d"``) or 200,000-deep nesting used to escape as
    RuntimeError (pybind11 cannot cast the str) or RecursionError; now LLMError /
    EmbeddingError naming the URL, with no exception chained (it would hold the answer)."""
    server = serve(lambda request: (200, {}, answer))
    with pytest.raises(ERRORS[kind]) as caught:
        _client(kind, f"{server.url}/v1")()
    assert f"{server.url}/v1/{PATHS[kind]}: " in str(caught.value)
    assert says in str(caught.value)
    _assert_unchained(caught.value)


# ---------------------------------------------------------------------------------------------
# The command line


def test_cli_llm_url_with_credentials(
    serve: Callable[..., Server],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`tabret query … --llm-url http://user:KEY@host/v1`: the URL's credentials are used (not
    an OPENAI_API_KEY from the environment, which the client would refuse beside them), and a
    failure prints the URL redacted."""
    for proxy in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(proxy, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("TABRET_LLM_API_KEY", raising=False)
    out = tmp_path / "idx"
    source = str(Path(__file__).parents[2] / "python/tabret/data/demo/catalog.json")
    assert main(["index", "json", source, str(out), "--embedder", "hashing", "--quiet"]) == 0
    capsys.readouterr()
    good = serve(_answer(CHAT))
    query = ["query", str(out), "How many customers?", "--method", "crush", "--llm-url"]
    assert main([*query, _secret_url(good)]) == 0
    # --llm-api auto: a GET of llama.cpp's /props (same origin), then the chat request
    probe, request = good.seen()
    assert (probe.method, probe.path) == ("GET", "/props")
    assert request.method == "POST"
    expected = base64.b64encode(f"user:{URL_PASSWORD}".encode()).decode()
    assert request.headers["Authorization"] == f"Basic {expected}"
    capsys.readouterr()

    bad = serve(lambda request: (401, {}, b'{"error": "no"}'))
    assert main([*query, _secret_url(bad)]) == 1
    err = capsys.readouterr().err
    assert "HTTP 401" in err
    assert "http://***@127.0.0.1:" in err
    _assert_clean(err)


def test_cli_never_caches_or_records_a_null_answer(
    serve: Callable[..., Server],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 47, item 2, end to end: `tabret query … --llm-cache C --llm-record R` against a
    server answering ``"content": null`` fails naming the endpoint, and neither the cache nor the
    recording holds an answer (they used to hold ``''``, and every later run reused it)."""
    for proxy in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(proxy, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("TABRET_LLM_API_KEY", raising=False)
    out = tmp_path / "idx"
    source = str(Path(__file__).parents[2] / "python/tabret/data/demo/catalog.json")
    assert main(["index", "json", source, str(out), "--embedder", "hashing", "--quiet"]) == 0
    server = serve(_answer({"choices": [{"message": {"content": None}}]}))
    cache, recording = tmp_path / "cache.sqlite", tmp_path / "answers.jsonl"
    query = ["query", str(out), "How many customers?", "--method", "crush", "--llm-api", "chat"]
    storing = ["--llm-cache", str(cache), "--llm-record", str(recording)]
    capsys.readouterr()
    assert main([*query, "--llm-url", f"{server.url}/v1", *storing]) == 1
    err = capsys.readouterr().err
    assert f"{server.url}/v1/chat/completions: choices[0].message.content is null" in err
    assert len(ResponseCache(cache)) == 0
    assert read_recording(recording) == {}
