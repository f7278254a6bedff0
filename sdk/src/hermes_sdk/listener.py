"""One HTTP listener that several platforms share (webhooks, Slack's Events API), on aiohttp,
and the HMAC check such requests are signed with.

The gateway holds one :class:`SharedListener` (``gateway.http_host`` / ``http_port``): a
platform asks for a path prefix through :meth:`~hermes_sdk.platform.PlatformHost.http_route`
while its ``run`` lasts, so one port, one proxy rule and one firewall opening serve them all.
The listener binds when the first prefix is asked for: a gateway without such a platform
opens no port.

Importing this imports aiohttp (``hermes-sdk[http]``).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from hermes_sdk.platform import PlatformNotConfigured

__all__ = ["Handler", "SharedListener", "signature_matches"]

log = logging.getLogger("hermes.http")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
MAX_BODY_BYTES = 4 * 1024 * 1024
"""A request body larger than this is refused (413) before any handler reads it (Meta's
WhatsApp webhooks may carry up to 3 MB)."""


class SharedListener:
    """Path prefixes, each served by the platform that asked for it, on one host and port
    (``port`` 0 picks a free one)."""

    def __init__(self, host: str, port: int, *, setting: str) -> None:
        self.host = host
        self.port = port
        self._setting = setting
        self._routes: dict[str, tuple[str, Handler]] = {}  # prefix -> (owner, handler)
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def route(self, owner: str, prefix: str, handler: Handler) -> str:
        """Serve requests whose path starts with ``prefix`` with ``handler`` until
        :meth:`release` of ``owner``; returns the listener's base URL."""
        if not prefix.startswith("/"):
            raise ValueError(f"an HTTP path prefix starts with '/', not {prefix!r}")
        taken = self._routes.get(prefix)
        if taken is not None and taken[0] != owner:
            raise PlatformNotConfigured(f"{prefix} is already served by {taken[0]}")
        self._routes[prefix] = (owner, handler)
        if self._runner is None:
            await self._start()
        return self.url

    def release(self, owner: str) -> None:
        """Stop serving ``owner``'s prefixes (its ``run`` ended)."""
        for prefix in [p for p, (who, _) in self._routes.items() if who == owner]:
            del self._routes[prefix]

    async def _start(self) -> None:
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise PlatformNotConfigured(
                f"cannot listen on {self.host}:{self.port} ({exc.strerror or exc}); set "
                f"{self._setting} to a free port"
            ) from None
        server = site._server  # aiohttp exposes the bound socket only here
        sockets = getattr(server, "sockets", None) or ()
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        self._runner = runner
        log.info("HTTP listener on %s", self.url)

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        matches = [p for p in self._routes if path.startswith(p)]
        if not matches:
            return web.json_response({"error": f"nothing is served at {path}"}, status=404)
        _, handler = self._routes[max(matches, key=len)]
        return await handler(request)

    async def close(self) -> None:
        runner, self._runner = self._runner, None
        self._routes.clear()
        if runner is not None:
            await runner.cleanup()


def signature_matches(secret: str, body: bytes, signature: str, prefix: str = "sha256=") -> bool:
    """Whether ``signature`` is ``prefix`` + the hex HMAC-SHA256 of ``body`` under ``secret``
    (GitHub's ``X-Hub-Signature-256`` form), compared in constant time."""
    if not secret or not signature.startswith(prefix):
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest().encode()
    given = signature[len(prefix) :].strip().lower().encode("utf-8", "replace")
    return hmac.compare_digest(expected, given)
