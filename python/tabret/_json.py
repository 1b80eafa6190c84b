"""JSON read whole or failing with a typed error that names the file and the line.

:func:`read_file` for a JSON document, :func:`parse` for text already read (one line of a JSON
lines file, say). A missing file, a directory or anything but a regular file is a
:class:`tabret.FileError`; invalid JSON or text that is not UTF-8 a :class:`tabret.ParseError`
with ``source`` and ``line`` set. What the JSON must contain is for the caller to check (a
:class:`tabret.SchemaError` naming the entry and field).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from tabret import _core, _text


def parse(text: str, path: Path, line: int | None = None) -> Any:
    """``text`` as JSON; ``line`` is where it starts in ``path`` (for a JSON lines file), else
    the error names the line within ``text``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        at = err.lineno if line is None else line
        raise _text.parse_error(path, at, f"invalid JSON: {err.msg}") from None


def read_file(path: Path) -> Any:
    """The JSON document in ``path`` (gzip-compressed when the name ends in ``.gz``), read
    whole: a regular file of UTF-8 text, a leading byte order mark skipped
    (:mod:`tabret._text`)."""
    data = _text.read_bytes(path)
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as err:  # EOFError: a gzip stream cut short
            raise _core.FileError(f"{path}: cannot read: {err}") from None
    return parse(_text.decode(data, path), path)
