"""The HTTP side of ``tabret serve --http``: one Starlette app (``tabret[serve]``) holding the MCP
server's streamable HTTP endpoint at ``/mcp`` and the same operations as a JSON API
(``POST /v1/<operation>``), with ``/openapi.json``, ``/health`` and ``/version``; served by
uvicorn, which stops gracefully on SIGTERM and Ctrl-C.

Guards, outermost first: a per-client rate bound (token bucket), the bearer token when one is
set (every path but ``/health``), and on a loopback address a ``Host`` check (the MCP endpoint
has the SDK's own). A JSON request body is bounded (``413``); bad input is a ``400`` with a
message."""

from __future__ import annotations

import dataclasses
import hmac
import json
import math
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from importlib.metadata import version
from typing import Any, get_type_hints

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from pydantic import TypeAdapter, ValidationError
from pydantic.json_schema import JsonSchemaMode
from starlette.applications import Starlette
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from tabret import __version__
from tabret._core import Error
from tabret.serve.options import HttpOptions, check_options, is_loopback
from tabret.serve.service import IndexService
from tabret.serve.tools import Operation, operations

__all__ = ["build_app", "open_socket", "openapi", "serve_http"]

#: Paths anyone may read without the token (a load balancer's probe).
OPEN_PATHS = frozenset({"/health"})
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]
BACKLOG = 2048  # uvicorn's


class BadRequest(ValueError):
    """A request the API refuses, with its status (400 unless said)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _validation_message(err: ValidationError) -> str:
    parts = [
        f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}"
        for e in err.errors(include_url=False)
    ]
    return "; ".join(parts)


async def _read_json(request: Request, max_body: int) -> dict[str, Any]:
    """The request's JSON object (an empty body: ``{}``), read no further than ``max_body``."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > max_body:
        raise BadRequest(f"the request body is over {max_body} bytes", 413)
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_body:
            raise BadRequest(f"the request body is over {max_body} bytes", 413)
    if not body.strip():
        return {}
    try:
        value = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise BadRequest(f"the request body is not JSON: {err}") from None
    if not isinstance(value, dict):
        raise BadRequest("the request body must be a JSON object of the operation's arguments")
    return value


class Endpoint:
    """One operation as ``POST /v1/<name>``: its arguments validated and the call made by
    pydantic from the operation's signature, in a worker thread."""

    def __init__(self, op: Operation, max_body: int) -> None:
        self.op = op
        self.name: str = op.__name__
        self.path = f"/v1/{self.name}"
        self.max_body = max_body
        self.arguments: TypeAdapter[Any] = TypeAdapter(op)
        self.result: TypeAdapter[Any] = TypeAdapter(get_type_hints(op)["return"])

    async def handle(self, request: Request) -> Response:
        try:
            body = await _read_json(request, self.max_body)
            result = await anyio.to_thread.run_sync(self.arguments.validate_python, body)
        except BadRequest as err:
            return _error(err.status, str(err))
        except ValidationError as err:
            return _error(400, _validation_message(err))
        except (ValueError, Error) as err:
            return _error(400, str(err))
        return JSONResponse(dataclasses.asdict(result))


def openapi(endpoints: list[Endpoint]) -> dict[str, Any]:
    """The OpenAPI 3.1 description of the JSON API, its schemas from the operations' types."""
    inputs: list[tuple[str, JsonSchemaMode, TypeAdapter[Any]]] = [
        (e.name, "validation", e.arguments) for e in endpoints
    ]
    inputs += [(f"{e.name}:result", "serialization", e.result) for e in endpoints]
    schemas, defs = TypeAdapter.json_schemas(inputs, ref_template="#/components/schemas/{model}")
    components = dict(defs.get("$defs", {}))
    error = {"type": "object", "properties": {"error": {"type": "string"}}}
    components["Error"] = error
    paths: dict[str, Any] = {}
    for e in endpoints:
        name = e.name
        paths[e.path] = {
            "post": {
                "operationId": name,
                "summary": " ".join((e.op.__doc__ or "").split()),
                "requestBody": {
                    "required": False,
                    "content": {"application/json": {"schema": schemas[(name, "validation")]}},
                },
                "responses": {
                    "200": {
                        "description": "the answer",
                        "content": {
                            "application/json": {
                                "schema": schemas[(f"{name}:result", "serialization")]
                            }
                        },
                    },
                    **{
                        code: {
                            "description": why,
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/Error"}
                                }
                            },
                        }
                        for code, why in (
                            ("400", "bad input: the message says what"),
                            ("401", "no or wrong bearer token"),
                            ("413", "request body too large"),
                            ("429", "rate bound reached: retry after the Retry-After seconds"),
                        )
                    },
                },
            }
        }
    for path, what in (("/health", "liveness"), ("/version", "versions and the index loaded")):
        paths[path] = {"get": {"summary": what, "responses": {"200": {"description": what}}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "tabret", "version": __version__},
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}, {}],
    }


class BearerToken:
    """Refuses (401) a request without ``Authorization: Bearer <token>``, except to the paths
    in :data:`OPEN_PATHS`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in OPEN_PATHS:
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                headers = {"WWW-Authenticate": 'Bearer realm="tabret"'}
                response = _error(401, "a bearer token is required", headers)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class RateBound:
    """A token bucket per client address: ``burst`` requests at once, then ``rate`` a second;
    beyond it 429 with ``Retry-After``."""

    def __init__(self, app: ASGIApp, rate: float, burst: int) -> None:
        self.app = app
        self.rate = rate
        self.burst = float(burst)
        self.buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, when)
        self.lock = threading.Lock()

    def wait(self, client: str) -> float:
        """Takes a token for ``client``: 0, or the seconds until one is there."""
        now = time.monotonic()
        with self.lock:
            tokens, when = self.buckets.get(client, (self.burst, now))
            tokens = min(self.burst, tokens + (now - when) * self.rate)
            if tokens >= 1:
                self.buckets[client] = (tokens - 1, now)
                return 0.0
            self.buckets[client] = (tokens, now)
            if len(self.buckets) > 10_000:  # forget the full buckets of clients gone quiet
                self.buckets = {c: b for c, b in self.buckets.items() if b[0] < self.burst}
            return (1 - tokens) / self.rate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.rate > 0:
            client = scope.get("client") or ("", 0)
            wait = self.wait(client[0])
            if wait > 0:
                headers = {"Retry-After": str(max(1, math.ceil(wait)))}
                response = _error(429, "too many requests", headers)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def build_app(service: IndexService, server: MCPServer[Any], o: HttpOptions) -> ASGIApp:
    """The one ASGI app: MCP at ``/mcp`` and the JSON API beside it, behind the guards."""
    check_options(o)
    endpoints = [Endpoint(op, o.max_body) for op in operations(service)]
    for endpoint in endpoints:
        server.custom_route(endpoint.path, methods=["POST"])(endpoint.handle)
    description = openapi(endpoints)
    _get(server, "/openapi.json", lambda: description)
    _get(server, "/health", lambda: {"status": "ok", "generation": service.status().generation})
    _get(server, "/version", lambda: _versions(service))
    app: Starlette = server.streamable_http_app(
        streamable_http_path="/mcp", host=o.host, max_request_body_size=o.max_body
    )
    guarded: ASGIApp = app
    if is_loopback(o.host):
        guarded = TrustedHostMiddleware(guarded, allowed_hosts=LOOPBACK_HOSTS)
    if o.token:
        guarded = BearerToken(guarded, o.token)
    return RateBound(guarded, o.rate, o.burst)


def _get(server: MCPServer[Any], path: str, answer: Callable[[], Any]) -> None:
    async def endpoint(request: Request) -> Response:
        return JSONResponse(answer())

    handler: Callable[[Request], Awaitable[Response]] = endpoint
    server.custom_route(path, methods=["GET"])(handler)


def _versions(service: IndexService) -> dict[str, Any]:
    return {
        "tabret": __version__,
        "mcp": version("mcp"),
        "index": dataclasses.asdict(service.status()),
    }


def open_socket(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free one), made before serving so that
    the address can be printed and a busy port fails before anything starts; connections made
    before the server is up wait in its backlog."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host.strip("[]"), port, type=socket.SOCK_STREAM
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as err:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {err.strerror}") from None
    return sock


def serve_http(app: ASGIApp, sock: socket.socket, graceful_timeout: int = 5) -> None:
    """Serves ``app`` on ``sock`` until SIGTERM or Ctrl-C (uvicorn's handlers: requests in
    flight finish, open MCP streams get ``graceful_timeout`` seconds)."""
    import uvicorn

    config = uvicorn.Config(
        app, log_level="warning", timeout_graceful_shutdown=graceful_timeout, lifespan="on"
    )
    uvicorn.Server(config).run(sockets=[sock])
