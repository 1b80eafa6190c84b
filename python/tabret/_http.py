"""The JSON-over-HTTP client that the OpenAI-compatible LLM and embedder share (standard
library only): one POST with retries on connection errors, timeouts, 429 and 5xx."""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

__all__ = ["JsonEndpoint", "excerpt"]


class JsonEndpoint:
    """``POST url`` with a JSON body. ``error`` is the exception type raised on failure (its
    message names the URL, the status and the start of the body)."""

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
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"base_url must be an http:// or https:// URL (e.g. http://localhost:8000/v1), "
                f"not {base_url!r}"
            )
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, not {timeout}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, not {max_retries}")
        if backoff < 0:
            raise ValueError(f"backoff must be >= 0, not {backoff}")
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/{path}"
        self.error = error
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._headers.update(headers or {})
        # None: the environment's proxies (http_proxy, no_proxy, ...); {}: always direct.
        handler = urllib.request.ProxyHandler(None if proxies is None else dict(proxies))
        self._opener = urllib.request.build_opener(handler)

    def post(
        self, body: Mapping[str, Any], what: str, cancel: threading.Event | None = None
    ) -> bytes:
        """The response body; ``what`` names the request in the final error ("model 'm'")."""
        data = json.dumps(body).encode("utf-8")
        last = "no attempt made"
        for attempt in range(self.max_retries + 1):
            if cancel is not None and cancel.is_set():
                raise self.error(f"{self.url}: cancelled (another request of the batch failed)")
            delay: float | None = None
            try:
                request = urllib.request.Request(
                    self.url, data=data, headers=self._headers, method="POST"
                )
                with self._opener.open(request, timeout=self.timeout) as response:
                    return bytes(response.read())
            except urllib.error.HTTPError as err:
                last = f"HTTP {err.code} {err.reason}: {excerpt(_read_body(err))}"
                if err.code != 429 and not 500 <= err.code < 600:
                    raise self.error(f"{self.url}: {last} (not retried)") from None
                delay = _retry_after(err.headers.get("Retry-After") if err.headers else None)
            except (urllib.error.URLError, http.client.HTTPException, OSError) as err:
                reason = err.reason if isinstance(err, urllib.error.URLError) else err
                last = reason if isinstance(reason, str) else f"{type(reason).__name__}: {reason}"
            if attempt < self.max_retries:
                wait_s = self.backoff * 2**attempt * (1.0 + 0.1 * random.random())
                wait_s = min(60.0, max(wait_s, delay or 0.0))
                if cancel is None:
                    time.sleep(wait_s)
                else:
                    cancel.wait(wait_s)
        raise self.error(
            f"{self.url}: {what} failed after {self.max_retries + 1} attempts; last error: {last}"
        )


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
