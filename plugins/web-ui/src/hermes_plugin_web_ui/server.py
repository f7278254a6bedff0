"""The HTTP server (aiohttp's, as the API server's): access control around the pages
(:mod:`pages`) and the chat's API (:mod:`chat`).

Every response carries a strict Content-Security-Policy (scripts and styles from this
server only, no inline code), so text a model or a tool wrote cannot run in the page even
if it slipped past escaping.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import secrets
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import quote, urlsplit

from aiohttp import web
from markupsafe import escape

from hermes_commons.addresses import is_loopback
from hermes_commons.files import atomic_write_text
from hermes_commons.throttle import LoginThrottle
from hermes_plugin_web_ui.access import (
    COOKIE,
    VISITOR,
    Access,
    Visitor,
    load_secret,
)
from hermes_plugin_web_ui.settings import WebSettings
from hermes_sdk.runtime import Runtime

__all__ = ["CSRF_HEADER", "WebUi"]

log = logging.getLogger("hermes.web_ui")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
URL_FILE = "web-ui/login-url"
OPEN_PATHS = frozenset({"/login", "/health"})
"""What anyone may fetch, with the stylesheet and script under /static/."""
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
        self.login_token = None if settings.key else secrets.token_urlsafe(24)
        """Without WEB_UI_KEY, the key of this run: it is in the URL ``hermes web`` prints."""
        key = settings.key or self.login_token or ""
        self.access = Access(load_secret(settings.home), key, settings.login_seconds)
        self.throttle = LoginThrottle()
        self.bound_port: int | None = None
        self.ready = asyncio.Event()
        self._own_names: frozenset[str] = frozenset()
        """This machine's names, as a browser on the network may type them (looked up in a
        thread when serving starts: a slow resolver never holds a request)."""

    def app(self, runtime: Runtime) -> web.Application:
        from hermes_plugin_web_ui.chat import ChatApi
        from hermes_plugin_web_ui.pages import Pages

        app = web.Application(
            middlewares=[self._headers, self._guard], client_max_size=self.settings.max_body_bytes
        )
        pages = Pages(runtime, self)
        chat = ChatApi(runtime)
        pages.add_routes(app.router)

        async def list_panels(_app: web.Application) -> None:
            await pages.dashboard.listed()

        app.on_startup.append(list_panels)
        chat.add_routes(app.router)
        chat.attach(app)
        app.on_shutdown.append(lambda _app: chat.close())
        return app

    async def run(self, runtime: Runtime) -> None:
        runner = web.AppRunner(
            self.app(runtime), access_log=None, handle_signals=False, handler_cancellation=True
        )
        await runner.setup()
        self._own_names = await asyncio.to_thread(_machine_names)
        try:
            site = web.TCPSite(runner, self.settings.host, self.settings.port)
            await site.start()
            addresses = runner.addresses
            self.bound_port = int(addresses[0][1]) if addresses else self.settings.port
            login = "log in with WEB_UI_KEY" if self.settings.key else f"open {self._url_file}"
            log.info("web ui on %s (%s)", self.url, login)
            if self.login_token is not None:
                atomic_write_text(self._url_file, self.login_url + "\n", mode=0o600)
            self.ready.set()
            await asyncio.Event().wait()
        finally:
            self.ready.clear()
            if self.login_token is not None:
                self._url_file.unlink(missing_ok=True)
            await runner.cleanup()

    @property
    def _url_file(self) -> Path:
        """Where a gateway-hosted UI without a key leaves its login URL (0600)."""
        return Path(self.settings.home) / URL_FILE

    @property
    def url(self) -> str:
        host = self.settings.host
        shown = "127.0.0.1" if host in {"0.0.0.0", "::", ""} else host
        if ":" in shown:
            shown = f"[{shown}]"
        return f"http://{shown}:{self.bound_port or self.settings.port}/"

    @property
    def login_url(self) -> str:
        """The URL to open: with this run's token when there is no WEB_UI_KEY."""
        if self.login_token is None:
            return self.url
        return f"{self.url}login?token={self.login_token}"

    # --- who is asking ----------------------------------------------------------------------

    def visitor(self, request: web.Request) -> Visitor | None:
        return self.access.read(request.cookies.get(COOKIE))

    def set_cookie(self, response: web.StreamResponse, visitor: Visitor) -> None:
        response.set_cookie(
            COOKIE,
            self.access.cookie_value(visitor),
            max_age=int(self.settings.login_seconds),
            httponly=True,
            # Lax: a link from elsewhere arrives logged in (Strict sent no cookie, and the page
            # then replaced the login); posts from elsewhere still carry none, and need the
            # CSRF token besides.
            samesite="Lax",
            secure=self.settings.secure_cookie,
            path="/",
        )

    def _named(self, host: str) -> str | None:
        try:
            return (urlsplit(f"//{host}").hostname or "").lower().rstrip(".")
        except ValueError:  # a malformed Host header (an unclosed "[")
            return None

    def _listed_host(self, name: str) -> bool:
        return (
            name in self.settings.allowed_hosts or name == self.settings.host or (is_loopback(name))
        )

    def _host_allowed(self, request: web.Request) -> bool:
        """Only a Host this server answers to. Without a key (loopback only): loopback
        names and ``allowed_hosts``. With a key, also an IP address it was reached by (a
        browser that typed an address rebound no name) and this machine's own names. A
        page elsewhere that points its own name at this server (DNS rebinding) is refused,
        with a key or without; so is 0.0.0.0."""
        name = self._named(request.host)
        if not name or name in {"0.0.0.0", "::"}:
            return False
        if self._listed_host(name):
            return True
        if self.settings.key is None:
            return False
        return _is_address(name) or name in self._own_names

    def _origin_allowed(self, request: web.Request) -> bool:
        """A browser names the page a request comes from: it must be this server (by the
        Host it was asked for, or a name in ``allowed_hosts``, as behind a proxy)."""
        origin = request.headers.get("Origin")
        if origin is None:  # not from a browser page (a script, curl): the token decides
            return True
        netloc = urlsplit(origin).netloc.lower()
        if netloc == request.host.lower():
            return True
        name = self._named(netloc)
        return bool(self.settings.allowed_hosts) and name in self.settings.allowed_hosts

    # --- middlewares ------------------------------------------------------------------------

    @web.middleware
    async def _headers(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            response = await handler(request)
        except web.HTTPException as exc:  # a redirect or an error page: headers too
            exc.headers.update({k: v for k, v in SECURITY_HEADERS.items() if k not in exc.headers})
            raise
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if not self._host_allowed(request):
            log.info("web ui: refused a request for host %r from %s", request.host, request.remote)
            return web.Response(
                status=421,
                text="this server does not answer to that host name (behind a proxy, list "
                "the name in web_ui.allowed_hosts)",
            )
        visitor = self.visitor(request)
        fresh = None
        if visitor is None and request.method in SAFE_METHODS:
            # A first visit: a cookie to carry the CSRF token (and, without a key, the login).
            visitor = fresh = self.access.new_visitor(logged_in=False)
        open_path = request.path in OPEN_PATHS or request.path.startswith("/static/")
        if not open_path and (visitor is None or not visitor.logged_in):
            if request.method in SAFE_METHODS and not request.path.startswith("/api/"):
                raise web.HTTPSeeOther(f"/login?next={quote(request.path_qs, safe='')}")
            log.info(
                "web ui: refused %s %s from %s: not logged in",
                request.method,
                request.path,
                request.remote,
            )
            return _refusal(request, 401, "log in first (your login ended): reload the page")
        if request.method not in SAFE_METHODS:
            if not self._origin_allowed(request):
                log.info(
                    "web ui: refused %s %s from %s: sent from a page of %s",
                    request.method,
                    request.path,
                    request.remote,
                    request.headers.get("Origin"),
                )
                return _refusal(
                    request,
                    403,
                    "refused: sent from a page of another site (behind a proxy, pass the "
                    "Host header on, or list the name in web_ui.allowed_hosts)",
                )
            token = request.headers.get(CSRF_HEADER)
            if token is None and request.content_type == "application/x-www-form-urlencoded":
                token = str((await request.post()).get("csrf", "")) or None
            if not self.access.csrf_ok(visitor, token):
                log.info(
                    "web ui: refused %s %s from %s: missing or wrong CSRF token",
                    request.method,
                    request.path,
                    request.remote,
                )
                return _refusal(
                    request, 403, "the request's CSRF token is missing or wrong: reload the page"
                )
        if visitor is not None:
            request[VISITOR] = visitor
        response = await handler(request)
        if fresh is not None and not response.prepared:
            self.set_cookie(response, fresh)
        return response


def _machine_names() -> frozenset[str]:
    names = {socket.gethostname(), socket.getfqdn()}
    names |= {f"{name.split('.')[0]}.local" for name in list(names) if name}
    return frozenset(name.lower() for name in names if name)


def _is_address(name: str) -> bool:
    """An IP address: the browser connected to it by number, so no name was rebound."""
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _refusal(request: web.Request, status: int, message: str) -> web.Response:
    """JSON for the page's script; for a form a person sent, a page saying it."""
    if request.path.startswith("/api/"):
        return web.json_response({"error": message}, status=status)
    page = (
        '<!doctype html><meta charset="utf-8"><title>Refused · Hermes</title>'
        f'<link rel="stylesheet" href="/static/app.css"><main><p class="error">{escape(message)}'
        '</p><p><a href="/chat">Back to the chat</a></p></main>'
    )
    return web.Response(status=status, text=page, content_type="text/html")
