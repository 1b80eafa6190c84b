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
"""

from __future__ import annotations

import base64
import http.client
import json
import random
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from typing import IO, Any

__all__ = ["JsonEndpoint", "Unsupported", "excerpt", "origin", "redact_url"]

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
        return new

    # Python 3.10's handler does not route 308 to the redirect logic; 3.11's does.
    http_error_308 = urllib.request.HTTPRedirectHandler.http_error_302


class JsonEndpoint:
    """``POST url`` with a JSON body. ``error`` is the exception type raised on failure (its
    message names the URL, with secrets redacted, the status and the start of the body)."""

    def __init__(
        self,
        base_url: str,
        path: str,
        *,
        error: type[Exception],
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 0.5,
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
        self.max_retries = max_retries
        self.backoff = backoff
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
        self._opener = urllib.request.build_opener(handler, _SameOriginRedirects())

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
        last = "no attempt made"
        for attempt in range(self.max_retries + 1):
            if cancel is not None and cancel.is_set():
                raise self._fail(f"{self.url}: cancelled (another request of the batch failed)")
            delay: float | None = None
            # A final failure is raised after the ``except`` clause, so that no exception that
            # holds the real URL (urllib's HTTPError keeps it) rides along as __context__.
            fatal: str | None = None
            try:
                request = urllib.request.Request(
                    self._url, data=data, headers=self._headers, method="POST"
                )
                with self._opener.open(request, timeout=self.timeout) as response:
                    return bytes(response.read())
            except _RedirectRefused as err:
                fatal = (
                    f"{self.url}: refused to follow an HTTP {err.code} redirect {err.reason} "
                    f"({origin(err.target)}); credentials are only sent to "
                    f"{origin(self._url)}: set base_url to the new location if you trust it"
                )
            except urllib.error.HTTPError as err:
                body_read = _read_body(err)
                if unsupported and _refuses(err.code, body_read):
                    raise Unsupported(f"HTTP {err.code}") from None
                last = f"HTTP {err.code} {err.reason}: {excerpt(body_read)}"
                if err.code != 429 and not 500 <= err.code < 600:
                    fatal = f"{self.url}: {last} (not retried)"
                delay = _retry_after(err.headers.get("Retry-After") if err.headers else None)
            except (urllib.error.URLError, http.client.HTTPException, OSError) as err:
                reason = err.reason if isinstance(err, urllib.error.URLError) else err
                last = reason if isinstance(reason, str) else f"{type(reason).__name__}: {reason}"
            if fatal is not None:
                raise self._fail(fatal)
            if attempt < self.max_retries:
                wait_s = self.backoff * 2**attempt * (1.0 + 0.1 * random.random())
                wait_s = min(60.0, max(wait_s, delay or 0.0))
                if cancel is None:
                    time.sleep(wait_s)
                else:
                    cancel.wait(wait_s)
        raise self._fail(
            f"{self.url}: {what} failed after {self.max_retries + 1} attempts; last error: {last}"
        )

    def get_json(self, path: str) -> object | None:
        """``GET`` ``path`` at the origin of ``base_url`` (e.g. ``/props``), once, without
        retries: the parsed JSON, or ``None`` for any failure (a probe, never an error)."""
        parts = _split(self._url)
        url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))
        headers = {k: v for k, v in self._headers.items() if k != "Content-Type"}
        try:
            request = urllib.request.Request(url, headers=headers, method="GET")
            with self._opener.open(request, timeout=self.timeout) as response:
                parsed: object = json.loads(response.read().decode("utf-8"))
                return parsed
        except (_RedirectRefused, urllib.error.URLError, http.client.HTTPException, OSError):
            return None
        except (UnicodeDecodeError, json.JSONDecodeError):
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
    try:
        return err.read()
    except (OSError, http.client.HTTPException):
        return b""


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
