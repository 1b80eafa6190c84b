"""The OpenAI-compatible client's two protocols (chat, completions) and how ``api="auto"``
chooses between them by the server's answers; per-prompt sampling; recordings of a live LLM.
Against a scripted HTTP server on 127.0.0.1 (the real model: test_local_llm.py)."""

from __future__ import annotations

import gzip
import json
import re
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Literal

import pytest

import tabret
from local_http import serving
from tabret.llms import BUILTIN_SAMPLING, OpenAICompatibleLLM, PromptSampling, Sampling
from tabret.recordings import RecordedLLM, RecordingLLM, read_recording
from tabret.rewriting import default_prompts

PROMPTS = default_prompts()


@dataclass
class Model:
    """What the scripted server offers: ``props`` (llama.cpp's /props; None: 404) and whether
    it has the chat protocol."""

    props: dict[str, Any] | None = None
    chat: bool = True
    null: bool = False  # answers "text": null / "content": null
    seen: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def paths(self) -> list[str]:
        return [f"{method} {path}" for method, path, _ in self.seen]


def _handler(model: Model) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            with model.lock:
                model.seen.append(("GET", self.path, {}))
            if self.path == "/props" and model.props is not None:
                self._send(200, model.props)
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with model.lock:
                model.seen.append(("POST", self.path, body))
            usage = {"prompt_tokens": 10, "completion_tokens": 2}
            if self.path == "/v1/completions":
                text = None if model.null else f"completed: {body['prompt'][-20:]}"
                self._send(200, {"choices": [{"text": text}], "usage": usage})
            elif self.path == "/v1/chat/completions" and model.chat:
                content = (
                    None if model.null else f"chatted: {body['messages'][-1]['content'][-20:]}"
                )
                self._send(200, {"choices": [{"message": {"content": content}}], "usage": usage})
            else:
                self._send(404, {"error": "This is not a chat model"})

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[Any] = []

    def start(model: Model) -> str:
        context = serving(_handler(model))
        servers.append(context)
        return f"{context.__enter__()}/v1"

    yield start
    for context in servers:
        context.__exit__(None, None, None)


def _client(url: str, **kwargs: Any) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(url, "m", proxies={}, max_retries=0, timeout=5, **kwargs)


def test_completions_protocol_with_the_prompts_sampling(serve: Any) -> None:
    model = Model()
    llm = _client(serve(model), api="completions", sampling=PromptSampling())
    prompt = PROMPTS.render("jar_decompose", {"question": "Which pilots fly?"})
    assert llm([prompt]) == [f"completed: {prompt[-20:]}"]
    ((method, path, body),) = model.seen
    assert (method, path) == ("POST", "/v1/completions")
    assert body["prompt"] == prompt
    assert body["stop"] == list(BUILTIN_SAMPLING["jar_decompose"].stop)
    assert body["max_tokens"] == BUILTIN_SAMPLING["jar_decompose"].max_tokens
    assert body["temperature"] == 0.0
    assert (llm.usage.requests, llm.usage.prompt_tokens, llm.usage.completion_tokens) == (1, 10, 2)


@pytest.mark.parametrize(
    ("model", "chosen"),
    [
        (Model(props={"chat_template": ""}), "completions"),  # llama.cpp, a base model
        (Model(props={"chat_template": "{{ messages }}"}), "chat"),  # llama.cpp, a chat model
        (Model(chat=True), "chat"),  # no /props; chat answered
        (Model(chat=False), "completions"),  # no /props; chat refused with a 404
    ],
)
def test_auto_chooses_by_the_servers_answer(serve: Any, model: Model, chosen: str) -> None:
    llm = _client(serve(model), api="auto")
    answers = llm(["first prompt", "second prompt", "first prompt"])
    assert llm.api == chosen
    prefix = "completed" if chosen == "completions" else "chatted"
    assert answers == [f"{prefix}: {p}" for p in ("first prompt", "second prompt", "first prompt")]
    posts = [p for p in model.paths() if p.startswith("POST")]
    assert model.paths()[0] == "GET /props"
    endpoint = "/v1/completions" if chosen == "completions" else "/v1/chat/completions"
    refused = [] if model.chat or model.props is not None else ["POST /v1/chat/completions"]
    assert posts == [*refused, f"POST {endpoint}", f"POST {endpoint}"]
    llm(["third prompt"])  # settled: no more probes
    assert model.paths()[-1] == f"POST {endpoint}"
    assert sum(p == "GET /props" for p in model.paths()) == 1


@pytest.mark.parametrize(
    ("api", "field"),
    [("chat", "choices[0].message.content"), ("completions", "choices[0].text")],
)
def test_a_null_completion_is_an_error_in_both_protocols(
    serve: Any, api: Literal["chat", "completions"], field: str
) -> None:
    """Issue 47, item 2: a null answer is no completion (it used to be returned as '')."""
    url = serve(Model(null=True))
    endpoint = "chat/completions" if api == "chat" else "completions"
    with pytest.raises(tabret.LLMError, match=re.escape(f"{url}/{endpoint}: {field} is null")):
        _client(url, api=api)(["p"])


def test_chat_refusal_without_auto_is_an_error(serve: Any) -> None:
    llm = _client(serve(Model(chat=False)))
    with pytest.raises(tabret.LLMError, match="HTTP 404"):
        llm(["p"])


def test_prompt_sampling_recognises_each_builtin_template() -> None:
    sampling = PromptSampling()
    values = {"question": "q?", "table": "t(a)", "tables": "x.t(a)"}
    for name, expected in BUILTIN_SAMPLING.items():
        needed = {k: values[k] for k in PROMPTS.placeholders(name)}
        assert sampling(PROMPTS.render(name, needed)) == expected, name
    assert sampling("a prompt of the user's own") == Sampling()
    with pytest.raises(KeyError, match="no_such_template"):
        PromptSampling({"no_such_template": Sampling()})
    with pytest.raises(ValueError, match="max_tokens"):
        Sampling(max_tokens=0)
    with pytest.raises(TypeError, match="stop"):
        Sampling(stop="\n")  # type: ignore[arg-type]


def test_sampling_function_of_the_wrong_type_is_a_type_error(serve: Any) -> None:
    def wrong(prompt: str) -> Any:
        return {"max_tokens": 3}

    llm = _client(serve(Model()), sampling=wrong)
    with pytest.raises(TypeError, match="must return a Sampling"):
        llm(["p"])


# ---------------------------------------------------------------------------------------------
# Recordings


def _echo(prompts: list[str]) -> list[str]:
    return [p.upper() for p in prompts]


@pytest.mark.parametrize("name", ["rec.jsonl", "rec.jsonl.gz"])
def test_a_recording_replays_what_was_answered(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    recording = RecordingLLM(tabret.llms.CallableLLM(_echo, "echo"), path)
    assert recording(["a", "b"]) == ["A", "B"]
    assert recording.save() == 2
    second = RecordingLLM(tabret.llms.CallableLLM(_echo, "echo"), path)
    second(["c"])
    assert second.save() == 3  # the first run's answers are kept
    replay = RecordedLLM(path)
    assert replay.name == "echo"
    assert replay(["c", "a"]) == ["C", "A"]
    with pytest.raises(tabret.MissingRecordingError, match="'d'"):
        replay(["d"])
    if name.endswith(".gz"):
        with gzip.open(path, "rt") as f:
            assert f.readline().startswith('{"model": "echo"')


def test_a_recording_never_replaces_a_file_it_did_not_write(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text('{"model": "m", "prompt": "p", "completion": "c"}\nmy own notes\n')
    before = path.read_bytes()
    with pytest.raises(tabret.ParseError, match=r"notes.jsonl:2"):
        RecordingLLM(_echo, path)
    with pytest.raises(tabret.ParseError, match=r"notes.jsonl:2"):
        read_recording(path)
    assert path.read_bytes() == before
    binary = tmp_path / "data.jsonl.gz"
    binary.write_bytes(b"not gzip at all")
    with pytest.raises(tabret.FileError, match=r"data\.jsonl\.gz"):
        RecordedLLM(binary)
    assert binary.read_bytes() == b"not gzip at all"


def _gguf(pairs: list[tuple[str, int, bytes]]) -> bytes:
    """A GGUF v3 header with ``pairs`` of (key, value type, encoded value) and no tensors."""
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs))
    for key, kind, value in pairs:
        out += struct.pack("<Q", len(key)) + key.encode() + struct.pack("<I", kind) + value
    return out


def _gguf_str(text: str) -> bytes:
    return struct.pack("<Q", len(text.encode())) + text.encode()


def test_chat_template_is_read_from_the_gguf_header(tmp_path: Path) -> None:
    """What decides --llm local's protocol: the model file's tokenizer.chat_template, found
    past values of every kind (strings, numbers, arrays of strings and of numbers)."""
    from tabret.local_llm import LocalLLMError, chat_template

    before = [
        ("general.name", 8, _gguf_str("tiny")),
        ("general.alignment", 4, struct.pack("<I", 32)),
        ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 2) + _gguf_str("a") + _gguf_str("bb")),
        ("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, 2) + struct.pack("<ff", 0.5, 1.0)),
    ]
    chat = tmp_path / "chat.gguf"
    chat.write_bytes(_gguf([*before, ("tokenizer.chat_template", 8, _gguf_str("{{ x }}"))]))
    assert chat_template(chat) == "{{ x }}"
    base = tmp_path / "base.gguf"
    base.write_bytes(_gguf(before))
    assert chat_template(base) is None
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(chat.read_bytes()[:60])
    with pytest.raises(LocalLLMError, match=r"cut\.gguf: a damaged GGUF header"):
        chat_template(cut)
    other = tmp_path / "other.bin"
    other.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(LocalLLMError, match=r"other\.bin: not a GGUF model file"):
        chat_template(other)
