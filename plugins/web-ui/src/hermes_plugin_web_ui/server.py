"""The HTTP server (aiohttp's, as the API server's): access control around the pages
(:mod:`pages`) and the chat's API (:mod:`chat`).

Every response carries a strict Content-Security-Policy (scripts and styles from this
server only, no inline code), so text a model or a tool wrote cannot run in the page even
if it slipped past escaping.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from urllib.parse import quote, urlsplit

from aiohttp import web

from hermes_plugin_web_ui.access import COOKIE, Access, LoginThrottle, Visitor, load_secret
from hermes_plugin_web_ui.settings import WebSettings
from hermes_sdk.addresses import is_loopback
from hermes_sdk.runtime import Runtime

__all__ = ["CSRF_HEADER", "VISITOR", "WebUi"]

log = logging.getLogger("hermes.web_ui")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
VISITOR: web.RequestKey[Visitor] = web.RequestKey("visitor", Visitor)
OPEN_PATHS = ("/login", "/static/", "/health")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "X-CSRF-Token"
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # "no-referrer" makes a form post's Origin "null"
    "Cache-Control": "no-store",
}


class WebUi:
    """The service: ``run(runtime)`` serves until cancelled."""

    def __init__(self, settings: WebSettings) -> None:
        self.settings = settings
        self.access = Access(load_secret(settings.home), settings.key, settings.login_seconds)
        self.throttle = LoginThrottle()
        self.bound_port: int | None = None
        self.ready = asyncio.Event()

    def app(self, runtime: Runtime) -> web.Application:
        from hermes_plugin_web_ui.chat import ChatApi
        from hermes_plugin_web_ui.pages import Pages

        app = web.Application(
            middlewares=[self._headers, self._guard], client_max_size=self.settings.max_body_bytes
        )
        pages = Pages(runtime, self)
        chat = ChatApi(runtime, pages)
        pages.add_routes(app.router)
        chat.add_routes(app.router)
        chat.attach(app)
        app.on_shutdown.append(lambda _app: chat.stop_all())
        return app

    async def run(self, runtime: Runtime) -> None:
        runner = web.AppRunner(
            self.app(runtime), access_log=None, handle_signals=False, handler_cancellation=True
        )
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.settings.host, self.settings.port)
            await site.start()
            addresses = runner.addresses
            self.bound_port = int(addresses[0][1]) if addresses else self.settings.port
            login = "login with WEB_UI_KEY" if self.settings.key else "no login (loopback only)"
            log.info("web ui on %s (%s)", self.url, login)
            self.ready.set()
            await asyncio.Event().wait()
        finally:
            self.ready.clear()
            await runner.cleanup()

    @property
    def url(self) -> str:
        host = self.settings.host
        shown = "127.0.0.1" if host in {"0.0.0.0", "::", ""} else host
        if ":" in shown:
            shown = f"[{shown}]"
        return f"http://{shown}:{self.bound_port or self.settings.port}/"

    # --- who is asking ----------------------------------------------------------------------

    def visitor(self, request: web.Request) -> Visitor | None:
        return self.access.read(request.cookies.get(COOKIE))

    def set_cookie(self, response: web.StreamResponse, visitor: Visitor) -> None:
        response.set_cookie(
            COOKIE,
            self.access.cookie_value(visitor),
            max_age=int(self.settings.login_seconds),
            httponly=True,
            samesite="Strict",
            secure=self.settings.secure_cookie,
            path="/",
        )

    def _host_allowed(self, request: web.Request) -> bool:
        """Without a key, only a Host this server answers to: a page elsewhere that points
        its own name at 127.0.0.1 (DNS rebinding) is refused."""
        if self.settings.key is not None:
            return True
        host = (urlsplit(f"//{request.host}").hostname or "").lower()
        return (
            is_loopback(host) or host in self.settings.allowed_hosts or host == self.settings.host
        )

    def _origin_allowed(self, request: web.Request) -> bool:
        """A browser names the page a request comes from: it must be this server."""
        origin = request.headers.get("Origin")
        if origin is None:  # not from a browser page (a script, curl): the token decides
            return True
        return urlsplit(origin).netloc.lower() == request.host.lower()

    # --- middlewares ------------------------------------------------------------------------

    @web.middleware
    async def _headers(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            response = exc
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        if isinstance(response, web.HTTPException) and response.status >= 300:
            raise response
        return response

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if not self._host_allowed(request):
            log.info("web ui: refused a request for host %r from %s", request.host, request.remote)
            return web.Response(status=421, text="this server does not answer to that host name")
        visitor = self.visitor(request)
        fresh = None
        if visitor is None and request.method in SAFE_METHODS:
            # A first visit: a cookie to carry the CSRF token (and, without a key, the login).
            visitor = fresh = self.access.new_visitor(logged_in=False)
        open_path = request.path == "/login" or request.path.startswith(OPEN_PATHS[1:])
        if not open_path and (visitor is None or not visitor.logged_in):
            if request.method in SAFE_METHODS and not request.path.startswith("/api/"):
                raise web.HTTPSeeOther(f"/login?next={quote(request.path_qs, safe='')}")
            log.info(
                "web ui: refused %s %s from %s: not logged in",
                request.method,
                request.path,
                request.remote,
            )
            return web.json_response({"error": "log in first"}, status=401)
        if request.method not in SAFE_METHODS:
            token = request.headers.get(CSRF_HEADER)
            if token is None and request.content_type == "application/x-www-form-urlencoded":
                token = str((await request.post()).get("csrf", "")) or None
            if not self.access.csrf_ok(visitor, token) or not self._origin_allowed(request):
                log.info(
                    "web ui: refused %s %s from %s: missing or wrong CSRF token",
                    request.method,
                    request.path,
                    request.remote,
                )
                return web.json_response(
                    {"error": "the request's CSRF token is missing or wrong: reload the page"},
                    status=403,
                )
        if visitor is not None:
            request[VISITOR] = visitor
        response = await handler(request)
        if fresh is not None and not response.prepared:
            self.set_cookie(response, fresh)
        return response
