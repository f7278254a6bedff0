"""Network addresses: which ones only this machine can reach. A server that refuses to run
without a key on any other address (an HTTP API, a web UI, a mail server in plain text)
asks here, so they all agree on what "loopback" means."""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback", "loopback_host_header"]

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})


def is_loopback(host: str) -> bool:
    """True for ``localhost``, 127.0.0.0/8 and ``::1`` (bracketed or not). Any other name
    is not: a name may resolve anywhere, and 0.0.0.0 means every interface."""
    host = host.strip().lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def loopback_host_header(host: str) -> bool:
    """Whether an HTTP ``Host`` header (``127.0.0.1:8642``, ``[::1]:80``, ``localhost``)
    names this machine by a loopback name or address. A server without a key answers only
    those: a page elsewhere that points its own name at 127.0.0.1 (DNS rebinding) sends its
    own name, and is refused."""
    from urllib.parse import urlsplit

    try:
        name = urlsplit(f"//{host}").hostname or ""
    except ValueError:
        return False
    return is_loopback(name)
