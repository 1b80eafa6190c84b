"""LLMs: bring your own (a callable, an OpenAI-compatible server), cache them, or replay the
answers the papers recorded.

An LLM is anything with a ``name`` and ``__call__(prompts: list[str]) -> list[str]``: one batch
of prompts in, one completion per prompt out, in order. tabret never calls it with an empty
batch, sends identical prompts of a batch once, and checks every answer (a list of ``str`` of the
right length, each valid Unicode; anything else is a ``TypeError`` or :class:`tabret.LLMError`)
before anything caches, records or parses it. An exception the LLM raises reaches the caller
with its own type.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

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
from tabret._http import MIB, JsonEndpoint, Unsupported, decode_json, excerpt
from tabret.datasets import data_dir as _default_data_dir

if TYPE_CHECKING:
    from tabret._core import PromptSet

__all__ = [
    "LLM",
    "CachedLLM",
    "CallableLLM",
    "LLMError",
    "MissingRecordingError",
    "NativeLLM",
    "OpenAICompatibleLLM",
    "PromptSampling",
    "ReplayLLM",
    "ReplaySource",
    "ResponseCache",
    "Sampling",
    "Usage",
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
    :class:`LLMError` for the wrong count or a completion that is not valid Unicode (a lone
    surrogate such as ``"\\ud83d"``, which no UTF-8 text can hold; the ``UnicodeEncodeError`` is
    its ``__cause__``); returns the answer as a list."""
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
        if (bad := _encoding_error(answer)) is not None:
            raise LLMError(
                f"LLM '{name}' returned completion {i} with a lone surrogate at character "
                f"{bad.start}: not valid Unicode"
            ) from bad
        out.append(answer)
    return out


def _encoding_error(text: str) -> UnicodeEncodeError | None:
    """Why ``text`` cannot be encoded as UTF-8 (it holds a lone surrogate), or ``None``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        return err
    return None


def _checked_llm(
    llm: LLM | NativeLLM | Callable[[list[str]], list[str]], name: str | None = None
) -> LLM | NativeLLM | Callable[[list[str]], list[str]]:
    """``llm`` as tabret's C++ code takes it: a C++ LLM (or a wrapper of one) as it is, a Python
    one behind :func:`check_completions` under ``name`` (default: its own), so that C++ receives
    only checked answers. Anything that is not callable is returned as it is (the C++ side
    refuses it with a ``TypeError``)."""
    native = isinstance(llm, NativeLLM) or isinstance(getattr(llm, "native", None), NativeLLM)
    if native or isinstance(llm, CallableLLM) or not callable(llm):
        return llm
    return CallableLLM(llm, name or _name_of(llm))


def complete(
    llm: LLM | NativeLLM | Callable[[list[str]], list[str]], prompts: list[str]
) -> list[str]:
    """Asks ``llm`` for ``prompts`` in one batch, each distinct prompt once (none for an empty
    list), and checks the answer. A C++ LLM (replay, cache) runs without the GIL."""
    return _core.complete(_checked_llm(llm), prompts)


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


Api = Literal["chat", "completions", "auto"]


@dataclass(frozen=True)
class Sampling:
    """How one prompt is answered: ``temperature`` (0: the most likely tokens), at most
    ``max_tokens`` new tokens (``None``: the server's limit), and ``stop`` sequences (the answer
    ends before the first one the model writes)."""

    temperature: float = 0.0
    max_tokens: int | None = 512
    stop: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1 or None, not {self.max_tokens}")
        if isinstance(self.stop, str) or any(not isinstance(x, str) or not x for x in self.stop):
            raise TypeError("stop must be a tuple of non-empty str")


#: The sampling settings of tabret's built-in prompts. Each is a few-shot prompt whose examples
#: are separated by a blank line, so an answer ends at a blank line or at the next example's
#: "Question:"; one-line answers (CRUSH's schema, a generated question) end at the newline.
BUILTIN_SAMPLING: Mapping[str, Sampling] = {
    "crush_bird": Sampling(max_tokens=160, stop=("\n",)),
    "crush_spider": Sampling(max_tokens=160, stop=("\n",)),
    "jar_decompose": Sampling(max_tokens=96, stop=("\n\n", "\nQuestion:")),
    "murre_tabulated": Sampling(max_tokens=192, stop=("\n\n", "\nQuestion:")),
    "murre_question": Sampling(max_tokens=96, stop=("\n",)),
    "reverse_question": Sampling(max_tokens=64, stop=("\n",)),
}


class PromptSampling:
    """Per-prompt sampling: a prompt rendered from one of ``prompts``' templates gets that
    template's settings in ``settings`` (the template is recognised by its fixed opening, the
    text before its first placeholder, the longest match winning); any other prompt gets
    ``default``. ``prompts`` defaults to tabret's shipped templates and ``settings`` to
    :data:`BUILTIN_SAMPLING`; a name in ``settings`` that ``prompts`` lacks is a ``KeyError``."""

    def __init__(
        self,
        settings: Mapping[str, Sampling] | None = None,
        prompts: PromptSet | None = None,
        default: Sampling | None = None,
    ) -> None:
        from tabret.rewriting import default_prompts

        prompts = prompts if prompts is not None else default_prompts()
        settings = BUILTIN_SAMPLING if settings is None else settings
        openings: list[tuple[str, Sampling]] = []
        for name, sampling in settings.items():
            if name not in prompts:
                raise KeyError(f"no prompt template named {name!r} (have {prompts.names()})")
            openings.append((_opening(prompts, name), sampling))
        self._openings = sorted(openings, key=lambda o: len(o[0]), reverse=True)
        self.default = default if default is not None else Sampling()

    def __call__(self, prompt: str) -> Sampling:
        for opening, sampling in self._openings:
            if opening and prompt.startswith(opening):
                return sampling
        return self.default


def _opening(prompts: PromptSet, name: str) -> str:
    """A template's text before its first placeholder."""
    text = prompts.text(name)
    cut = min((text.find("{" + p + "}") for p in prompts.placeholders(name)), default=-1)
    return text if cut < 0 else text[:cut]


@dataclass
class Usage:
    """What an LLM client has spent: answered requests, the tokens the server counted, and the
    seconds requests took (summed over requests; concurrent ones overlap)."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


class OpenAICompatibleLLM:
    """An OpenAI-compatible server: OpenAI, or any server that speaks its protocol (vLLM,
    Ollama, llama.cpp's servers, LM Studio, TGI, LiteLLM, ...). Standard library only.

    ``api`` chooses the protocol. ``"chat"`` (default) posts each prompt to
    ``{base_url}/chat/completions`` as ``{"model", "messages": [{"role": "user", "content":
    prompt}], ...}`` (a ``system`` message first when ``system_prompt`` is given) and reads
    ``choices[0].message.content``: the server wraps the prompt in the model's chat template.
    ``"completions"`` posts ``{"model", "prompt", ...}`` to ``{base_url}/completions`` and reads
    ``choices[0].text``: the model continues the prompt as written, which is what a base model
    (one without a chat template) needs for tabret's few-shot prompts. ``"auto"`` asks the
    server before the first prompt: llama.cpp's ``/props`` names the model's chat template
    (none: completions); otherwise chat is tried, and a server that refuses it (HTTP 404, 405,
    501, or a 400 about a missing chat template) is asked for completions instead. The choice
    is kept in :attr:`api`.

    ``sampling`` gives each prompt its settings (``temperature``, ``max_tokens``, ``stop``):
    a :class:`Sampling` for all, or a function of the prompt such as :class:`PromptSampling`
    (the built-in prompts' stop sequences and lengths); without it, ``temperature`` and
    ``max_tokens`` apply to every prompt. ``extra_body`` is merged into every request.
    ``proxies`` maps schemes to proxy URLs (``{}``: always connect directly; ``None``: the
    environment's ``http_proxy``/``no_proxy``). A batch runs on up to ``concurrency`` threads;
    identical prompts are sent once; answers keep the order of the prompts. :attr:`usage`
    counts requests, tokens and seconds; ``progress=True`` shows a bar over a batch's requests.

    A request that fails with a connection error, a timeout, HTTP 429 or a 5xx status is retried
    up to ``max_retries`` times after ``backoff * 2**attempt`` seconds (or the server's
    ``Retry-After``, at most 60 s); any other 4xx status fails at once. ``timeout`` bounds each
    attempt as a whole (connecting, sending, reading the whole answer, however slowly it comes);
    ``total_timeout``, if given, bounds the request with all its attempts and waits. An answer
    larger than ``max_response_bytes`` (default 16 MiB) is refused as soon as that is known, not
    retried. A failure raises :class:`tabret.LLMError` naming the URL, the status and the start
    of the body; the rest of the batch is cancelled.

    An answer is checked before it is returned (and so before a :class:`CachedLLM` or a
    recording keeps it): one that is not JSON (not UTF-8, invalid, nested too deeply), has no
    ``choices[0]``, or whose content is missing, ``null``, not text, or not valid Unicode (a
    lone surrogate such as ``"\\ud83d"``) raises :class:`tabret.LLMError` naming the URL. An
    empty string is an answer (the model wrote nothing); ``null`` is not.

    The API key is only ever sent to the origin of ``base_url``: a redirect elsewhere is an
    ``LLMError``, never followed (a 307/308 within the origin is re-sent as the same POST; a
    301/302/303 is refused). Credentials in ``base_url`` (``http://user:KEY@host/v1``, sent as
    HTTP Basic, or ``?api-key=KEY``) are shown as ``***`` in errors, ``repr``, ``url`` and
    ``base_url``; the endpoint's path goes before the query of ``base_url``.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        api: Api = "chat",
        temperature: float = 0.0,
        max_tokens: int | None = 512,
        sampling: Sampling | Callable[[str], Sampling] | None = None,
        timeout: float = 60.0,
        total_timeout: float | None = None,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_response_bytes: int = 16 * MIB,
        concurrency: int = 8,
        system_prompt: str | None = None,
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        proxies: Mapping[str, str] | None = None,
        name: str | None = None,
        progress: bool = False,
    ) -> None:
        if not model:
            raise ValueError("model must not be empty")
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, not {concurrency}")
        if api not in ("chat", "completions", "auto"):
            raise ValueError(f"api must be 'chat', 'completions' or 'auto', not {api!r}")
        if sampling is not None and not isinstance(sampling, Sampling) and not callable(sampling):
            raise TypeError(
                f"sampling must be a Sampling or a function of the prompt, not "
                f"{type(sampling).__name__}"
            )
        endpoint = {
            "error": LLMError,
            "api_key": api_key,
            "timeout": timeout,
            "total_timeout": total_timeout,
            "max_retries": max_retries,
            "backoff": backoff,
            "max_response_bytes": max_response_bytes,
            "headers": headers,
            "proxies": proxies,
        }
        self._endpoints = {
            "chat": JsonEndpoint(base_url, "chat/completions", **endpoint),  # type: ignore[arg-type]
            "completions": JsonEndpoint(base_url, "completions", **endpoint),  # type: ignore[arg-type]
        }
        self.base_url = self._endpoints["chat"].base_url
        self.model = model
        self.api: Api = api
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.sampling = sampling
        self.concurrency = concurrency
        self.system_prompt = system_prompt
        self.extra_body = dict(extra_body or {})
        self.usage = Usage()
        self.progress = progress
        self._usage_lock = threading.Lock()
        self._api_lock = threading.Lock()
        self._name = name or model

    @property
    def name(self) -> str:
        return self._name

    @property
    def url(self) -> str:
        """The URL prompts are posted to (the chat one until ``"auto"`` has chosen)."""
        return self._endpoints["completions" if self.api == "completions" else "chat"].url

    def __repr__(self) -> str:
        return f"OpenAICompatibleLLM({self.base_url!r}, {self.model!r}, api={self.api!r})"

    def __call__(self, prompts: list[str]) -> list[str]:
        unique = list(dict.fromkeys(prompts))
        if not unique:
            return []
        if self.api == "auto":
            chosen = [self._choose_api(unique[0]), *self(unique[1:])]
            by_prompt = dict(zip(unique, chosen, strict=True))
            return [by_prompt[p] for p in prompts]
        if len(unique) == 1:
            return [self.complete_one(unique[0])] * len(prompts)
        cancel = threading.Event()
        pool = ThreadPoolExecutor(
            max_workers=min(self.concurrency, len(unique)), thread_name_prefix="tabret-llm"
        )
        bar = self._bar(len(unique))
        try:
            futures = [pool.submit(self._complete, p, cancel) for p in unique]
            if bar is not None:
                for future in futures:
                    future.add_done_callback(lambda _: bar.update(1))
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
            if bar is not None:
                bar.close()
        return [answers[p] for p in prompts]

    def _bar(self, total: int) -> Any:
        """A progress bar over a batch's requests (``progress=True``), else ``None``."""
        if not self.progress:
            return None
        from tqdm import tqdm

        return tqdm(total=total, desc=f"LLM {self._name}", unit="req", file=sys.stderr, leave=False)

    def complete_one(self, prompt: str) -> str:
        """One prompt, with the retries; raises :class:`LLMError` after the last one."""
        if self.api == "auto":
            return self._choose_api(prompt)
        return self._complete(prompt, None)

    def sampling_for(self, prompt: str) -> Sampling:
        """The settings ``prompt`` is answered with."""
        if self.sampling is None:
            return Sampling(self.temperature, self.max_tokens)
        if isinstance(self.sampling, Sampling):
            return self.sampling
        chosen = self.sampling(prompt)
        if not isinstance(chosen, Sampling):
            raise TypeError(
                f"sampling must return a Sampling for each prompt, not {type(chosen).__name__}"
            )
        return chosen

    def _choose_api(self, prompt: str) -> str:
        """Settles ``"auto"`` by the server's answers (see the class comment) and answers
        ``prompt`` with the chosen protocol."""
        with self._api_lock:
            if self.api != "auto":
                return self._complete(prompt, None)
            props = self._endpoints["chat"].get_json("/props")
            if isinstance(props, dict) and "chat_template" in props:
                self.api = "chat" if props.get("chat_template") else "completions"
                return self._complete(prompt, None)
            try:
                answer = self._complete(prompt, None, api="chat", refusals=True)
                self.api = "chat"
            except Unsupported:
                answer = self._complete(prompt, None, api="completions")
                self.api = "completions"
            return answer

    def _complete(
        self,
        prompt: str,
        cancel: threading.Event | None,
        api: Literal["chat", "completions"] | None = None,
        refusals: bool = False,
    ) -> str:
        api = api or ("completions" if self.api == "completions" else "chat")
        started = time.perf_counter()
        payload = self._endpoints[api].post(
            self._body(prompt, api), f"model '{self.model}'", cancel, unsupported=refusals
        )
        answer, usage = self._content(payload, api)
        with self._usage_lock:
            self.usage.requests += 1
            self.usage.seconds += time.perf_counter() - started
            self.usage.prompt_tokens += usage.get("prompt_tokens", 0)
            self.usage.completion_tokens += usage.get("completion_tokens", 0)
        return answer

    def _body(self, prompt: str, api: str) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model}
        if api == "completions":
            body["prompt"] = prompt
        else:
            messages: list[dict[str, str]] = []
            if self.system_prompt:
                messages.append({"role": "system", "content": self.system_prompt})
            messages.append({"role": "user", "content": prompt})
            body["messages"] = messages
        sampling = self.sampling_for(prompt)
        body["temperature"] = sampling.temperature
        if sampling.max_tokens is not None:
            body["max_tokens"] = sampling.max_tokens
        if sampling.stop:
            body["stop"] = list(sampling.stop)
        body.update(self.extra_body)
        return body

    def _content(self, payload: bytes, api: str) -> tuple[str, dict[str, int]]:
        """The completion in ``payload`` and the server's token counts; :class:`LLMError`
        naming the URL for anything that is not a completion (see the class comment)."""
        problem = ""
        field = "choices[0].text" if api == "completions" else "choices[0].message.content"
        try:
            data = decode_json(payload)
            choice = data["choices"][0]
            content = choice["text"] if api == "completions" else choice["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as err:
            problem = f"{type(err).__name__}: {err}"
        if problem:  # raised here, not chained to an exception that holds the whole payload
            kind = "completions" if api == "completions" else "chat-completions"
            raise self._answer_error(api, f"not a {kind} answer ({problem})", payload)
        if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
            texts = [
                p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
            ]
            if not texts:
                raise self._answer_error(api, f"{field} has no text part: no completion", payload)
            content = "".join(texts)
        if content is None:
            raise self._answer_error(api, f"{field} is null: no completion", payload)
        if not isinstance(content, str):
            raise self._answer_error(
                api, f"{field} is a {type(content).__name__}, not a str", payload
            )
        if (bad := _encoding_error(content)) is not None:
            raise self._answer_error(
                api,
                f"{field} is not valid Unicode (a lone surrogate at character {bad.start})",
                payload,
            )
        return content, _token_counts(data.get("usage"))

    def _answer_error(self, api: str, problem: str, payload: bytes) -> LLMError:
        endpoint = self._endpoints[api]
        return LLMError(endpoint.scrub(f"{endpoint.url}: {problem}: {excerpt(payload)}"))


def _token_counts(usage: object) -> dict[str, int]:
    if not isinstance(usage, dict):
        return {}
    return {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}


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
    and are stored (committed to the cache's SQLite file, if any, in one transaction) once the
    whole answer has passed :func:`check_completions`: a failed or malformed answer is never
    stored, so the next call asks again. A cache that cannot be written (a read-only file,
    directory or filesystem: ``cache.read_only``) is only read: misses are asked and not
    stored, with a warning when the CachedLLM is made. Runs in C++; a Python ``llm`` is called
    with the GIL once per batch."""

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
        if cache.read_only:
            warnings.warn(
                f"{cache.path}: the response cache is read-only: cached answers are used, "
                "new answers are not stored",
                stacklevel=2,
            )
        self._model = model or _name_of(llm)
        self._cache = cache
        self._native = _core.cached_llm(_checked_llm(llm, self._model), self._model, cache)

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
