"""The JSON-over-HTTP client that the OpenAI-compatible LLM and embedder share (standard
library only): one POST with retries on connection errors, timeouts, 429 and 5xx.

Secrets stay where they belong:

* A redirect to another origin (scheme, host or port) is refused with the endpoint's error type,
  before anything is sent there: the API key (``Authorization``, a key in the URL or in
  ``headers``) only ever goes to the origin of ``base_url``. A 307/308 redirect within that
  origin is followed as the same POST (body and headers); a 301/302/303 is refused too, since
  following it would turn the POST into a GET whose answer is no completion.
* Credentials in ``base_url`` (``http://user:KEY@host/v1`` is sent as HTTP Basic
  authentication; ``?api-key=KEY`` stays in the query) are redacted in every message, in
  ``repr`` and in the public ``url``/``base_url``; the API key, the URL password and secret-
  looking query values are also scrubbed from any error text, including a server's echo.
* ``path`` goes after the path of ``base_url`` and before its query:
  ``http://h/v1?api-version=2`` + ``chat/completions`` is
  ``http://h/v1/chat/completions?api-version=2``.

Nothing a server does holds the caller or its memory without bound:

* ``timeout`` bounds each attempt as a whole (connecting, sending and reading the whole answer),
  not each socket operation: a server that drips its answer a byte at a time is cut off at
  ``timeout`` seconds like one that says nothing, and the attempt is retried as a timeout.
* ``total_timeout`` (optional) bounds the whole call, every attempt and every wait between
  them; without it a call ends within ``(max_retries + 1) * timeout`` plus the waits (each at
  most 60 s).
* An answer larger than ``max_response_bytes`` is refused (not retried) as soon as its
  ``Content-Length`` says so or, without one, as soon as that many bytes have been read; at most
  64 KiB of an error status's body is read (for the message).
"""

from __future__ import annotations

import base64
import http.client
import io
import json
import random
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from typing import IO, Any

__all__ = ["MIB", "JsonEndpoint", "Unsupported", "decode_json", "excerpt", "origin", "redact_url"]

MIB = 1024 * 1024
#: The most of an answer read at once, and of an error status's body read at all.
_CHUNK_BYTES = 64 * 1024

#: Query parameters whose values are secrets (matched in the lower-cased name).
_SECRET_PARAM = re.compile(
    r"key|token|secret|passw|pwd|auth|signature|^sig$|credential|session|cookie"
)
_REDACTED = "***"


def _split(url: str) -> urllib.parse.SplitResult:
    try:
        return urllib.parse.urlsplit(url)
    except ValueError:  # e.g. an invalid IPv6 literal
        return urllib.parse.SplitResult("", "", "", "", "")


def _netloc_parts(netloc: str) -> tuple[str, str]:
    """(userinfo, host[:port]) of a URL's netloc; userinfo is '' when there is none."""
    userinfo, at, hostport = netloc.rpartition("@")
    return (userinfo, hostport) if at else ("", netloc)


def _redact_query(query: str) -> str:
    parts = []
    for part in query.split("&"):
        name, eq, value = part.partition("=")
        if eq and value and _SECRET_PARAM.search(urllib.parse.unquote_plus(name).lower()):
            value = _REDACTED
        parts.append(f"{name}{eq}{value}")
    return "&".join(parts)


def redact_url(url: str) -> str:
    """``url`` fit to show: the userinfo (``user:password@``) and the values of secret-looking
    query parameters (``api-key``, ``key``, ``token``, ``secret``, ...) become ``***``; the
    fragment is dropped. Anything without ``scheme://host`` is not shown at all (it may be a
    key passed in the wrong place)."""
    parts = _split(url)
    if not parts.scheme or not parts.netloc:
        return f"<{len(url)} characters that are no URL, not shown>"
    userinfo, hostport = _netloc_parts(parts.netloc)
    netloc = f"{_REDACTED}@{hostport}" if userinfo else hostport
    return urllib.parse.urlunsplit(
        (parts.scheme, netloc, parts.path, _redact_query(parts.query), "")
    )


def origin(url: str) -> str:
    """``scheme://host:port`` of ``url`` (default port made explicit, host lower-cased): two
    URLs with the same origin reach the same server, with the same security."""
    parts = _split(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = {"http": 80, "https": 443}.get(scheme)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}" if port is not None else f"{scheme}://{host}"


def _secrets_of(url: str, api_key: str | None) -> list[str]:
    """The strings that must never be shown: the key, the URL's userinfo and password, the
    secret query values (raw and percent-decoded)."""
    parts = _split(url)
    found: list[str] = []
    if api_key:
        found.append(api_key)
    userinfo, _ = _netloc_parts(parts.netloc)
    if userinfo:
        found.append(userinfo)
        user, _, password = userinfo.partition(":")
        found.extend([password, urllib.parse.unquote(password)])
        if not password:  # http://KEY@host: the user name is the secret
            found.extend([user, urllib.parse.unquote(user)])
    for part in parts.query.split("&"):
        name, eq, value = part.partition("=")
        if eq and value and _SECRET_PARAM.search(urllib.parse.unquote_plus(name).lower()):
            found.extend([value, urllib.parse.unquote_plus(value)])
    # Longest first, so that a secret containing another is replaced whole.
    return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)


def scrub(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, _REDACTED)
    return text


class Unsupported(Exception):
    """The server does not offer what was asked (HTTP 404, 405 or 501, or a 400 about a missing
    chat template): raised by :meth:`JsonEndpoint.post` only when the caller asks."""


#: Statuses by which a server says it has no such endpoint or protocol.
_UNSUPPORTED = (404, 405, 501)


def _refuses(code: int, body: bytes) -> bool:
    text = body.decode("utf-8", errors="replace").lower()
    return code in _UNSUPPORTED or (code == 400 and "template" in text and "chat" in text)


class _RedirectRefused(Exception):
    def __init__(self, code: int, target: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.target = target
        self.reason = reason


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows only 307/308 within the origin of the first request, as the same POST; refuses
    everything else before a byte goes to the new location (see the module docstring)."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        home = origin(getattr(req, "tabret_origin", req.full_url))
        reason = ""
        if origin(newurl) != home:
            reason = "to another origin"
        elif code not in (307, 308):
            reason = "that would re-send the POST as a GET"
        if reason:
            fp.close()
            raise _RedirectRefused(code, newurl, reason)
        new = urllib.request.Request(
            newurl,
            data=req.data,
            headers=dict(req.headers),
            origin_req_host=req.origin_req_host,
            unverifiable=True,
            method=req.get_method(),
        )
        new.tabret_origin = home  # type: ignore[attr-defined]
        new.tabret_deadline = _deadline_of(req)  # type: ignore[attr-defined]
        return new

    # Python 3.10's handler does not route 308 to the redirect logic; 3.11's does.
    http_error_308 = urllib.request.HTTPRedirectHandler.http_error_302


def _deadline_of(req: urllib.request.Request) -> float:
    """The ``time.monotonic()`` by which ``req``'s attempt must be over (set by the caller)."""
    deadline: float = getattr(req, "tabret_deadline", float("inf"))
    return deadline


def _time_left(deadline: float) -> float:
    """Seconds until ``deadline``; ``TimeoutError`` once it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("timed out")
    return left


class _DeadlineReader(io.RawIOBase):
    """A socket read until a deadline: each read waits at most until then, so the whole answer,
    however slowly it comes, is read by the deadline or not at all."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._sock = sock
        self._raw = sock.makefile("rb", buffering=0)
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        self._sock.settimeout(_time_left(self._deadline))
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineSocket:
    """A connected socket whose sends and reads (through :meth:`makefile`) end by a deadline;
    everything else goes to the socket itself."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> IO[bytes]:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))

    def sendall(self, data: Any, *args: Any) -> None:
        self._sock.settimeout(_time_left(self._deadline))
        self._sock.sendall(data, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _DeadlineConnection(http.client.HTTPConnection):
    """An HTTP connection that connects, sends and reads by ``deadline``."""

    def __init__(self, *args: Any, deadline: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = deadline

    def connect(self) -> None:
        self.timeout = _time_left(self._deadline)
        super().connect()
        self.sock = _DeadlineSocket(self.sock, self._deadline)


class _DeadlineHTTPSConnection(_DeadlineConnection, http.client.HTTPSConnection):
    """:class:`_DeadlineConnection` over TLS (the deadline wraps the TLS socket)."""


class _DeadlineHTTPHandler(urllib.request.HTTPHandler):
    """Opens ``http://`` requests with a :class:`_DeadlineConnection`."""

    def do_open(self, http_class: Any, req: urllib.request.Request, **kwargs: Any) -> Any:
        connection: Any = _DeadlineConnection
        return super().do_open(connection, req, deadline=_deadline_of(req), **kwargs)


class _DeadlineHTTPSHandler(urllib.request.HTTPSHandler):
    """Opens ``https://`` requests with a :class:`_DeadlineHTTPSConnection`."""

    def do_open(self, http_class: Any, req: urllib.request.Request, **kwargs: Any) -> Any:
        connection: Any = _DeadlineHTTPSConnection
        return super().do_open(connection, req, deadline=_deadline_of(req), **kwargs)


class _TooLarge(Exception):
    """An answer over the size limit (``size``: what ``Content-Length`` declared, if it did)."""

    def __init__(self, size: int | None) -> None:
        super().__init__(size)
        self.size = size


def _read_bounded(response: IO[bytes], limit: int) -> bytes:
    """The whole body of ``response``, read in chunks; :class:`_TooLarge` as soon as it is known
    to exceed ``limit`` bytes (by its ``Content-Length`` or by what has been read)."""
    declared = _content_length(response)
    if declared is not None and declared > limit:
        raise _TooLarge(declared)
    chunks: list[bytes] = []
    total = 0
    while chunk := response.read(_CHUNK_BYTES):
        total += len(chunk)
        if total > limit:
            raise _TooLarge(None)
        chunks.append(chunk)
    return b"".join(chunks)


def _content_length(response: IO[bytes]) -> int | None:
    headers = getattr(response, "headers", None)
    value = headers.get("Content-Length") if headers is not None else None
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class JsonEndpoint:
    """``POST url`` with a JSON body. ``error`` is the exception type raised on failure (its
    message names the URL, with secrets redacted, the status and the start of the body).
    ``timeout``, ``total_timeout`` and ``max_response_bytes`` bound the time and memory a call
    takes (see the module docstring)."""

    def __init__(
        self,
        base_url: str,
        path: str,
        *,
        error: type[Exception],
        api_key: str | None = None,
        timeout: float = 60.0,
        total_timeout: float | None = None,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_response_bytes: int = 16 * MIB,
        headers: Mapping[str, str] | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> None:
        parts = _split(base_url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"base_url must be an http:// or https:// URL (e.g. http://localhost:8000/v1), "
                f"not {redact_url(base_url)!r}"
            )
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, not {timeout}")
        if total_timeout is not None and total_timeout <= 0:
            raise ValueError(f"total_timeout must be positive or None, not {total_timeout}")
        if max_response_bytes < 1:
            raise ValueError(f"max_response_bytes must be >= 1, not {max_response_bytes}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, not {max_retries}")
        if backoff < 0:
            raise ValueError(f"backoff must be >= 0, not {backoff}")
        try:
            parts.port  # noqa: B018 - validates the port
        except ValueError:
            raise ValueError(f"base_url has an invalid port: {redact_url(base_url)!r}") from None
        userinfo, hostport = _netloc_parts(parts.netloc)
        if userinfo and api_key:
            raise ValueError(
                f"base_url {redact_url(base_url)!r} carries credentials and api_key is given "
                "too: give one of them"
            )
        full_path = f"{parts.path.rstrip('/')}/{path.lstrip('/')}"
        # What is sent: the path before the query, no userinfo (it becomes an Authorization
        # header), no fragment.
        self._url = urllib.parse.urlunsplit((parts.scheme, hostport, full_path, parts.query, ""))
        #: ``base_url`` without a trailing slash, secrets redacted (fit to show and log).
        self.base_url = redact_url(
            urllib.parse.urlunsplit(
                (parts.scheme, parts.netloc, parts.path.rstrip("/"), parts.query, "")
            )
        )
        #: The URL posted to, secrets redacted (fit to show and log).
        self.url = redact_url(
            urllib.parse.urlunsplit((parts.scheme, parts.netloc, full_path, parts.query, ""))
        )
        self.error = error
        self.timeout = timeout
        self.total_timeout = total_timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_response_bytes = max_response_bytes
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        elif userinfo:
            user, _, password = userinfo.partition(":")
            pair = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}"
            token = base64.b64encode(pair.encode("utf-8")).decode("ascii")
            self._headers["Authorization"] = f"Basic {token}"
        self._headers.update(headers or {})
        self._secrets = sorted(
            {*_secrets_of(base_url, api_key), *_header_secrets(self._headers)},
            key=len,
            reverse=True,
        )
        # None: the environment's proxies (http_proxy, no_proxy, ...); {}: always direct.
        handler = urllib.request.ProxyHandler(None if proxies is None else dict(proxies))
        self._opener = urllib.request.build_opener(
            handler, _SameOriginRedirects(), _DeadlineHTTPHandler(), _DeadlineHTTPSHandler()
        )

    def __repr__(self) -> str:
        return f"JsonEndpoint({self.url!r})"

    def _fail(self, message: str) -> Exception:
        return self.error(scrub(message, self._secrets))

    def post(
        self,
        body: Mapping[str, Any],
        what: str,
        cancel: threading.Event | None = None,
        *,
        unsupported: bool = False,
    ) -> bytes:
        """The response body; ``what`` names the request in the final error ("model 'm'").
        With ``unsupported``, a server that says it has no such endpoint raises
        :class:`Unsupported` instead of the endpoint's error."""
        data = json.dumps(body).encode("utf-8")
        call_deadline = time.monotonic() + (self.total_timeout or float("inf"))
        last = "no attempt made"
        attempts = 0
        while True:
            if cancel is not None and cancel.is_set():
                raise self._fail(f"{self.url}: cancelled (another request of the batch failed)")
            delay: float | None = None
            # A final failure is raised after the ``except`` clause, so that no exception that
            # holds the real URL (urllib's HTTPError keeps it) rides along as __context__.
            fatal: str | None = None
            attempts += 1
            try:
                request = self._request(
                    self._url, min(time.monotonic() + self.timeout, call_deadline), data
                )
                with self._opener.open(request, timeout=self.timeout) as response:
                    return _read_bounded(response, self.max_response_bytes)
            except _RedirectRefused as err:
                fatal = (
                    f"{self.url}: refused to follow an HTTP {err.code} redirect {err.reason} "
                    f"({origin(err.target)}); credentials are only sent to "
                    f"{origin(self._url)}: set base_url to the new location if you trust it"
                )
            except _TooLarge as err:
                fatal = self._too_large(err)
            except urllib.error.HTTPError as err:
                body_read = _read_body(err)
                if unsupported and _refuses(err.code, body_read):
                    raise Unsupported(f"HTTP {err.code}") from None
                last = f"HTTP {err.code} {err.reason}: {excerpt(body_read)}"
                if err.code != 429 and not 500 <= err.code < 600:
                    fatal = f"{self.url}: {last} (not retried)"
                delay = _retry_after(err.headers.get("Retry-After") if err.headers else None)
            except (urllib.error.URLError, http.client.HTTPException, OSError) as err:
                last = self._reason(err)
            if fatal is not None:
                raise self._fail(fatal)
            wait_s = self._wait_before(attempts, delay)
            out_of_time = wait_s is not None and time.monotonic() + wait_s >= call_deadline
            if wait_s is None or out_of_time:
                break
            if cancel is None:
                time.sleep(wait_s)
            else:
                cancel.wait(wait_s)
        within = f" within total_timeout={self.total_timeout:g} s" if out_of_time else ""
        raise self._fail(
            f"{self.url}: {what} failed after {attempts} attempts{within}; last error: {last}"
        )

    def _request(
        self, url: str, deadline: float, data: bytes | None = None
    ) -> urllib.request.Request:
        """A request of this endpoint (POST with ``data``, else GET) whose attempt must be over
        by ``deadline`` (``time.monotonic()``)."""
        headers = (
            self._headers
            if data is not None
            else {k: v for k, v in self._headers.items() if k != "Content-Type"}
        )
        request = urllib.request.Request(
            url, data=data, headers=headers, method="POST" if data is not None else "GET"
        )
        request.tabret_deadline = deadline  # type: ignore[attr-defined]
        return request

    def _wait_before(self, attempts: int, delay: float | None) -> float | None:
        """Seconds to wait before the next attempt after ``attempts`` of them (the server's
        ``delay`` if longer, at most 60 s), or ``None`` when none is left."""
        if attempts > self.max_retries:
            return None
        wait_s = self.backoff * 2.0 ** (attempts - 1) * (1.0 + 0.1 * random.random())
        return min(60.0, max(wait_s, delay or 0.0))

    def _reason(self, err: Exception) -> str:
        """What went wrong in one attempt, for the final message."""
        reason = err.reason if isinstance(err, urllib.error.URLError) else err
        if isinstance(reason, TimeoutError):
            return f"TimeoutError: no whole answer within timeout={self.timeout:g} s"
        return reason if isinstance(reason, str) else f"{type(reason).__name__}: {reason}"

    def _too_large(self, err: _TooLarge) -> str:
        size = f" (Content-Length: {err.size} bytes)" if err.size is not None else ""
        return (
            f"{self.url}: the answer is larger than max_response_bytes="
            f"{self.max_response_bytes} bytes{size}; not read further, not retried"
        )

    def get_json(self, path: str) -> object | None:
        """``GET`` ``path`` at the origin of ``base_url`` (e.g. ``/props``), once, without
        retries: the parsed JSON, or ``None`` for any failure (a probe, never an error)."""
        parts = _split(self._url)
        url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))
        try:
            request = self._request(url, time.monotonic() + self.timeout)
            with self._opener.open(request, timeout=self.timeout) as response:
                parsed: object = decode_json(_read_bounded(response, self.max_response_bytes))
                return parsed
        except (_RedirectRefused, _TooLarge, ValueError):
            return None
        except (urllib.error.URLError, http.client.HTTPException, OSError):
            return None

    def scrub(self, text: str) -> str:
        """``text`` with this endpoint's secrets replaced by ``***`` (for callers' messages that
        quote a response body)."""
        return scrub(text, self._secrets)


def _header_secrets(headers: Mapping[str, str]) -> list[str]:
    """Values of caller-given headers that carry credentials (``Authorization``, ``api-key``,
    ``x-api-key``, ...), and the token part of ``Bearer``/``Basic`` values."""
    found = []
    for name, value in headers.items():
        if _SECRET_PARAM.search(name.lower()) and value:
            found.append(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                found.append(token)
    return [s for s in found if len(s) >= 4]


def _read_body(err: urllib.error.HTTPError) -> bytes:
    """The start of an error status's body (for the message), at most 64 KiB of it."""
    try:
        return err.read(_CHUNK_BYTES)
    except (OSError, http.client.HTTPException):
        return b""


def decode_json(payload: bytes) -> Any:
    """``payload`` as JSON; ``ValueError`` (whose message says why) for anything that is not:
    bytes that are not UTF-8, invalid JSON, nesting too deep for the parser."""
    try:
        parsed = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{type(err).__name__}: {err}") from None
    except RecursionError:
        raise ValueError("nested too deeply to parse") from None
    return parsed


def excerpt(payload: bytes, limit: int = 300) -> str:
    text = " ".join(payload.decode("utf-8", errors="replace").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
