"""Text files read in Python, under the policy of the C++ loaders (``io/file.hpp``,
``io/text_file.hpp``; docs/reliability.md, "What loaders read"): regular files only, UTF-8 with
a leading byte order mark skipped; anything else is a typed error that names the file.

:func:`read_bytes` reads a regular file (a missing path, a directory, a FIFO, socket or device is
a :class:`tabret.FileError` saying which), :func:`decode` checks and decodes UTF-8 (a
:class:`tabret.ParseError` with ``source`` and ``line``), :func:`read_lines` does both and
splits the text into lines (:func:`split_lines`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tabret import _core

BOM = b"\xef\xbb\xbf"


def parse_error(source: str | os.PathLike[str], line: int, what: str) -> _core.ParseError:
    """A :class:`tabret.ParseError` ``source:line: what`` with ``source`` and ``line`` set."""
    exc = _core.ParseError(f"{source}:{line}: {what}")
    exc.source, exc.line = str(source), line
    return exc


def _not_regular(mode: int) -> str:
    """What a file of ``mode`` is, when it is not a regular file."""
    if stat.S_ISDIR(mode):
        return "is a directory, expected a file"
    if stat.S_ISFIFO(mode):
        kind = "a FIFO"
    elif stat.S_ISSOCK(mode):
        kind = "a socket"
    else:
        kind = "a device"
    return f"not a regular file ({kind}); tabret reads only regular files"


def read_bytes(path: Path) -> bytes:
    """The bytes of the regular file ``path``. Opened without blocking (a FIFO cannot hang the
    open), then checked to be a regular file (symbolic links are followed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        raise _core.FileError(f"{path}: no such file") from None
    except OSError as err:
        raise _core.FileError(f"{path}: cannot open for reading: {err.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode):
            os.set_blocking(fd, True)
            with open(fd, "rb", closefd=False) as f:
                return f.read()
    except OSError as err:
        raise _core.FileError(f"{path}: cannot read: {err.strerror}") from None
    finally:
        os.close(fd)
    raise _core.FileError(f"{path}: {_not_regular(mode)}")


def split_lines(text: str) -> list[str]:
    """``text`` split at ``\\n``, ``\\r\\n`` and ``\\r`` (what a line is here; unlike
    :meth:`str.splitlines`, never at a form feed or U+2028, which a JSON string may hold)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def decode(data: bytes, source: str | os.PathLike[str]) -> str:
    """``data`` as UTF-8 text, without a leading byte order mark; a
    :class:`tabret.ParseError` naming ``source``, the line, the byte offset (from the start of
    ``data``) and the value of the first byte that is not UTF-8 otherwise (the C++ loaders'
    message)."""
    skip = len(BOM) if data.startswith(BOM) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as err:
        before = data[skip : skip + err.start].decode("utf-8")
        lines = split_lines(before)
        raise parse_error(
            source,
            len(lines),
            f"not valid UTF-8: byte 0x{data[skip + err.start]:02X} at byte offset "
            f"{skip + err.start} (column {len(lines[-1].encode('utf-8')) + 1}); tabret reads "
            "text files as UTF-8 only: convert the file (e.g. iconv -f latin1 -t utf-8)",
        ) from None


def read_lines(path: Path) -> list[str]:
    """The lines of the UTF-8 text file ``path`` (:func:`read_bytes`, :func:`decode`); a last
    line ending in a line break is followed by no empty one."""
    lines = split_lines(decode(read_bytes(path), path))
    return lines[:-1] if lines and lines[-1] == "" else lines
