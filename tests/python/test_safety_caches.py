"""Issue 18, items 6 and 15: the LLM response cache and the disk embedding cache are SQLite
stores (concurrent writers lose nothing, keys are exact, damaged or foreign files are refused
untouched); a CachedEmbedder may be called from its own embedder; a long batched retrieve
stops on Ctrl-C."""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tabret
from interrupting import assert_stops_on_sigint
from tabret.embedders import CallableEmbedder, HashingEmbedder
from tabret.embedding_cache import DiskCachedEmbedder
from tabret.llms import ResponseCache

HASHING = HashingEmbedder(dim=32)
JOIN_S = 120  # a liveness bound for the child processes, never a speed assertion
PER_WRITER = 40

_SPAWN = mp.get_context("spawn")  # no fork of a process that holds native threads and locks


def _write_answers(path: str, tag: str, barrier: Any, errors: Any, turn: Any = None) -> None:
    try:
        cache = ResponseCache(path)
    except tabret.FileError as err:
        errors.put(f"{tag}: FileError: {err}")
        barrier.wait(JOIN_S)
        return
    barrier.wait(JOIN_S)  # both writers hold the file open before either writes
    if turn is not None and tag == "b":
        turn.wait(JOIN_S)  # ordered: "b" writes after "a" has written everything
    for i in range(PER_WRITER):
        cache.put("m", f"{tag}-{i}", f"answer {tag} {i}")
    if turn is not None and tag == "a":
        turn.set()


def _run_writers(target: Any, path: str, *, ordered: bool = False) -> list[str]:
    barrier = _SPAWN.Barrier(2)
    errors = _SPAWN.Queue()
    extra = (_SPAWN.Event(),) if ordered else ()
    procs = [
        _SPAWN.Process(target=target, args=(path, tag, barrier, errors, *extra)) for tag in "ab"
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(JOIN_S)
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join()
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    out: list[str] = []
    while not errors.empty():
        out.append(errors.get())
    return out


def test_two_processes_writing_one_response_cache_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "answers.cache"
    assert _run_writers(_write_answers, str(path)) == []
    cache = ResponseCache(path)
    assert len(cache) == 2 * PER_WRITER
    for tag in "ab":
        for i in range(PER_WRITER):
            assert cache.find("m", f"{tag}-{i}") == f"answer {tag} {i}"


def test_writers_on_a_response_cache_whose_last_write_was_cut_lose_nothing(
    tmp_path: Path,
) -> None:
    """A crash cut the file's last write short; two processes open it, then one writes, then the
    other. They must
    either refuse it (FileError naming it, file untouched) or lose nothing (before the fix, the
    second writer's repair cut away what the first had appended)."""
    path = tmp_path / "answers.cache"
    ResponseCache(path).put("m", "seed", "S")
    whole = path.read_bytes()
    path.write_bytes(whole[:-10])
    errors = _run_writers(_write_answers, str(path), ordered=True)
    if errors:
        assert len(errors) == 2
        assert all(str(path) in e for e in errors)
        assert path.read_bytes() == whole[:-10]
        return
    cache = ResponseCache(path)
    for tag in "ab":
        for i in range(PER_WRITER):
            assert cache.find("m", f"{tag}-{i}") == f"answer {tag} {i}"


def test_response_cache_keys_are_exact_after_reopen(tmp_path: Path) -> None:
    path = tmp_path / "answers.cache"
    cache = ResponseCache(path)
    cache.put("m", "a", "plain")
    cache.put("m", "a\x00", "with a NUL")
    cache.put("m\x00", "a", "other model")
    del cache
    again = ResponseCache(path)
    assert len(again) == 3
    assert again.find("m", "a") == "plain"
    assert again.find("m", "a\x00") == "with a NUL"
    assert again.find("m\x00", "a") == "other model"
    assert again.find("m", "a\x00\x00") is None


def test_an_old_jsonl_response_cache_is_refused_untouched(tmp_path: Path) -> None:
    old = tmp_path / "answers.jsonl"
    text = '{"model": "m", "prompt": "a", "completion": "A"}\n'
    old.write_text(text)
    with pytest.raises(tabret.FileError, match=r"answers\.jsonl.*import_jsonl"):
        ResponseCache(old)
    assert old.read_text() == text
    fresh = ResponseCache(tmp_path / "answers.cache")
    assert fresh.import_jsonl(old) == 1
    assert fresh.find("m", "a") == "A"


def test_a_damaged_response_cache_is_a_file_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "answers.cache"
    cache = ResponseCache(path)
    cache.put_many("m", [f"p{i}" for i in range(50)], ["x" * 40] * 50)
    del cache
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(tabret.FileError, match=r"answers\.cache"):
        ResponseCache(path)
    assert path.read_bytes() == whole[: len(whole) // 2]


# ---------------------------------------------------------------------------------------------
# DiskCachedEmbedder


def _counting(name: str = "counting") -> tuple[CallableEmbedder, list[list[str]]]:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> Any:
        calls.append(list(texts))
        # NUL-sensitive: "a" and "a\x00" get different vectors.
        return np.stack([HASHING.embed([t.replace("\x00", " nul ")])[0] for t in texts])

    return CallableEmbedder(embed, name), calls


def test_embedding_cache_keeps_a_and_a_nul_apart_after_reopen(tmp_path: Path) -> None:
    inner, calls = _counting()
    first = DiskCachedEmbedder(inner, tmp_path)
    with_nul = first.embed(["a\x00"])[0]
    del first
    gc.collect()
    again = DiskCachedEmbedder(inner, tmp_path)
    plain = again.embed(["a"])[0]
    assert calls == [["a\x00"], ["a"]]  # "a" was a miss, not the vector of "a\x00"
    assert not np.allclose(plain, with_nul)
    assert np.allclose(again.embed(["a\x00"])[0], with_nul)
    assert len(calls) == 2


def _embed_texts(directory: str, tag: str, barrier: Any, errors: Any) -> None:
    inner, _ = _counting()
    cache = DiskCachedEmbedder(inner, directory)
    barrier.wait(JOIN_S)
    for i in range(PER_WRITER // 4):
        for j in range(4):  # one text per call: many writes, interleaved with the other process
            cache.embed([f"{tag} text {i} {j}"])


def test_two_processes_writing_one_embedding_cache_lose_nothing(tmp_path: Path) -> None:
    assert _run_writers(_embed_texts, str(tmp_path)) == []
    inner, calls = _counting()
    cache = DiskCachedEmbedder(inner, tmp_path)
    assert len(cache) == 2 * PER_WRITER
    texts = [
        f"{tag} text {i} {j}" for tag in "ab" for i in range(PER_WRITER // 4) for j in range(4)
    ]
    cache.embed(texts)
    assert calls == []


def test_a_damaged_embedding_cache_is_a_file_error_naming_it(tmp_path: Path) -> None:
    inner, _ = _counting()
    first = DiskCachedEmbedder(inner, tmp_path)
    first.embed([f"text {i}" for i in range(50)])
    del first
    gc.collect()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files
    for p in files:  # every file of the cache loses the second half of its bytes
        data = p.read_bytes()
        p.write_bytes(data[: len(data) // 2])
    with pytest.raises(tabret.FileError) as info:
        DiskCachedEmbedder(inner, tmp_path).embed([f"text {i}" for i in range(50)])
    assert any(str(p) in str(info.value) for p in files)


def test_old_embedding_cache_shards_are_refused_untouched(tmp_path: Path) -> None:
    shard = tmp_path / "0123456789abcdef" / "shard-00000.npz"
    shard.parent.mkdir()
    np.savez(shard, texts=np.array(["a"]), vectors=np.zeros((1, 4), dtype=np.float32))
    before = shard.read_bytes()
    inner, _ = _counting()
    with pytest.raises(tabret.FileError, match=r"shard-00000\.npz"):
        DiskCachedEmbedder(inner, tmp_path).embed(["a"])
    assert shard.read_bytes() == before


def test_embedding_cache_inner_may_call_the_same_cache(tmp_path: Path) -> None:
    holder: dict[str, DiskCachedEmbedder] = {}

    def embed(texts: list[str]) -> Any:
        rows = []
        for t in texts:
            words = t.split()
            rows.append(
                holder["c"].embed(words).sum(axis=0) if len(words) > 1 else HASHING.embed([t])[0]
            )
        return np.stack(rows)

    holder["c"] = DiskCachedEmbedder(CallableEmbedder(embed, "compositional"), tmp_path)
    done: list[Any] = []
    thread = threading.Thread(target=lambda: done.append(holder["c"].embed(["red apple", "red"])))
    thread.daemon = True
    thread.start()
    thread.join(JOIN_S)
    assert done, "the embedding cache deadlocked"
    assert np.allclose(done[0][0], holder["c"].embed(["red", "apple"]).sum(axis=0))


# ---------------------------------------------------------------------------------------------
# Item 15: CachedEmbedder re-entrancy and Ctrl-C in a long retrieve.

_REENTRANT = """
import numpy as np
from tabret import CachedEmbedder, HashingEmbedder

hashing = HashingEmbedder(dim=32)
holder = {}

def embed(texts):
    rows = []
    for t in texts:
        words = t.split()
        if len(words) > 1:
            rows.append(holder["c"].embed(words).sum(axis=0))  # the same cache, re-entered
        else:
            rows.append(hashing.embed([t])[0])
    return np.stack(rows)

cache = CachedEmbedder(embed, "compositional")
holder["c"] = cache
m = cache.embed(["red apple", "apple", "green apple", "red"])
parts = cache.embed(["red", "apple"])
assert np.allclose(m[0], parts[0] + parts[1])
assert len(cache) == 5, len(cache)

def loop(texts):
    holder["l"].embed(texts)  # asks for the very texts it is embedding: endless recursion
    return hashing.embed(texts)

holder["l"] = CachedEmbedder(loop, "loop")
try:
    holder["l"].embed(["x"])
except Exception as err:  # a clear error, never a hang
    print("loop error:", type(err).__name__, err)
print("ok")
"""


def test_cached_embedder_callback_may_call_the_same_cache() -> None:
    """Before the fix the inner call blocked on the lock its outer call held, forever."""
    result = subprocess.run(
        [sys.executable, "-c", _REENTRANT],
        capture_output=True,
        text=True,
        timeout=JOIN_S,
        env={**os.environ, "PYTHONFAULTHANDLER": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "ok" in result.stdout
    assert "nested 65 deep" in result.stdout or "RecursionError" in result.stdout


_LONG_RETRIEVE = """
import sys
import tabret
from tabret import Catalog, HashingEmbedder
from tabret.index import DenseRetriever, LexicalRetriever, TableIndex

kind, tables = sys.argv[1], int(sys.argv[2])
ddl = "".join(
    f"CREATE TABLE t{i} (id int, name_{i % 97} text, value_{i % 89} int);\\n" for i in range(tables)
)
cat = Catalog()
cat.add_ddl_text(ddl, "big")
# dim 4: one block of the exact search (a matrix product of at most 64 MiB of scores, which
# cannot be cut without changing its rounding) stays short even in an unoptimised build.
index = TableIndex.build(cat, HashingEmbedder(dim=4), columns=False, progress=False)
retriever = DenseRetriever(index) if kind == "dense" else LexicalRetriever(index)

def questions(n):
    return [f"which t{i % tables} has name {i % 97} and value {i % 89}" for i in range(n)]

# 2,000,000 questions against 20,000 tables: minutes of work on any machine (no calibration
# against a clock); the signal comes 2 s after "started".
n = 2_000_000
qs = questions(n)
print("started", n, flush=True)
try:
    retriever.retrieve(qs, 5)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(42)
print("finished", flush=True)
"""


@pytest.mark.parametrize(("kind", "tables"), [("dense", 20_000), ("bm25", 20_000)])
def test_a_long_batched_retrieve_stops_on_ctrl_c(kind: str, tables: int) -> None:
    """The child runs a retrieve of minutes (2,000,000 questions); SIGINT must end it with
    KeyboardInterrupt before the batch is done (before the fix: only when the whole batch was
    done). The 120 s bound only catches a hang; an ignored signal shows as "finished"."""
    assert_stops_on_sigint(_LONG_RETRIEVE, kind, str(tables), what="the retrieve")


@pytest.fixture
def read_only_view(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(writable, read-only): a directory and a read-only view of it, a read-only bind mount
    (as root with mount rights: a read-only filesystem, which root cannot write either), else
    the same directory made unwritable by its mode (as another user)."""
    src = tmp_path / "src"
    src.mkdir()
    view = tmp_path / "view"
    view.mkdir()
    if os.geteuid() == 0:
        bound = subprocess.run(["mount", "--bind", str(src), str(view)], capture_output=True)
        if bound.returncode != 0:
            pytest.skip(f"a read-only filesystem needs mount rights: {bound.stderr!r}")
        try:
            subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], check=True)
            yield src, view
        finally:
            subprocess.run(["umount", str(view)], check=True)
    else:
        view.rmdir()
        view.symlink_to(src)
        yield src, view
        for p in src.iterdir():
            p.chmod(0o644)
        src.chmod(0o755)


def _seal(src: Path) -> None:
    """Without a mount, what the fixture's second case needs: nothing under src writable."""
    if os.geteuid() != 0:
        for p in src.iterdir():
            p.chmod(0o444)
        src.chmod(0o555)


def test_a_response_cache_that_cannot_be_written_is_read(
    read_only_view: tuple[Path, Path],
) -> None:
    src, view = read_only_view
    ResponseCache(src / "c.sqlite").put("m", "p", "answer")
    gc.collect()
    _seal(src)
    before = sorted(p.name for p in src.iterdir())
    cache = ResponseCache(view / "c.sqlite")
    assert cache.read_only
    assert cache.find("m", "p") == "answer"
    assert len(cache) == 1
    with pytest.raises(tabret.FileError, match=r"read-only.*nothing was stored"):
        cache.put("m", "q", "x")
    with pytest.warns(UserWarning, match="read-only"):
        llm = tabret.llms.CachedLLM(lambda ps: [f"new {p}" for p in ps], cache, model="m")
    assert llm(["p", "q"]) == ["answer", "new q"]
    assert cache.find("m", "q") is None
    del cache, llm
    gc.collect()
    assert sorted(p.name for p in src.iterdir()) == before


def test_an_embedding_cache_that_cannot_be_written_is_read(
    read_only_view: tuple[Path, Path],
) -> None:
    src, view = read_only_view
    with DiskCachedEmbedder(HASHING, src) as warm:
        first = warm.embed(["singer name", "concert year"])
    _seal(src)
    with pytest.warns(UserWarning, match="read-only"):
        cold = DiskCachedEmbedder(HASHING, view)
    assert cold.read_only
    again = cold.embed(["singer name", "a new text"])
    np.testing.assert_array_equal(again[0], first[0])
    assert cold.misses == 1
    assert len(cold) == 2  # the new vector was computed, not stored
    cold.close()
