"""LLM adapters: the OpenAI-compatible client against a real local HTTP server, the callable
adapter, answer checks, deduplication, the response cache and the recorded-answer replay."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

import tabret
from local_http import serving
from tabret.llms import (
    LLM,
    CachedLLM,
    CallableLLM,
    OpenAICompatibleLLM,
    ReplayLLM,
    ReplaySource,
    ResponseCache,
    check_completions,
    complete,
    crush_recordings,
    jar_decompositions,
)
from tabret.recordings import RecordingLLM, read_recording
from tabret.rewriting import (
    CrushRewriter,
    DecompositionRewriter,
    RecordedRewriter,
    RewriteRequest,
    default_prompts,
)

# ---------------------------------------------------------------------------------------------
# A scripted chat-completions server on 127.0.0.1


@dataclass
class Script:
    """What the server does per prompt: a queue of actions, then the default answer.

    Actions: ("reply", text), ("status", code, body), ("sleep", seconds, text) — reply after a
    pause —, ("raw", bytes) — a 200 with that body. The default answer is "answer: <prompt>";
    a prompt "slow <i>" waits a little (longer for smaller i) so that concurrent replies finish
    out of order.
    """

    actions: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)

    def prompts(self) -> list[str]:
        with self.lock:
            return [r["messages"][-1]["content"] for r in self.requests]

    def count(self, prompt: str) -> int:
        return self.prompts().count(prompt)


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            if self.path != "/v1/chat/completions":
                self._send(404, b'{"error": "not found"}')
                return
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            prompt = body["messages"][-1]["content"]
            with script.lock:
                script.requests.append(body)
                script.headers.append(dict(self.headers.items()))
                queue = script.actions.get(prompt, [])
                action = queue.pop(0) if queue else ("reply", f"answer: {prompt}")
            if prompt.startswith("slow "):
                script.stop.wait(0.02 * (10 - int(prompt.split()[1])))
            kind = action[0]
            if kind == "status":
                self._send(action[1], action[2].encode())
            elif kind == "raw":
                self._send(200, action[1])
            else:
                if kind == "sleep":
                    script.stop.wait(action[1])
                self._reply(action[-1])

        def _reply(self, text: str) -> None:
            answer = {
                "id": "x",
                "object": "chat.completion",
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}},
                ],
            }
            self._send(200, json.dumps(answer).encode())

        def _send(self, status: int, payload: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the client gave up (timeout)

    return Handler


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    """(base_url, script) of a chat-completions server on 127.0.0.1, ephemeral port."""
    script = Script()
    with serving(_handler(script)) as url:
        try:
            yield f"{url}/v1", script
        finally:
            script.stop.set()  # sleeping handlers answer now, before the server shuts down


def client(base_url: str, **kwargs: Any) -> OpenAICompatibleLLM:
    options: dict[str, Any] = {"timeout": 5.0, "max_retries": 2, "backoff": 0.01, "proxies": {}}
    options.update(kwargs)
    return OpenAICompatibleLLM(base_url, "test-model", **options)


# ---------------------------------------------------------------------------------------------
# The OpenAI-compatible adapter


def test_openai_batch_keeps_order_and_speaks_the_protocol(server: tuple[str, Script]) -> None:
    url, script = server
    llm = client(url, api_key="sk-test", temperature=0.3, max_tokens=64, concurrency=4)
    prompts = [f"slow {i}" for i in range(8)]
    assert llm(prompts) == [f"answer: slow {i}" for i in range(8)]
    assert sorted(script.prompts()) == sorted(prompts)
    body = script.requests[0]
    assert body["model"] == "test-model"
    assert body["temperature"] == 0.3
    assert body["max_tokens"] == 64
    assert body["messages"][-1]["role"] == "user"
    assert script.headers[0]["Authorization"] == "Bearer sk-test"
    assert isinstance(llm, LLM)
    assert llm.name == "test-model"
    assert llm([]) == []


def test_openai_identical_prompts_cost_one_request(server: tuple[str, Script]) -> None:
    url, script = server
    llm = client(url)
    assert llm(["a", "b", "a", "a", "b"]) == ["answer: a", "answer: b"] + ["answer: a"] * 2 + [
        "answer: b"
    ]
    assert script.count("a") == 1
    assert script.count("b") == 1
    assert llm(["c"] * 4) == ["answer: c"] * 4
    assert script.count("c") == 1


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_openai_retries_429_and_5xx(server: tuple[str, Script], status: int) -> None:
    url, script = server
    script.actions["p"] = [("status", status, '{"error": "busy"}'), ("reply", "ok")]
    assert client(url)(["p", "q"]) == ["ok", "answer: q"]
    assert script.count("p") == 2


def test_openai_gives_up_after_the_last_retry(server: tuple[str, Script]) -> None:
    url, script = server
    script.actions["p"] = [("status", 500, '{"error": "model crashed"}')] * 3
    with pytest.raises(tabret.LLMError, match=r"3 attempts.*HTTP 500.*model crashed") as info:
        client(url, max_retries=2)(["p"])
    assert isinstance(info.value, RuntimeError)
    assert script.count("p") == 3


def test_openai_does_not_retry_other_4xx(server: tuple[str, Script]) -> None:
    url, script = server
    script.actions["bad"] = [("status", 400, '{"error": "context too long"}'), ("reply", "no")]
    with pytest.raises(tabret.LLMError, match=r"HTTP 400.*context too long"):
        client(url)(["bad", "fine"])
    assert script.count("bad") == 1


def test_openai_slow_reply_times_out_and_is_retried(server: tuple[str, Script]) -> None:
    url, script = server
    script.actions["p"] = [("sleep", 5.0, "late"), ("reply", "on time")]
    assert client(url, timeout=0.3)(["p"]) == ["on time"]
    assert script.count("p") == 2


def test_openai_slow_every_time_is_an_llm_error(server: tuple[str, Script]) -> None:
    url, script = server
    script.actions["p"] = [("sleep", 5.0, "late")] * 2
    with pytest.raises(tabret.LLMError, match=r"2 attempts.*(?i:timed out|timeout)"):
        client(url, timeout=0.3, max_retries=1)(["p"])
    assert script.count("p") == 2


def test_openai_malformed_answer_is_an_llm_error(server: tuple[str, Script]) -> None:
    url, script = server
    script.actions["p"] = [("raw", b'{"choices": []}')]
    with pytest.raises(tabret.LLMError, match="not a chat-completions answer"):
        client(url)(["p"])
    assert script.count("p") == 1


def test_openai_content_parts_are_joined_and_an_empty_string_is_an_answer(
    server: tuple[str, Script],
) -> None:
    url, script = server
    parts = {"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"text": "b"}]}}]}
    script.actions["parts"] = [("raw", json.dumps(parts).encode())]
    script.actions["empty"] = [("reply", "")]
    assert client(url)(["parts", "empty"]) == ["ab", ""]


#: Answers that carry no completion (issue 47, item 2), by what the message says of them.
NO_COMPLETION = {
    "null": (b'{"choices": [{"message": {"content": null}}]}', "content is null"),
    "missing": (b'{"choices": [{"message": {"role": "assistant"}}]}', "KeyError: 'content'"),
    "no-text-part": (
        b'{"choices": [{"message": {"content": [{"type": "image_url"}]}}]}',
        "content has no text part",
    ),
}


@pytest.mark.parametrize(("answer", "says"), NO_COMPLETION.values(), ids=list(NO_COMPLETION))
def test_openai_an_answer_without_content_is_an_error_and_never_kept(
    server: tuple[str, Script], tmp_path: Path, answer: bytes, says: str
) -> None:
    """Issue 47, item 2: ``"content": null`` was answered, cached and recorded as ``''``, so
    CRUSH ranked on an empty schema and later runs never asked again. Now it is an LLMError
    naming the endpoint; neither the response cache nor the recording keeps anything, and the
    next run asks the server again."""
    url, script = server
    prompt = _prompt("crush_bird", question="What?")
    script.actions[prompt] = [("raw", answer)]
    cache = ResponseCache(tmp_path / "cache.sqlite")
    recording = RecordingLLM(CachedLLM(client(url), cache), tmp_path / "answers.jsonl")
    with pytest.raises(tabret.LLMError, match=re.escape(f"{url}/chat/completions: ")) as caught:
        CrushRewriter(recording).rewrite(["What?"])
    assert says in str(caught.value)
    assert (len(cache), len(recording)) == (0, 0)
    recording.save()
    assert read_recording(tmp_path / "answers.jsonl") == {}
    again = CrushRewriter(CachedLLM(client(url), cache)).rewrite(["What?"])
    assert again[0].queries != [""]
    assert script.count(prompt) == 2  # asked again, not answered from the cache
    assert cache.find("test-model", prompt) == f"answer: {prompt}"


def test_openai_connection_refused_is_retried_then_an_llm_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = client(f"http://127.0.0.1:{port}/v1", max_retries=1, timeout=2.0)
    with pytest.raises(tabret.LLMError, match=r"2 attempts"):
        llm(["p"])


def test_openai_failure_in_a_batch_cancels_the_rest(server: tuple[str, Script]) -> None:
    url, script = server
    script.actions["bad"] = [("status", 401, '{"error": "bad key"}')]
    prompts = ["bad"] + [f"p{i}" for i in range(20)]
    with pytest.raises(tabret.LLMError, match="HTTP 401"):
        client(url, concurrency=2)(prompts)
    assert script.count("bad") == 1
    assert len(script.prompts()) <= len(prompts)


def test_openai_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        OpenAICompatibleLLM("http://127.0.0.1:1/v1", "m", concurrency=0)
    with pytest.raises(ValueError, match="timeout"):
        OpenAICompatibleLLM("http://127.0.0.1:1/v1", "m", timeout=0)
    with pytest.raises(ValueError, match="base_url"):
        OpenAICompatibleLLM("", "m")
    with pytest.raises(ValueError, match="base_url"):
        OpenAICompatibleLLM("localhost:8000/v1", "m")


def test_openai_behind_a_rewriter_and_a_cache(server: tuple[str, Script], tmp_path: Path) -> None:
    """C++ calls the Python client once per batch (GIL taken in C++, threads in Python)."""
    url, script = server
    answers = {
        "How old are the singers?": "Sub-queries:\n1. singers: age",
        "Which concerts were in 2014?": "- concerts:year\n- concerts:name",
    }
    for question, answer in answers.items():
        script.actions[_prompt("jar_decompose", question=question)] = [("reply", answer)]
    questions = list(answers)
    rewriter = DecompositionRewriter(CachedLLM(client(url), tmp_path / "cache.jsonl"))
    first = rewriter.rewrite(questions + questions)
    assert [r.queries for r in first] == [["singers:age"], ["concerts:year", "concerts:name"]] * 2
    assert len(script.prompts()) == 2  # two distinct prompts, each sent once
    again = DecompositionRewriter(CachedLLM(client(url), tmp_path / "cache.jsonl"))
    assert again.rewrite(questions) == first[:2]
    assert len(script.prompts()) == 2  # answered from the file


def test_openai_error_reaches_the_caller_through_cpp(server: tuple[str, Script]) -> None:
    url, script = server
    script.actions[_prompt("crush_bird", question="What?")] = [
        ("status", 404, '{"error": "no such model"}')
    ]
    with pytest.raises(tabret.LLMError, match=r"HTTP 404.*no such model"):
        CrushRewriter(client(url)).rewrite(["What?"])


def _prompt(name: str, **values: str) -> str:
    return default_prompts().render(name, values)


# ---------------------------------------------------------------------------------------------
# Callable adapter, answer checks, deduplication and the cache


class CountingLLM:
    """A fake LLM that counts calls and prompts; answers "echo: <prompt>"."""

    def __init__(self, name: str = "counting") -> None:
        self.name = name
        self.calls = 0
        self.batches: list[list[str]] = []

    def __call__(self, prompts: list[str]) -> list[str]:
        self.calls += 1
        self.batches.append(list(prompts))
        return [f"echo: {p}" for p in prompts]


def test_identical_prompts_cost_one_call() -> None:
    llm = CountingLLM()
    assert complete(llm, ["same"] * 5) == ["echo: same"] * 5
    assert llm.batches == [["same"]]
    assert complete(llm, []) == []
    assert llm.calls == 1
    assert complete(llm, ["b", "a", "b"]) == ["echo: b", "echo: a", "echo: b"]
    assert llm.batches[-1] == ["b", "a"]


def test_rewriter_batch_of_identical_questions_costs_one_call() -> None:
    llm = CountingLLM()
    results = CrushRewriter(llm).rewrite(["How many singers?"] * 6)
    assert llm.calls == 1
    assert len(llm.batches[0]) == 1
    assert len(results) == 6
    assert len({tuple(r.queries) for r in results}) == 1


def test_cached_rerun_costs_zero_calls() -> None:
    llm = CountingLLM()
    cached = CachedLLM(llm, ResponseCache())
    assert cached.name == "counting"
    assert cached(["a", "b", "a"]) == ["echo: a", "echo: b", "echo: a"]
    assert llm.batches == [["a", "b"]]
    assert cached(["b", "a"]) == ["echo: b", "echo: a"]
    assert llm.calls == 1
    assert cached(["a", "c"]) == ["echo: a", "echo: c"]
    assert llm.batches[-1] == ["c"]
    assert len(cached.cache) == 3
    assert cached.cache.find("counting", "c") == "echo: c"
    assert cached.cache.find("other", "c") is None


def test_cache_file_makes_a_rerun_free(tmp_path: Path) -> None:
    path = tmp_path / "answers.sqlite"
    first = CountingLLM()
    assert CachedLLM(first, path)(["x", "y", "x"]) == ["echo: x", "echo: y", "echo: x"]
    assert first.calls == 1
    assert path.read_bytes().startswith(b"SQLite format 3\x00")
    second = CountingLLM()
    rerun = CachedLLM(second, ResponseCache(path))
    assert rerun(["y", "x"]) == ["echo: y", "echo: x"]
    assert second.calls == 0
    assert rerun.cache.path is not None
    assert Path(rerun.cache.path) == path
    # Another model name is another key.
    other = CountingLLM("other")
    assert CachedLLM(other, path)(["x"]) == ["echo: x"]
    assert other.calls == 1


def test_jsonl_cache_with_a_cut_last_line_is_imported(tmp_path: Path) -> None:
    old = tmp_path / "answers.jsonl"
    old.write_text('{"model": "m", "prompt": "a", "completion": "A"}\n{"model": "m", "pro')
    with pytest.raises(tabret.FileError, match=r"answers\.jsonl.*import_jsonl"):
        ResponseCache(old)
    cache = ResponseCache(tmp_path / "answers.sqlite")
    assert cache.import_jsonl(old) == 1
    assert cache.truncated_lines == 1
    assert cache.find("m", "a") == "A"
    cache.put("m", "b", "B")
    assert ResponseCache(tmp_path / "answers.sqlite").find("m", "b") == "B"
    assert old.read_text().endswith('"pro')  # only read


def test_jsonl_cache_with_a_corrupt_line_is_a_parse_error(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text('{"model": "m", "prompt": "a", "completion": "A"}\nnot json\n{}\n')
    with pytest.raises(tabret.ParseError, match=r"answers\.jsonl:2: not a JSON object") as info:
        ResponseCache().import_jsonl(path)
    assert info.value.line == 2


def test_callable_llm_checks_and_names() -> None:
    def shout(prompts: list[str]) -> list[str]:
        return [p.upper() for p in prompts]

    llm = CallableLLM(shout)
    assert llm.name == "test_callable_llm_checks_and_names.<locals>.shout"
    assert CallableLLM(shout, "loud").name == "loud"
    assert llm(["a"]) == ["A"]
    with pytest.raises(TypeError, match="callable"):
        CallableLLM("not a function")  # type: ignore[arg-type]
    with pytest.raises(tabret.LLMError, match="returned 1 completions for 2 prompts"):
        CallableLLM(lambda p: ["x"], "short")(["a", "b"])
    with pytest.raises(TypeError, match="completion 1 as a int"):
        CallableLLM(lambda p: ["x", 2], "mixed")(["a", "b"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="list of str"):
        check_completions("m", ["a"], "a")


class Boom(Exception):
    pass


def raising(prompts: list[str]) -> list[str]:
    raise Boom("the model is down")


@pytest.mark.parametrize(
    ("answer", "error", "message"),
    [
        (["only one"], tabret.LLMError, r"'bad' returned 1 completions for 2 prompts"),
        ([], tabret.LLMError, r"returned 0 completions for 2 prompts"),
        (["a", None], TypeError, r"completion 1 as a NoneType, not a str"),
        ([1, 2], TypeError, r"completion 0 as a int"),
        ("ab", TypeError, r"must return a list of str .*got str"),
        (None, TypeError, r"must return a list of str .*got NoneType"),
        ({"a": 1}, TypeError, r"got dict"),
    ],
)
def test_a_misbehaving_llm_gets_a_clear_error(answer: Any, error: type, message: str) -> None:
    def bad(prompts: list[str]) -> Any:
        return answer

    bad.name = "bad"  # type: ignore[attr-defined]
    with pytest.raises(error, match=message):
        complete(bad, ["p", "q"])
    with pytest.raises(error, match=message.replace("'bad'", "'m'")):
        CachedLLM(bad, model="m")(["p", "q"])
    with pytest.raises(error):
        DecompositionRewriter(bad).rewrite(["q1", "q2"])


def test_tuple_answers_are_accepted() -> None:
    assert complete(lambda p: tuple(x + "!" for x in p), ["a", "b"]) == ["a!", "b!"]  # type: ignore[arg-type, return-value]


def test_a_raising_llm_keeps_its_exception_type() -> None:
    with pytest.raises(Boom, match="the model is down"):
        complete(raising, ["p"])
    with pytest.raises(Boom):
        CachedLLM(raising, model="m")(["p"])
    with pytest.raises(Boom):
        CrushRewriter(raising).rewrite(["q"])
    answers: dict[str, str] = {}
    with pytest.raises(KeyError):
        complete(lambda p: [answers[x] for x in p], ["p"])


def test_not_an_llm_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="callable"):
        CrushRewriter(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="callable"):
        complete("llm", ["p"])  # type: ignore[arg-type]


def test_cache_is_thread_safe_under_concurrent_batches() -> None:
    lock = threading.Lock()
    seen: list[str] = []

    def slow_echo(prompts: list[str]) -> list[str]:
        with lock:
            seen.extend(prompts)
        return [p[::-1] for p in prompts]

    cached = CachedLLM(slow_echo, model="rev")
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            prompts = [f"q{(k + i) % 50}" for i in range(50)]
            assert cached(prompts) == [p[::-1] for p in prompts]
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert len(cached.cache) == 50


# ---------------------------------------------------------------------------------------------
# Replay of recorded outputs


def test_replay_llm_answers_by_question_line() -> None:
    source = ReplaySource("mine", "decomposition")
    assert source.add("How old is each singer?", ["singers:age", "singers:name"])
    assert not source.add("How  old is each singer?", ["other"])
    assert source.conflicts == 1
    assert len(source) == 1
    assert source.match("how old is each singer") == "loose"
    assert source.match("How old is each singer?") == "exact"
    assert source.match("Something else?") == "none"
    assert "How old is each singer?" in source
    assert source["How old is each singer?"] == ["singers:age", "singers:name"]
    llm = ReplayLLM(source)
    assert llm.name == "mine"
    prompt = "Example\nQuestion: Old?\nSub-queries: x:y\n\nQuestion: How old is each singer?\n"
    assert llm([prompt]) == ["singers:age\nsingers:name"]
    rewriter = DecompositionRewriter(llm, on_parse_failure="raise")
    assert rewriter.rewrite(["How old is each singer?"])[0].queries == [
        "singers:age",
        "singers:name",
    ]
    with pytest.raises(tabret.MissingRecordingError, match="Who sang") as info:
        rewriter.rewrite(["Who sang?"])
    assert info.value.question == "Who sang?"
    assert isinstance(info.value, tabret.LLMError)
    assert isinstance(info.value, LookupError)
    with pytest.raises(tabret.LLMError, match="no 'Question:' line"):
        llm(["no question here"])


def test_replay_source_is_snapshotted() -> None:
    source = ReplaySource("mine", "hallucinated_schema")
    source.add("Q?", ["t(a, b)"])
    llm = ReplayLLM(source)
    source.add("Later?", ["u(c)"])
    with pytest.raises(tabret.MissingRecordingError):
        llm(["Question: Later?"])


def test_replay_loaders_report_bad_files(tmp_path: Path) -> None:
    decomp = tmp_path / "decomp.json"
    dev = tmp_path / "dev.json"
    decomp.write_text('[["a:b"], ["c"]]')
    dev.write_text('[{"question": "One?"}]')
    with pytest.raises(tabret.SchemaError, match=r"2 decompositions but .* 1 questions"):
        tabret.llms.load_jar_decompositions(decomp, dev)
    with pytest.raises(tabret.FileError):
        tabret.llms.load_crush_recordings(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    with pytest.raises(tabret.ParseError):
        tabret.llms.load_crush_recordings(bad)


def _questions(path: Path, key: str) -> list[str]:
    return [str(q[key]) for q in json.loads(path.read_text(encoding="utf-8"))]


def test_replay_coverage_jar_spider_union(data_dir: Path) -> None:
    source = jar_decompositions("spider", data_dir)
    assert len(source) == 1034
    questions = _questions(data_dir / "murre/dataset/spider/dev.json", "utterance")
    assert len(questions) == 658
    missing = [q for q in questions if source.match(q) != "exact"]
    assert missing == []


def test_replay_coverage_jar_bird_union(data_dir: Path) -> None:
    source = jar_decompositions("bird", data_dir)
    assert source.conflicts == 0
    questions = _questions(data_dir / "bird/dev.json", "question")
    assert len(questions) == 1534
    assert [q for q in questions if source.match(q) != "exact"] == []
    # Through the prompt, the replay LLM and the parser, in one batch.
    llm = CountingLLM()
    replay = ReplayLLM(source)

    def counted(prompts: list[str]) -> list[str]:
        llm(prompts)
        return replay(prompts)

    results = DecompositionRewriter(counted, on_parse_failure="raise").rewrite(questions)
    assert llm.calls == 1
    assert all(r.queries for r in results)


def test_replay_coverage_crush_bird_union(data_dir: Path) -> None:
    source = crush_recordings(data_dir)
    assert source.kind == "hallucinated_schema"
    assert source.conflicts == 0
    questions = _questions(data_dir / "crush4sql/data/bird_dev.json", "question")
    assert len(questions) == 1534
    assert [q for q in questions if source.match(q) != "exact"] == []
    # The newest BIRD revision edited some questions: 12 match loosely, 168 have no recording.
    newest = _questions(data_dir / "bird/dev.json", "question")
    matches = [source.match(q) for q in newest]
    assert (matches.count("exact"), matches.count("loose"), matches.count("none")) == (
        1354,
        12,
        168,
    )
    # The crush_bird prompt answered by the replay LLM agrees with the recorded rewriter.
    requests = [RewriteRequest(q) for q in questions]
    via_prompt = CrushRewriter(ReplayLLM(source), on_parse_failure="raise").rewrite(requests)
    assert via_prompt == RecordedRewriter(source).rewrite(requests)
    assert all(r.queries and not r.stop for r in via_prompt)


def test_replay_classmethods_use_the_data_dir(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TABRET_DATA_DIR", str(data_dir))
    assert len(ReplayLLM.crush().source) == 1533
    assert ReplayLLM.jar("spider").source.kind == "decomposition"
    with pytest.raises(ValueError, match="spider"):
        jar_decompositions("wikisql", data_dir)  # type: ignore[arg-type]
