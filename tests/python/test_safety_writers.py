"""Data safety of the single-file writers (issue 47, items 1 and 11): catalog JSON
(``Catalog.save_json``, ``tabret catalog --save``), LLM recordings (``--llm-record``) and
``tabret eval --output`` write only where nothing or a regular file is; a symbolic link, FIFO,
socket, device or directory is refused with a FileError naming the path and left as it was, as an
index save refuses them (docs/reliability.md, "What a save may touch")."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import tabret
from tabret import Catalog
from tabret.cli import main
from tabret.embedders import HashingEmbedder
from tabret.index import TableIndex
from tabret.recordings import RecordingLLM, read_recording

CATALOG = Catalog()
CATALOG.add_ddl_text("CREATE TABLE a (x INT);", "d")


def _char_device(path: Path) -> None:
    """A second /dev/null, in the test's directory (never the real one: a writer that replaced
    it, as these did, would break the machine)."""
    if os.geteuid() != 0:
        pytest.skip("mknod of a character device needs root")
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()


SPECIAL: dict[str, Callable[[Path], None]] = {
    "character device": _char_device,
    "FIFO": _fifo,
    "directory": _directory,
}


@contextlib.contextmanager
def _special(kind: str, path: Path) -> Iterator[None]:
    """A ``kind`` file at ``path`` for the ``with`` block (a socket lives while it is bound)."""
    if kind != "socket":
        SPECIAL[kind](path)
        yield
        return
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        yield


def _save_json(path: Path) -> None:
    CATALOG.save_json(path)


def _cli_catalog_save(path: Path) -> None:
    """``tabret catalog … --save``, raising what it printed as a FileError (rc 1)."""
    source = path.parent / "source.json"
    CATALOG.save_json(source)
    if main(["catalog", "json", str(source), "--save", str(path)]) != 1:
        raise AssertionError("tabret catalog --save exited 0")
    raise tabret.FileError("reported")


def _record(path: Path) -> None:
    recording = RecordingLLM(lambda prompts: ["answer" for _ in prompts], path)
    recording(["a prompt"])
    recording.save()


WRITERS: dict[str, Callable[[Path], None]] = {
    "save_json": _save_json,
    "catalog --save": _cli_catalog_save,
    "llm-record": _record,
}


def _snapshot(path: Path) -> tuple[int, int, int]:
    st = path.lstat()
    return st.st_mode, st.st_ino, st.st_rdev


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("kind", [*SPECIAL, "socket"])
def test_a_special_file_is_refused_and_kept(
    writer: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "out.json"
    with _special(kind, target):
        before = _snapshot(target)
        with pytest.raises(tabret.FileError) as err:
            WRITERS[writer](target)
        message = str(err.value) if writer != "catalog --save" else capsys.readouterr().err
        assert f"{target}: is a {kind}, not a regular file; not replacing it" in message
        assert _snapshot(target) == before
        assert not [p.name for p in tmp_path.iterdir() if "tabret-tmp" in p.name]


@pytest.mark.parametrize("writer", WRITERS)
def test_a_symlink_is_refused_and_its_target_kept(
    writer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link is refused (not followed, not replaced), as an index save refuses one."""
    real = tmp_path / "real.jsonl"
    real.write_text("mine\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    with pytest.raises(tabret.FileError) as err:
        WRITERS[writer](link)
    message = str(err.value) if writer != "catalog --save" else capsys.readouterr().err
    assert f"{link}: is a symbolic link, not a regular file; not replacing it" in message
    assert link.is_symlink()
    assert os.readlink(link) == str(real)
    assert real.read_text() == "mine\n"


@pytest.mark.parametrize("writer", WRITERS)
def test_a_regular_file_is_replaced_keeping_its_permissions(writer: str, tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    _record(target) if writer == "llm-record" else _save_json(target)
    target.chmod(0o600)
    if writer == "catalog --save":
        source = tmp_path / "source.json"
        CATALOG.save_json(source)
        assert main(["catalog", "json", str(source), "--save", str(target)]) == 0
    else:
        WRITERS[writer](target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    if writer == "llm-record":
        assert read_recording(target) == {("function", "a prompt"): "answer"}
    else:
        assert Catalog.from_json(target).num_tables == 1


def test_a_gzip_recording_is_written_compressed(tmp_path: Path) -> None:
    target = tmp_path / "r.jsonl.gz"
    _record(target)
    assert target.read_bytes()[:2] == b"\x1f\x8b"
    assert read_recording(target) == {("function", "a prompt"): "answer"}


def test_a_recording_target_is_checked_before_the_model_is_asked(tmp_path: Path) -> None:
    """The FIFO was opened for reading (a hang) and later replaced."""
    os.mkfifo(tmp_path / "r.jsonl")
    with pytest.raises(tabret.FileError, match=r"r\.jsonl: is a FIFO"):
        RecordingLLM(lambda prompts: prompts, tmp_path / "r.jsonl")
    assert stat.S_ISFIFO((tmp_path / "r.jsonl").lstat().st_mode)


def test_saving_onto_a_directory_says_why(tmp_path: Path) -> None:
    """It said 'cannot replace: Success' (errno read after the clean-up)."""
    with pytest.raises(tabret.FileError) as err:
        CATALOG.save_json(tmp_path)
    assert "Success" not in str(err.value)
    assert f"{tmp_path}: is a directory" in str(err.value)


def test_a_missing_parent_names_the_target_not_the_temporary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "cat.json"
    source = tmp_path / "source.json"
    CATALOG.save_json(source)
    assert main(["catalog", "json", str(source), "--save", str(target)]) == 1
    err = capsys.readouterr().err
    assert f"{target}: cannot write: the directory {target.parent} does not exist" in err
    assert "tabret-tmp" not in err


def test_an_index_saves_to_a_path_that_is_not_utf8(tmp_path: Path) -> None:
    """It raised RuntimeError [json.exception.type_error.316] without the path."""
    target = Path(os.fsdecode(bytes(tmp_path) + b"/idx\xff"))
    index = TableIndex.build(CATALOG, HashingEmbedder(dim=16), progress=False)
    index.save(target)
    assert TableIndex.load(target, HashingEmbedder(dim=16)).catalog.num_tables == 1
    index.save(target)  # replacing it reads the marker it wrote
    assert sorted(os.listdir(tmp_path)) == [os.fsdecode(b"idx\xff")]
