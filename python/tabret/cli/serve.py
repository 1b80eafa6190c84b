"""``tabret serve``: a saved index as an MCP server (stdio, or streamable HTTP with ``--http``)
and, with ``--http``, a JSON HTTP API beside it (:mod:`tabret.serve`)."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn

from tabret.cli._common import add_reranker_argument, load_reranker, positive_int
from tabret.cli.query import MethodChoice
from tabret.serve.options import HttpOptions, check_options

if TYPE_CHECKING:
    from tabret.serve.service import IndexService

HELP = "serve a saved index to agents: an MCP server (stdio or HTTP) and a JSON HTTP API"
DESCRIPTION = (
    "Loads an index saved by `tabret index` and answers find_tables, describe_tables, join_path "
    "and list_databases: as an MCP server over stdio (how MCP clients launch servers), or with "
    "--http HOST:PORT as MCP streamable HTTP at /mcp plus a JSON API at /v1/<tool> (OpenAPI at "
    "/openapi.json, /health, /version). When the directory is saved again the server swaps to "
    "the new index between requests. Needs tabret[serve]."
)

TOKEN_VARIABLE = "TABRET_SERVE_TOKEN"


@dataclass(frozen=True)
class ServeOptions:
    index: str
    http: tuple[str, int] | None
    token: str | None
    pipeline: str | None
    embedder: str | None
    reload_interval: float
    #: A cross-encoder directory (--reranker): the scorer of every pipeline's rerank stage.
    reranker: str | None
    max_body: int
    rate: float
    burst: int


def host_port(text: str) -> tuple[str, int]:
    """An argparse type: ``HOST:PORT`` (``[::1]:8000`` for IPv6; port 0: any free one)."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"not HOST:PORT: {text!r} (e.g. 127.0.0.1:8000)")
    return host.strip("[]"), int(port)


def non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, not {value}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    defaults = HttpOptions()
    p.add_argument("index", metavar="INDEX_DIR", help="a directory written by `tabret index`")
    p.add_argument(
        "--http",
        metavar="HOST:PORT",
        type=host_port,
        help="serve MCP streamable HTTP at /mcp and the JSON API at /v1/ on this address "
        "(default: MCP over stdio); an address other than loopback needs --token",
    )
    p.add_argument(
        "--token",
        default=os.environ.get(TOKEN_VARIABLE) or None,
        help=f"the bearer token HTTP clients must send (default: ${TOKEN_VARIABLE})",
    )
    p.add_argument(
        "--pipeline",
        metavar="'FIRST > STAGE …'",
        help="what find_tables runs when a call names no pipeline, as `tabret query "
        "--pipeline` takes it (default: `tabret query`'s, the index's tuned or default pipeline)",
    )
    p.add_argument(
        "--embedder",
        help="the embedder the index was built with (default: the name saved in the index)",
    )
    add_reranker_argument(p)
    p.add_argument(
        "--reload-interval",
        type=non_negative,
        default=1.0,
        metavar="SECONDS",
        help="how often to check whether the index directory was saved again (default: 1; "
        "0: never reload)",
    )
    g = p.add_argument_group("HTTP bounds")
    g.add_argument(
        "--max-body",
        type=positive_int,
        default=defaults.max_body,
        metavar="BYTES",
        help=f"largest request body (default: {defaults.max_body})",
    )
    g.add_argument(
        "--rate",
        type=non_negative,
        default=defaults.rate,
        help=f"requests per second per client address (default: {defaults.rate:g}; 0: no bound)",
    )
    g.add_argument(
        "--burst",
        type=positive_int,
        default=defaults.burst,
        help=f"requests a client may make at once before --rate applies (default: "
        f"{defaults.burst})",
    )


def command(args: argparse.Namespace) -> int:
    return run(
        ServeOptions(
            index=args.index,
            http=args.http,
            token=args.token,
            pipeline=args.pipeline,
            embedder=args.embedder,
            reload_interval=args.reload_interval,
            reranker=args.reranker,
            max_body=args.max_body,
            rate=args.rate,
            burst=args.burst,
        )
    )


def run(o: ServeOptions) -> int:
    from tabret.serve.service import IndexService

    http = None
    if o.http:  # checked before the index is read
        host, port = o.http
        http = HttpOptions(host, port, o.token, o.max_body, o.rate, o.burst)
        check_options(http)
    if o.reranker is not None:  # a bad directory fails here, before the index is read
        load_reranker(o.reranker)
    logging.getLogger("tabret.serve").setLevel(logging.INFO)
    default = MethodChoice(pipeline=o.pipeline, reranker=o.reranker)
    service = IndexService(o.index, default=default, embedder=o.embedder)
    try:
        if o.reload_interval > 0:
            service.watch(o.reload_interval)
        if http is None:
            _serve_stdio(service)
        else:
            _serve_http(service, http)
        return 0
    finally:
        service.close()


def _serve_stdio(service: IndexService) -> None:
    from tabret.serve.mcp_server import build_mcp

    server = build_mcp(service)
    _say(f"{_loaded(service)}; MCP over stdio")
    signal.signal(signal.SIGTERM, _interrupt)
    server.run("stdio")


def _serve_http(service: IndexService, http: HttpOptions) -> None:
    from tabret.serve.http_api import build_app, open_socket, serve_http
    from tabret.serve.mcp_server import build_mcp

    app = build_app(service, build_mcp(service), http)
    sock = open_socket(http.host, http.port)
    host, port = sock.getsockname()[:2]
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    _say(f"{_loaded(service)}; MCP at {url}/mcp, JSON API at {url}/v1/ ({url}/openapi.json)")
    # uvicorn stops gracefully on SIGTERM, then raises it again with the handler it found:
    # this one, so the command ends as after any finished serve (exit 0)
    signal.signal(signal.SIGTERM, lambda signum, frame: None)
    serve_http(app, sock)
    _say("tabret serve: stopped")


def _loaded(service: IndexService) -> str:
    s = service.status()
    return (
        f"tabret serve: {s.tables} tables of {s.databases} databases from {s.path} "
        f"(embedder {s.embedder}; find_tables default: {s.default_pipeline})"
    )


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)  # stdout is the MCP stream over stdio


def _interrupt(signum: int, frame: object) -> NoReturn:
    """SIGTERM over stdio: stop as Ctrl-C does (the stdio transport has no signal handling)."""
    raise KeyboardInterrupt
