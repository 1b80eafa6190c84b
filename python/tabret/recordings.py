"""Recordings of a live LLM: every prompt it was asked and what it answered, saved so that a run
can be repeated, byte for byte, without the model.

A recording is a JSON-lines file, one ``{"model": …, "prompt": …, "completion": …}`` object per
line (the lines :meth:`tabret.ResponseCache.import_jsonl` reads), gzip-compressed when its name
ends in ``.gz``. :class:`RecordingLLM` writes one while a live LLM answers; :class:`RecordedLLM`
answers from one.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO

from tabret import _core
from tabret._core import FileError, MissingRecordingError, ParseError
from tabret.llms import check_completions

__all__ = ["RecordedLLM", "RecordingLLM", "read_recording"]

PathLike = str | os.PathLike[str]
Entries = dict[tuple[str, str], str]  # (model, prompt) -> completion
_FIELDS = ("model", "prompt", "completion")


def _open(path: Path, mode: str, gz: bool | None = None) -> IO[str]:
    if path.name.endswith(".gz") if gz is None else gz:
        return gzip.open(path, mode + "t", encoding="utf-8")  # type: ignore[return-value]
    return open(path, mode, encoding="utf-8")


def read_recording(path: PathLike) -> Entries:
    """Every entry of the recording ``path`` (a later line for the same model and prompt wins).
    Raises :class:`tabret.FileError` if it cannot be read and :class:`tabret.ParseError` naming
    the file and line for a line that is not a recording entry."""
    path = Path(path)
    entries: Entries = {}
    try:
        with _open(path, "r") as f:
            for number, line in enumerate(f, 1):
                if line.strip():
                    model, prompt, completion = _entry(path, number, line)
                    entries[(model, prompt)] = completion
    except (OSError, EOFError) as err:  # EOFError: a gzip stream cut short
        raise FileError(f"{path}: cannot read the recording: {err}") from None
    except UnicodeDecodeError as err:
        raise ParseError(f"{path}: not UTF-8 text ({err.reason}), not a recording") from None
    return entries


def _entry(path: Path, number: int, line: str) -> tuple[str, str, str]:
    try:
        item = json.loads(line)
    except json.JSONDecodeError as err:
        raise ParseError(f"{path}:{number}: not JSON ({err.msg}), not a recording") from None
    if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in _FIELDS):
        raise ParseError(
            f"{path}:{number}: a recording line is an object with string fields "
            f"{', '.join(_FIELDS)}"
        )
    return item["model"], item["prompt"], item["completion"]


def _write_recording(path: Path, entries: Entries) -> None:
    """Writes ``entries`` as the recording ``path`` through tabret's one single-file writer
    (a temporary beside it, fsynced, renamed over it; a symbolic link, FIFO, socket, device or
    directory there is refused with :class:`tabret.FileError`): a reader sees the old recording
    or the new one, never a part."""
    text = "".join(
        json.dumps({"model": m, "prompt": p, "completion": c}, ensure_ascii=False) + "\n"
        for (m, p), c in entries.items()
    ).encode("utf-8")
    _core.write_file_atomic(path, gzip.compress(text) if path.name.endswith(".gz") else text)


class RecordingLLM:
    """``llm``, with every prompt and answer kept for :meth:`save` into the recording ``path``.
    An existing file at ``path`` must be a recording and nothing but a regular file (checked now,
    before the LLM is asked: a symbolic link, FIFO, socket, device or directory is a
    :class:`tabret.FileError`, and the file is never touched); :meth:`save` keeps its entries and
    adds the new ones."""

    def __init__(self, llm: Callable[[list[str]], list[str]], path: PathLike) -> None:
        self._llm = llm
        self.path = Path(path)
        _core.check_file_target(self.path)
        if self.path.exists():
            read_recording(self.path)
        self._new: Entries = {}

    @property
    def name(self) -> str:
        return str(getattr(self._llm, "name", None) or type(self._llm).__name__)

    def __call__(self, prompts: list[str]) -> list[str]:
        if not prompts:
            return []
        answers = check_completions(self.name, prompts, self._llm(list(prompts)))
        for prompt, answer in zip(prompts, answers, strict=True):
            self._new[(self.name, prompt)] = answer
        return answers

    def __len__(self) -> int:
        """The answers recorded since this object was made."""
        return len(self._new)

    def save(self) -> int:
        """Writes the recording (the file's entries, then the new ones) atomically; returns the
        number of entries. Raises :class:`tabret.ParseError` and leaves the file as it is if it
        stopped being a recording meanwhile."""
        entries = read_recording(self.path) if self.path.exists() else {}
        entries.update(self._new)
        _write_recording(self.path, entries)
        return len(entries)

    def __repr__(self) -> str:
        return f"RecordingLLM({self.name!r}, {str(self.path)!r}, {len(self)} new answers)"


class RecordedLLM:
    """An LLM that answers from the recording ``path``: the completion recorded for exactly the
    same prompt and ``model`` (default: the recording's only model). A prompt that was not
    recorded raises :class:`tabret.MissingRecordingError` quoting its start."""

    def __init__(self, path: PathLike, model: str | None = None) -> None:
        self.path = Path(path)
        entries = read_recording(self.path)
        models = sorted({m for m, _ in entries})
        if model is None:
            if len(models) != 1:
                raise ValueError(
                    f"{self.path} records {len(models)} models ({', '.join(models) or 'none'}): "
                    "name one with model="
                )
            model = models[0]
        elif model not in models:
            raise ValueError(f"{self.path} has no answers of model {model!r} (it has {models})")
        self.model = model
        self._answers = {p: c for (m, p), c in entries.items() if m == model}

    @property
    def name(self) -> str:
        return self.model

    def __len__(self) -> int:
        return len(self._answers)

    def __call__(self, prompts: list[str]) -> list[str]:
        out = []
        for prompt in prompts:
            answer = self._answers.get(prompt)
            if answer is None:
                start = " ".join(prompt[-160:].split())
                raise MissingRecordingError(
                    f"{self.path}: no answer of {self.model!r} recorded for the prompt ending "
                    f"{start!r}"
                )
            out.append(answer)
        return out

    def __repr__(self) -> str:
        return f"RecordedLLM({str(self.path)!r}, {self.model!r}, {len(self)} answers)"
