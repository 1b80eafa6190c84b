"""Text files read in Python, through the C++ loaders' own reader (``io/file.hpp``,
``io/text_file.hpp``; docs/reliability.md, "What loaders read"), so one policy holds for both:
regular files only, UTF-8 with a leading byte order mark skipped; anything else is a typed error
that names the file.

:func:`read_bytes` reads a regular file (a missing path, a directory, a FIFO, socket or device is
a :class:`tabret.FileError` saying which), :func:`decode` checks and decodes UTF-8 (a
:class:`tabret.ParseError` with ``source`` and ``line``), :func:`read_lines` does both and
splits the text into lines (:func:`split_lines`).
"""

from __future__ import annotations

import os
from pathlib import Path

from tabret import _core


def parse_error(source: str | os.PathLike[str], line: int, what: str) -> _core.ParseError:
    """A :class:`tabret.ParseError` ``source:line: what`` with ``source`` and ``line`` set."""
    exc = _core.ParseError(f"{source}:{line}: {what}")
    exc.source, exc.line = str(source), line
    return exc


def read_bytes(path: Path) -> bytes:
    """The bytes of the regular file ``path`` (``_core.read_file_bytes``: opened without
    blocking, so a FIFO cannot hang it; symbolic links are followed)."""
    return _core.read_file_bytes(path)


def split_lines(text: str) -> list[str]:
    """``text`` split at ``\\n``, ``\\r\\n`` and ``\\r`` (what a line is here; unlike
    :meth:`str.splitlines`, never at a form feed or U+2028, which a JSON string may hold)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def decode(data: bytes, source: str | os.PathLike[str]) -> str:
    """``data`` as UTF-8 text, without a leading byte order mark (``_core.check_utf8``): a
    :class:`tabret.ParseError` naming ``source``, the line, the byte offset and the value of the
    first byte that is not UTF-8 otherwise."""
    return _core.check_utf8(data, str(source))


def read_lines(path: Path) -> list[str]:
    """The lines of the UTF-8 text file ``path`` (:func:`read_bytes`, :func:`decode`); a last
    line ending in a line break is followed by no empty one."""
    lines = split_lines(decode(read_bytes(path), path))
    return lines[:-1] if lines and lines[-1] == "" else lines
