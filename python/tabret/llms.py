"""LLMs: bring your own (a callable, an OpenAI-compatible server), cache them, or replay the
answers the papers recorded.

An LLM is anything with a ``name`` and ``__call__(prompts: list[str]) -> list[str]``: one batch
of prompts in, one completion per prompt out, in order. tabret never calls it with an empty
batch, sends identical prompts of a batch once, and checks every answer (a list of ``str`` of the
right length; anything else is a ``TypeError`` or :class:`tabret.LLMError`). An exception the LLM
raises reaches the caller with its own type.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from tabret import _core
from tabret._core import (
    LLMError,
    MissingRecordingError,
    NativeLLM,
    ReplaySource,
    ResponseCache,
    load_crush_recordings,
    load_jar_decompositions,
)
from tabret._http import JsonEndpoint, excerpt
from tabret.datasets import data_dir as _default_data_dir

__all__ = [
    "LLM",
    "CachedLLM",
    "CallableLLM",
    "LLMError",
    "MissingRecordingError",
    "NativeLLM",
    "OpenAICompatibleLLM",
    "ReplayLLM",
    "ReplaySource",
    "ResponseCache",
    "check_completions",
    "complete",
    "crush_recordings",
    "jar_decompositions",
    "load_crush_recordings",
    "load_jar_decompositions",
]

PathLike = str | os.PathLike[str]

#: The recorded sources under the benchmark data directory (see ``tabret.datasets.data_dir``).
CRUSH_BIRD_FILE = "crush4sql/data/bird_dev.json"
JAR_FILES = {
    "spider": ("jar/data/spider/decomp.json", "jar/data/spider/dev.json"),
    "bird": ("jar/data/bird/decomp.json", "jar/data/bird/dev.json"),
}


@runtime_checkable
class LLM(Protocol):
    """What tabret calls: a batch of prompts in, one completion per prompt out, in order."""

    @property
    def name(self) -> str: ...

    def __call__(self, prompts: list[str]) -> list[str]: ...


def check_completions(name: str, prompts: Sequence[str], answers: object) -> list[str]:
    """Checks an LLM's answer to ``prompts``: a list (or other sequence, not a ``str``) of
    exactly one ``str`` per prompt. Raises ``TypeError`` for the wrong kind of answer and
    :class:`LLMError` for the wrong count; returns the answer as a list."""
    if isinstance(answers, (str, bytes)) or not isinstance(answers, Sequence):
        raise TypeError(
            f"LLM '{name}' must return a list of str (one per prompt), got {type(answers).__name__}"
        )
    if len(answers) != len(prompts):
        raise LLMError(
            f"LLM '{name}' returned {len(answers)} completions for {len(prompts)} prompts"
        )
    out: list[str] = []
    for i, answer in enumerate(answers):
        if not isinstance(answer, str):
            raise TypeError(
                f"LLM '{name}' returned completion {i} as a {type(answer).__name__}, not a str"
            )
        out.append(answer)
    return out


def complete(
    llm: LLM | NativeLLM | Callable[[list[str]], list[str]], prompts: list[str]
) -> list[str]:
    """Asks ``llm`` for ``prompts`` in one batch, each distinct prompt once (none for an empty
    list), and checks the answer. A C++ LLM (replay, cache) runs without the GIL."""
    return _core.complete(llm, prompts)


class CallableLLM:
    """A plain function ``list[str] -> list[str]`` with a name (the cache key's model part)."""

    def __init__(self, fn: Callable[[list[str]], list[str]], name: str | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"an LLM must be callable, got {type(fn).__name__}")
        self._fn = fn
        self._name = name or _name_of(fn)

    @property
    def name(self) -> str:
        return self._name

    def __call__(self, prompts: list[str]) -> list[str]:
        if not prompts:
            return []
        return check_completions(self._name, prompts, self._fn(list(prompts)))

    def __repr__(self) -> str:
        return f"CallableLLM({self._name!r})"


class OpenAICompatibleLLM:
    """A chat-completions endpoint: OpenAI, or any server that speaks its protocol (vLLM,
    Ollama, llama.cpp's server, LM Studio, TGI, LiteLLM, ...). Standard library only.

    Each prompt is one ``POST {base_url}/chat/completions`` with
    ``{"model", "messages": [{"role": "user", "content": prompt}], "temperature", "max_tokens"}``
    (a ``system`` message first when ``system_prompt`` is given; ``extra_body`` is merged in);
    the completion is ``choices[0].message.content``. ``proxies`` maps schemes to proxy URLs
    (``{}``: always connect directly; ``None``: the environment's ``http_proxy``/``no_proxy``).
    A batch runs on up to ``concurrency`` threads; identical prompts are sent once; answers keep
    the order of the prompts.

    A request that fails with a connection error, a timeout (``timeout`` seconds per socket
    operation), HTTP 429 or a 5xx status is retried up to ``max_retries`` times after
    ``backoff * 2**attempt`` seconds (or the server's ``Retry-After``, at most 60 s); any other
    4xx status fails at once. A failure raises :class:`tabret.LLMError` naming the URL, the status
    and the start of the body; the rest of the batch is cancelled.

    The API key is only ever sent to the origin of ``base_url``: a redirect elsewhere is an
    ``LLMError``, never followed (a 307/308 within the origin is re-sent as the same POST; a
    301/302/303 is refused). Credentials in ``base_url`` (``http://user:KEY@host/v1``, sent as
    HTTP Basic, or ``?api-key=KEY``) are shown as ``***`` in errors, ``repr``, ``url`` and
    ``base_url``; ``chat/completions`` goes before the query of ``base_url``.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = 512,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        concurrency: int = 8,
        system_prompt: str | None = None,
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        proxies: Mapping[str, str] | None = None,
        name: str | None = None,
    ) -> None:
        if not model:
            raise ValueError("model must not be empty")
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, not {concurrency}")
        self._endpoint = JsonEndpoint(
            base_url,
            "chat/completions",
            error=LLMError,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            headers=headers,
            proxies=proxies,
        )
        self.base_url = self._endpoint.base_url
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.concurrency = concurrency
        self.system_prompt = system_prompt
        self.extra_body = dict(extra_body or {})
        self._name = name or model

    @property
    def name(self) -> str:
        return self._name

    @property
    def url(self) -> str:
        return self._endpoint.url

    def __repr__(self) -> str:
        return f"OpenAICompatibleLLM({self.base_url!r}, {self.model!r})"

    def __call__(self, prompts: list[str]) -> list[str]:
        unique = list(dict.fromkeys(prompts))
        if not unique:
            return []
        if len(unique) == 1:
            return [self.complete_one(unique[0])] * len(prompts)
        cancel = threading.Event()
        pool = ThreadPoolExecutor(
            max_workers=min(self.concurrency, len(unique)), thread_name_prefix="tabret-llm"
        )
        try:
            futures = [pool.submit(self._complete, p, cancel) for p in unique]
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            # The earliest failed prompt is reported, for a stable message.
            for future in futures:
                if future in done and future.exception() is not None:
                    cancel.set()
                    raise _exception(future)
            answers = dict(zip(unique, (f.result() for f in futures), strict=True))
        finally:
            cancel.set()  # wakes workers sleeping before a retry; they give up
            pool.shutdown(wait=True, cancel_futures=True)
        return [answers[p] for p in prompts]

    def complete_one(self, prompt: str) -> str:
        """One prompt, with the retries; raises :class:`LLMError` after the last one."""
        return self._complete(prompt, None)

    def _complete(self, prompt: str, cancel: threading.Event | None) -> str:
        payload = self._endpoint.post(self._body(prompt), f"model '{self.model}'", cancel)
        return self._content(payload)

    def _body(self, prompt: str) -> dict[str, Any]:
        messages: list[dict[str, str]] = []
        if self.system_prompt:
            messages.append({"role": "system", "content": self.system_prompt})
        messages.append({"role": "user", "content": prompt})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        body.update(self.extra_body)
        return body

    def _content(self, payload: bytes) -> str:
        problem = ""
        try:
            data = json.loads(payload.decode("utf-8"))
            content = data["choices"][0]["message"]["content"]
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, IndexError, TypeError) as err:
            problem = f"{type(err).__name__}: {err}"
        if problem:  # raised here, not chained to an exception that holds the whole payload
            raise LLMError(
                self._endpoint.scrub(
                    f"{self.url}: not a chat-completions answer ({problem}): {excerpt(payload)}"
                )
            )
        if content is None:
            return ""
        if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
            return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        if not isinstance(content, str):
            raise LLMError(
                self._endpoint.scrub(
                    f"{self.url}: message content is a {type(content).__name__}, not a str: "
                    f"{excerpt(payload)}"
                )
            )
        return content


def _exception(future: Future[str]) -> BaseException:
    error = future.exception()
    assert error is not None
    return error


class _NativeLLMWrapper:
    """An LLM whose work is a C++ callback: rewriters call ``native`` without the GIL."""

    _native: NativeLLM

    @property
    def native(self) -> NativeLLM:
        """The C++ callback (what rewriters call, without the GIL)."""
        return self._native

    def __call__(self, prompts: list[str]) -> list[str]:
        return self._native(prompts)


class CachedLLM(_NativeLLMWrapper):
    """``llm`` behind a :class:`ResponseCache` under the name ``model`` (default ``llm.name``):
    cached prompts cost nothing, the misses of a batch go to ``llm`` in one deduplicated batch
    and are stored (committed to the cache's SQLite file, if any, in one transaction). Runs in
    C++; a Python ``llm`` is called with the GIL once per batch."""

    def __init__(
        self,
        llm: LLM | NativeLLM | Callable[[list[str]], list[str]],
        cache: ResponseCache | PathLike | None = None,
        model: str | None = None,
    ) -> None:
        if cache is None:
            cache = ResponseCache()
        elif not isinstance(cache, ResponseCache):
            cache = ResponseCache(cache)
        self._model = model or _name_of(llm)
        self._cache = cache
        self._native = _core.cached_llm(llm, self._model, cache)

    @property
    def name(self) -> str:
        return self._model

    @property
    def cache(self) -> ResponseCache:
        return self._cache

    def __repr__(self) -> str:
        return f"CachedLLM({self._model!r}, {self._cache!r})"


class ReplayLLM(_NativeLLMWrapper):
    """An LLM that answers from recorded outputs: the question is the last ``Question: `` line
    of each prompt (every built-in prompt that takes a question ends with one), matched exactly
    after whitespace folding, else loosely (case, punctuation, mis-decoded UTF-8); the answer is
    the recording, one item per line, ready for the same parser as a live answer. A question
    without a recording raises :class:`tabret.MissingRecordingError` (an ``LLMError`` and a
    ``LookupError``) quoting it."""

    def __init__(self, source: ReplaySource, name: str | None = None) -> None:
        self._source = source
        self._native = _core.replay_llm(source, name or "")

    @classmethod
    def crush(cls, data_dir: PathLike | None = None) -> ReplayLLM:
        """CRUSH's hallucinated schemas for BirdUnion (all 1,534 questions)."""
        return cls(crush_recordings(data_dir))

    @classmethod
    def jar(cls, dataset: Literal["spider", "bird"], data_dir: PathLike | None = None) -> ReplayLLM:
        """JAR's decompositions for Spider dev (incl. all 658 SpiderUnion questions) or BIRD dev
        (all 1,534 BirdUnion questions)."""
        return cls(jar_decompositions(dataset, data_dir))

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def source(self) -> ReplaySource:
        return self._source

    def __repr__(self) -> str:
        return f"ReplayLLM({self._source!r})"


def _data_dir(data_dir: PathLike | None) -> Path:
    return Path(data_dir) if data_dir is not None else _default_data_dir()


def crush_recordings(data_dir: PathLike | None = None) -> ReplaySource:
    """CRUSH's recorded hallucinated schemas (``crush4sql/data/bird_dev.json`` under
    ``data_dir``, default :func:`tabret.datasets.data_dir`)."""
    return load_crush_recordings(_data_dir(data_dir) / CRUSH_BIRD_FILE)


def jar_decompositions(
    dataset: Literal["spider", "bird"], data_dir: PathLike | None = None
) -> ReplaySource:
    """JAR's recorded decompositions for ``"spider"`` or ``"bird"`` dev
    (``jar/data/<dataset>/decomp.json``, aligned with the ``dev.json`` beside it)."""
    if dataset not in JAR_FILES:
        raise ValueError(f"dataset must be 'spider' or 'bird', not {dataset!r}")
    root = _data_dir(data_dir)
    decomp, questions = JAR_FILES[dataset]
    return load_jar_decompositions(root / decomp, root / questions)


def _name_of(llm: object) -> str:
    name = getattr(llm, "name", None)
    if isinstance(name, str) and name:
        return name
    return str(getattr(llm, "__qualname__", type(llm).__name__))
