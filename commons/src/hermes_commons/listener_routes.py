"""The public address a service calls a platform back at (a webhook, a button's callback,
a Chat app's endpoint), checked as a setting: an http(s) URL whose path is the route on the
gateway's shared HTTP listener. One check, one wording, for every platform that has one."""

from __future__ import annotations

from urllib.parse import urlsplit

from hermes_sdk.platform import PlatformNotConfigured

__all__ = ["route_of"]


def route_of(url: str, setting: str, what: str, example: str) -> str:
    """The listener path ``url`` names; :class:`PlatformNotConfigured` (one line: ``setting``
    is ``what``, as ``example``) for anything but an http(s) URL with a host, no query and
    a path of its own (the listener is shared)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise PlatformNotConfigured(f"{setting} is {what}, as {example} (no query), not {url!r}")
    path = "/" + parts.path.strip("/")
    if path == "/":
        raise PlatformNotConfigured(
            f"{setting} needs a path of its own, as {example}: the gateway's listener is "
            "shared with the other platforms"
        )
    return path
