"""An HTTP listener that a platform opens for as long as its ``run`` lasts (webhooks, Slack's
Events API), on aiohttp, and the HMAC check such requests are signed with.

Importing this imports aiohttp (``hermes-sdk[http]``).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager

from aiohttp import web

from hermes_sdk.platform import PlatformNotConfigured

__all__ = ["Handler", "listening", "signature_matches"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
MAX_BODY_BYTES = 1024 * 1024
"""A request body larger than this is refused (413) before any handler reads it."""


@asynccontextmanager
async def listening(
    routes: Sequence[tuple[str, str, Handler]], host: str, port: int, *, owner: str
) -> AsyncIterator[int]:
    """Serve ``routes`` (method, path, handler) on ``host``:``port`` while the block runs;
    yields the bound port (``port`` 0 picks a free one). A port already taken is a
    :class:`PlatformNotConfigured` naming ``owner``'s setting to change."""
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    for method, path, handler in routes:
        app.router.add_route(method, path, handler)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as exc:
            raise PlatformNotConfigured(
                f"cannot listen on {host}:{port} ({exc.strerror or exc}); set {owner}.port "
                "to a free port"
            ) from None
        server = site._server
        sockets = getattr(server, "sockets", None) or ()
        yield int(sockets[0].getsockname()[1]) if sockets else port
    finally:
        await runner.cleanup()


def signature_matches(secret: str, body: bytes, signature: str, prefix: str = "sha256=") -> bool:
    """Whether ``signature`` is ``prefix`` + the hex HMAC-SHA256 of ``body`` under ``secret``
    (GitHub's ``X-Hub-Signature-256`` form), compared in constant time."""
    if not secret or not signature.startswith(prefix):
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest().encode()
    given = signature[len(prefix) :].strip().lower().encode("utf-8", "replace")
    return hmac.compare_digest(expected, given)
