"""The options of ``tabret serve --http`` and their checks (no import of the ``serve`` extra:
the command line reads them before it is needed)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

__all__ = ["HttpOptions", "check_options", "is_loopback"]


@dataclass(frozen=True)
class HttpOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None  # required when host is not a loopback address
    max_body: int = 64 * 1024  # bytes of one request body
    rate: float = 100.0  # requests per second per client address (0: unbounded)
    burst: int = 200  # requests a client may make at once before the rate applies


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_options(o: HttpOptions) -> None:
    """:class:`ValueError` for options that must not serve: another address without a token."""
    if not is_loopback(o.host) and not o.token:
        raise ValueError(
            f"--http {o.host}:{o.port} is not a loopback address: anyone who reaches it could "
            "query the index; give a bearer token (--token or $TABRET_SERVE_TOKEN)"
        )
    if o.max_body < 1 or o.rate < 0 or o.burst < 1:
        raise ValueError("the body bound and the burst must be at least 1, the rate at least 0")
