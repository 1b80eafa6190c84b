"""A sentence-transformers model run by ONNX Runtime (issue 51 item 3).

The loaded model — transformer, pooling, normalisation, whatever modules follow its tokeniser —
is exported whole with torch's exporter (into a temporary directory, removed at once; about two
seconds for MiniLM) and run by ONNX Runtime on the CPU, with as many threads as this process
may use. Inputs are tokenised by the model's own tokeniser, so the ONNX model sees exactly what the
PyTorch model would; texts go in batches sorted by length, so little of a batch is padding.
``bench/embedders.py`` measures it against the PyTorch path (docs/results.md).
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tabret._core import EmbeddingError
from tabret.local_llm import default_threads

FloatArray = npt.NDArray[np.float32]

#: Tokeniser outputs the exported graph takes, in this order, where the tokeniser gives them.
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
#: What the model is traced on, and the exported graph checked against it.
_SAMPLE = ["an example text", "a second, longer example text: Paris, France; 2024"]


def features(model: Any, texts: list[str]) -> dict[str, Any]:
    """``model``'s tokeniser outputs for ``texts`` (sentence-transformers 6 names it
    ``preprocess``, earlier releases ``tokenize``)."""
    tokenize = getattr(model, "preprocess", None) or model.tokenize
    return dict(tokenize(texts))


def export(model: Any) -> tuple[bytes, list[str]]:
    """``model`` (a ``SentenceTransformer``) as an ONNX graph, and the names of the
    tokeniser outputs it takes. :class:`tabret.EmbeddingError` when torch cannot export it."""
    import torch

    sample = features(model, _SAMPLE)
    keys = [k for k in _INPUTS if k in sample]

    class Forward(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: Any) -> Any:
            return self.model(dict(zip(keys, tensors, strict=True)))["sentence_embedding"]

    axes = {k: {0: "batch", 1: "tokens"} for k in keys} | {"embedding": {0: "batch"}}
    # written into a directory of its own, read back and removed: nothing is left on disk
    with tempfile.TemporaryDirectory(prefix="tabret-onnx-") as tmp:
        path = Path(tmp, "model.onnx")
        _trace(Forward().eval(), tuple(sample[k] for k in keys), path, keys, axes)
        return path.read_bytes(), keys


def _trace(module: Any, args: tuple[Any, ...], path: Path, keys: list[str], axes: Any) -> None:
    import torch

    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on the model's Python branches
            torch.onnx.export(
                module,
                args,
                path,
                input_names=keys,
                output_names=["embedding"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
    except Exception as err:  # the exporter raises many types; the model is what failed
        raise EmbeddingError(
            f"the model could not be exported to ONNX ({type(err).__name__}: {err}); "
            "use backend='torch'"
        ) from err


class OnnxModel:
    """``model`` (a loaded ``SentenceTransformer``) exported to ONNX and run by ONNX Runtime.
    ``graph``: an ONNX graph of it to run instead of exporting one (a quantised one, say);
    ``threads``: ONNX Runtime's intra-op threads (default: the cores this process may use)."""

    def __init__(
        self, model: Any, *, graph: bytes | None = None, threads: int | None = None
    ) -> None:
        try:
            import onnxruntime as ort  # type: ignore[import-untyped]
        except ImportError as err:
            raise ImportError(
                "backend='onnx' needs ONNX Runtime: pip install 'tabret[models]' "
                "(or pass backend='torch')"
            ) from err
        exported, self._keys = export(model)
        self.graph = exported if graph is None else graph
        self._model = model
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or default_threads()
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only
        self._session = ort.InferenceSession(
            self.graph, options, providers=["CPUExecutionProvider"]
        )
        # the exported graph must give the model's own vectors: a model whose Python the
        # tracer cannot follow fails here, not in a wrong ranking later
        import torch

        with torch.no_grad():
            expected = model(features(model, _SAMPLE))["sentence_embedding"].numpy()
        got = self.embed(_SAMPLE, len(_SAMPLE))
        self.dim = int(got.shape[1])
        if graph is None and not np.allclose(got, expected, atol=1e-4):
            raise EmbeddingError(
                "the ONNX export of the model gives other vectors than the model (largest "
                f"difference {np.abs(got - expected).max():.2g}); use backend='torch'"
            )

    def embed(self, texts: list[str], batch_size: int) -> FloatArray:
        """One row per text, in input order; texts are batched longest first."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        out: FloatArray | None = None
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            tokens = features(self._model, [texts[i] for i in rows])
            feed = {k: tokens[k].numpy().astype(np.int64, copy=False) for k in self._keys}
            batch = np.asarray(self._session.run(None, feed)[0], dtype=np.float32)
            if out is None:
                out = np.empty((len(texts), batch.shape[1]), dtype=np.float32)
            out[rows] = batch
        return out if out is not None else np.empty((0, self.dim), dtype=np.float32)
