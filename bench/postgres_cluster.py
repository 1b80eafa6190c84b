"""A throwaway PostgreSQL cluster for the tests and benchmarks that need a real server:
Debian's ``postgresql`` binaries (initdb, pg_ctl) on a free port of 127.0.0.1, in a temporary
directory that is removed afterwards. For pgvector, :func:`pgvector_server_bin` finds a server
with the ``vector`` extension: Debian's when its ``postgresql-NN-pgvector`` package is installed
(not in Debian 12), else the PostgreSQL 16 + pgvector 0.6 build that the PyPI package
``pgserver`` bundles."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple


def server_bin() -> Path | None:
    """The newest installed server's bin directory, or None without one."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return found[-1].parent if found else None


@contextmanager
def pgvector_server_bin() -> Iterator[Path | None]:
    """The bin directory of a PostgreSQL server that has the pgvector extension, or None.

    pgserver's build lives in site-packages, which the ``postgres`` user may not be able to
    read (/root): it is copied, with the libraries its RPATH names, into a temporary directory
    that is removed on exit."""
    debian = server_bin()
    if debian is not None and (debian.parent / "lib" / "vector.so").exists():
        yield debian
        return
    # found, not imported: importing pgserver starts its own machinery and warns
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        yield None
        return
    package = Path(next(iter(spec.submodule_search_locations)))
    root = Path(tempfile.mkdtemp(prefix="tabret-pgserver-"))
    try:
        # pginstall/bin's RPATH is $ORIGIN/../../../pgserver.libs: keep that layout
        shutil.copytree(package / "pginstall", root / "pgserver" / "pginstall", symlinks=True)
        libs = package.parent / "pgserver.libs"
        if libs.is_dir():
            shutil.copytree(libs, root / "pgserver.libs", symlinks=True)
        root.chmod(0o755)
        yield root / "pgserver" / "pginstall" / "bin"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_user(cmd: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run it as the 'postgres' user then."""
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


class Cluster(NamedTuple):
    url: str  # base SQLAlchemy URL: postgresql+psycopg://postgres@127.0.0.1:PORT (+ /DATABASE)
    socket_dir: Path  # for psql / pg_dump: -h socket_dir -p port -U postgres
    port: int


@contextmanager
def throwaway_cluster(
    bindir: Path, prefix: str = "tabret-pg-", settings: Mapping[str, str] | None = None
) -> Iterator[Cluster]:
    """Starts a cluster (superuser ``postgres``, trust authentication, no fsync, and the server
    ``settings`` given) listening on 127.0.0.1 and a Unix socket; stops it and deletes its
    directory on exit."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    data, port = root / "data", _free_port()
    # The server is not tabret: it runs without the sanitizer runtimes that `make sanitize`
    # preloads into this process (PostgreSQL does not start under them).
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}

    def run(*cmd: str) -> None:
        subprocess.run(
            _as_server_user(list(cmd)), check=True, capture_output=True, timeout=120, env=env
        )

    try:
        run(str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "--no-sync")
        opts = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
        opts += "".join(f" -c {k}={v}" for k, v in (settings or {}).items())
        log = str(root / "log")
        run(str(bindir / "pg_ctl"), "-D", str(data), "-o", opts, "-l", log, "-w", "start")
        try:
            yield Cluster(f"postgresql+psycopg://postgres@127.0.0.1:{port}", root, port)
        finally:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)
