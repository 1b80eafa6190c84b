"""``tabret serve`` under load: find_tables latency (p50, p99) and questions per second for 1 and
8 concurrent clients, over MCP streamable HTTP (the SDK's own client, one session per client)
and over the JSON API, then 8 JSON clients while the index directory is saved again every half
second (errors counted: there must be none).

The server is a ``tabret serve --http 127.0.0.1:0 --rate 0`` process over the demo catalog
(69 tables) indexed with the hashing embedder, so the numbers are the server's own cost (the
protocol, the JSON, the thread hand-off, the search) with no model in them; the clients run in
this process, on the same machine. Each client asks the demo questions in turn, ``--requests``
each.

Run: ``python -m bench.serve_load [--requests 200]`` (writes build/bench/serve.json).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from bench.common import machine, percentile, write_json
from tabret import Catalog, HashingEmbedder, TableIndex, demo_catalog, demo_questions

QUESTIONS = [q.question for q in demo_questions()]
Ask = Callable[[str], Awaitable[None]]


def _save(path: Path, catalog: Catalog) -> None:
    TableIndex.build(catalog, HashingEmbedder(), progress=False).save(path, replace=True)


def _start(index: Path) -> tuple[subprocess.Popen[str], str]:
    argv = [sys.executable, "-m", "tabret", "serve", str(index), "--http", "127.0.0.1:0"]
    proc = subprocess.Popen(
        [*argv, "--rate", "0", "--reload-interval", "0.1"], stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    found = re.search(r"MCP at (http://\S+)/mcp", proc.stderr.readline())
    if not found:
        proc.kill()
        raise SystemExit("tabret serve did not start")
    threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep the pipe drained
    return proc, found[1]


async def _client(
    connect: Callable[[], contextlib.AbstractAsyncContextManager[Ask]], requests: int, offset: int
) -> tuple[list[float], int]:
    """One client's latencies (seconds) and errors over ``requests`` questions."""
    latencies: list[float] = []
    errors = 0
    async with connect() as ask:
        for i in range(requests):
            question = QUESTIONS[(offset + i) % len(QUESTIONS)]
            start = time.perf_counter()
            try:
                await ask(question)
            except Exception:
                errors += 1
            latencies.append(time.perf_counter() - start)
    return latencies, errors


@contextlib.asynccontextmanager
async def _mcp(url: str) -> AsyncIterator[Ask]:
    """A session of the SDK's streamable HTTP client: one find_tables call per question."""
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(60, read=300)) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()

        async def ask(question: str) -> None:
            result = await session.call_tool("find_tables", {"question": question})
            if result.is_error:
                raise RuntimeError(result.content)

        yield ask


@contextlib.asynccontextmanager
async def _json(url: str) -> AsyncIterator[Ask]:
    """An HTTP client of the JSON API: one POST /v1/find_tables per question."""
    async with httpx2.AsyncClient(timeout=60) as http:

        async def ask(question: str) -> None:
            r = await http.post(f"{url}/v1/find_tables", json={"question": question})
            r.raise_for_status()

        yield ask


def measure(url: str, transport: str, clients: int, requests: int) -> dict[str, Any]:
    connect = functools.partial(_mcp if transport == "mcp" else _json, url)
    results: list[tuple[list[float], int]] = []

    async def run() -> None:
        async def one(i: int) -> None:
            results.append(await _client(connect, requests, i * 7))

        async with anyio.create_task_group() as tg:
            for i in range(clients):
                tg.start_soon(one, i)

    start = time.perf_counter()
    anyio.run(run)
    wall = time.perf_counter() - start
    latencies = [x for lat, _ in results for x in lat]
    return {
        "transport": transport,
        "clients": clients,
        "requests": len(latencies),
        "errors": sum(e for _, e in results),
        "p50_ms": 1000 * percentile(latencies, 50),
        "p99_ms": 1000 * percentile(latencies, 99),
        "questions_per_s": len(latencies) / wall,
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--requests", type=int, default=200, help="questions per client")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "idx"
        _save(index, demo_catalog())
        proc, url = _start(index)
        try:
            rows = [
                measure(url, transport, clients, args.requests)
                for transport in ("mcp", "json")
                for clients in (1, 8)
            ]
            stop = threading.Event()

            def resave() -> None:  # a reload every half second while 8 clients ask
                while not stop.wait(0.5):
                    _save(index, demo_catalog())

            saver = threading.Thread(target=resave)
            saver.start()
            try:
                row = measure(url, "json", 8, args.requests)
            finally:
                stop.set()
                saver.join()
            generation = httpx2.get(f"{url}/health").json()["generation"]
            rows.append({**row, "transport": "json, saved every 0.5 s", "reloads": generation - 1})
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
    print(f"{'transport':<26} {'clients':>7} {'p50 ms':>8} {'p99 ms':>8} {'q/s':>8} {'errors':>6}")
    for r in rows:
        print(
            f"{r['transport']:<26} {r['clients']:>7} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} "
            f"{r['questions_per_s']:>8.1f} {r['errors']:>6}"
            + (f"  ({r['reloads']} reloads)" if "reloads" in r else "")
        )
    write_json("serve.json", {"machine": machine(), "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
