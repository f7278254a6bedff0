"""The pages, rendered on the server (Jinja2, autoescaped): login, chat, sessions (listed,
searched, read, exported), status with usage charts, pending writes and plugins."""

from __future__ import annotations

import io
import logging
import mimetypes
import re
import time
from importlib.resources import files
from typing import TYPE_CHECKING, Any

import jinja2
from aiohttp import web

from hermes_commons.proposals import UnknownProposal
from hermes_commons.transcripts import EXPORT_FORMATS, tool_call_function, write_export
from hermes_plugin_web_ui.access import VISITOR
from hermes_plugin_web_ui.charts import bar_chart, by_day, by_model, panel_bars, row_chart
from hermes_plugin_web_ui.dashboard import Dashboard, block_kind
from hermes_plugin_web_ui.render import (
    code_css,
    diff_html,
    markdown_html,
    media_url,
    snippet_html,
    when,
)
from hermes_sdk.media import MediaCache
from hermes_sdk.runtime import Runtime, SessionMessage, SessionNotFound, SessionSummary
from hermes_sdk.tooling import HistoryQuery

if TYPE_CHECKING:
    from hermes_plugin_web_ui.server import WebUi


__all__ = ["Pages"]

log = logging.getLogger("hermes.web_ui")

USAGE_DAYS = 30
SESSIONS_SHOWN = 100
MEDIA_NAME = re.compile(r"[0-9a-f]{32}(\.[a-z0-9]{1,8})?")
INLINE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
STATIC_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("hermes_plugin_web_ui", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["when"] = when
    environment.filters["markdown"] = markdown_html
    environment.filters["diff"] = diff_html
    environment.filters["function"] = tool_call_function
    environment.filters["media_url"] = media_url
    environment.filters["block_kind"] = block_kind
    environment.filters["bars"] = panel_bars
    return environment


class Pages:
    def __init__(self, runtime: Runtime, web_ui: WebUi) -> None:
        self.runtime = runtime
        self.web_ui = web_ui
        self.templates = _environment()
        self._flash: dict[str, str] = {}
        """A decision's outcome, by visitor, until their next look at the pending page."""
        self._static = self._load_static()
        self.dashboard = Dashboard(self)

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_get("/", self.home)
        router.add_get("/health", self.health)
        router.add_get("/login", self.login_page)
        router.add_post("/login", self.login)
        router.add_post("/logout", self.logout)
        router.add_get("/chat", self.chat)
        router.add_get("/chat/{session_id}", self.chat)
        router.add_get("/sessions", self.sessions)
        router.add_get("/sessions/{session_id}", self.session)
        router.add_get("/sessions/{session_id}/export.{fmt}", self.export)
        router.add_get("/status", self.status)
        router.add_get("/pending", self.pending)
        router.add_post("/pending/{queue}/{write_id}", self.decide)
        router.add_get("/plugins", self.plugins)
        router.add_post("/plugins/{name}", self.toggle_plugin)
        self.dashboard.add_routes(router)
        router.add_get("/static/{name}", self.static)
        router.add_get("/media/{name}", self.media)

    # --- rendering --------------------------------------------------------------------------

    def render(
        self, request: web.Request, template: str, *, status: int = 200, **values: Any
    ) -> web.Response:
        visitor = request.get(VISITOR)
        html = self.templates.get_template(template).render(
            csrf=self.web_ui.access.csrf_token(visitor) if visitor else "",
            logged_in=bool(visitor and visitor.logged_in),
            where_the_key_is=self._where_the_key_is(),
            path=request.path,
            panels=self.dashboard.menu,
            **values,
        )
        return web.Response(text=html, content_type="text/html", charset="utf-8", status=status)

    def _load_static(self) -> dict[str, tuple[bytes, str]]:
        folder = files("hermes_plugin_web_ui").joinpath("static")
        found: dict[str, tuple[bytes, str]] = {}
        for entry in folder.iterdir():
            suffix = "." + entry.name.rpartition(".")[2]
            if suffix in STATIC_TYPES:
                found[entry.name] = (entry.read_bytes(), STATIC_TYPES[suffix])
        css, kind = found["app.css"]
        found["app.css"] = (css + b"\n" + code_css().encode(), kind)
        return found

    async def static(self, request: web.Request) -> web.Response:
        entry = self._static.get(request.match_info["name"])
        if entry is None:
            raise web.HTTPNotFound()
        body, kind = entry
        response = web.Response(body=body, content_type=kind)
        response.headers["Cache-Control"] = "max-age=3600"
        return response

    async def media(self, request: web.Request) -> web.StreamResponse:
        """A file of a message, from the media cache by its content-hash name. Raster
        images are shown inline; anything else is a download (never rendered here)."""
        name = request.match_info["name"]
        if not MEDIA_NAME.fullmatch(name):
            raise web.HTTPNotFound()
        path = MediaCache.of_home(self.runtime.home, self.runtime.config).folder / name
        if not path.is_file():
            raise web.HTTPNotFound(text="that file is no longer kept (the media cache was cleaned)")
        response = web.FileResponse(path)
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        response.content_type = kind if kind in INLINE_TYPES else "application/octet-stream"
        if kind not in INLINE_TYPES:
            response.headers["Content-Disposition"] = "attachment"
        return response

    # --- access -----------------------------------------------------------------------------

    async def health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def home(self, request: web.Request) -> web.Response:
        raise web.HTTPSeeOther("/chat")

    async def login_page(self, request: web.Request) -> web.Response:
        token = request.query.get("token")
        target = _local(request.query.get("next"))
        if token is not None and self.web_ui.login_token is not None:
            return self._log_in(request, token, target)  # the URL hermes web printed
        return self.render(request, "login.html", next=target, error=None)

    async def login(self, request: web.Request) -> web.Response:
        form = await request.post()
        return self._log_in(request, str(form.get("key", "")), _local(str(form.get("next", ""))))

    def _log_in(self, request: web.Request, given: str, target: str) -> web.Response:
        address = request.remote or "?"
        if self.web_ui.throttle.blocked(address):
            log.warning("web ui: refused a login from %s: too many wrong keys", address)
            error = "too many wrong keys: wait a minute"
            return self.render(request, "login.html", status=429, next=target, error=error)
        if not self.web_ui.access.key_ok(given):
            self.web_ui.throttle.failed(address)
            log.warning("web ui: refused a login from %s: wrong key", address)
            error = f"wrong key: {self._where_the_key_is()}"
            return self.render(request, "login.html", status=401, next=target, error=error)
        self.web_ui.throttle.succeeded(address)
        log.info("web ui: login from %s", address)
        response = web.HTTPSeeOther(target)
        self.web_ui.set_cookie(response, self.web_ui.access.new_visitor(logged_in=True))
        raise response

    def _where_the_key_is(self) -> str:
        if self.web_ui.login_token is None:
            return "it is WEB_UI_KEY in HERMES_HOME/.env"
        return (
            "open the URL hermes web printed (it is also in HERMES_HOME/web-ui/login-url), "
            "or set WEB_UI_KEY in HERMES_HOME/.env"
        )

    async def logout(self, request: web.Request) -> web.Response:
        response = web.HTTPSeeOther("/login")
        response.del_cookie("hermes_web", path="/")
        raise response

    # --- chat -------------------------------------------------------------------------------

    async def chat(self, request: web.Request) -> web.Response:
        from hermes_plugin_web_ui.chat import ChatApi

        session_id = request.match_info.get("session_id")
        session: SessionSummary | None = None
        messages: list[SessionMessage] = []
        live_from = 0  # the turn the page follows on load (0: none)
        if session_id is not None:
            try:
                session = await self.runtime.find_session(session_id)
            except SessionNotFound as exc:
                return self.render(request, "error.html", status=404, message=str(exc))
            if session.session_id != session_id:
                raise web.HTTPSeeOther(f"/chat/{session.session_id}")
            live = ChatApi.of(request.app).live.get(session_id)
            running = live is not None and not live.done  # asked before reading: no gap
            messages = await self.runtime.messages(session_id)
            if live is not None and running:  # the page replays the running turn
                messages = [m for m in messages if m.seq <= live.before_seq]
                live_from = live.turn_id
        warnings = list(self.runtime.warnings())
        if session is not None:
            provider, name = ChatApi.of(request.app).models.get(
                session.session_id, (session.provider, session.model)
            )
            model = f"{provider or '?'} / {name or '?'}"
        else:
            try:
                info = self.runtime.describe_model()
                model = f"{info.provider} / {info.model}"
            except ValueError as exc:
                model, warnings = "no model", [str(exc), *warnings]
        return self.render(
            request,
            "chat.html",
            session=session,
            messages=messages,
            results=_results(messages),
            live=live_from,
            model=model,
            warnings=warnings,
        )

    # --- sessions ---------------------------------------------------------------------------

    async def sessions(self, request: web.Request) -> web.Response:
        query = request.query.get("q", "").strip()
        if not query:
            listed = await self.runtime.sessions(limit=SESSIONS_SHOWN)
            openings = await self.runtime.openings([s.session_id for s in listed])
            return self.render(
                request, "sessions.html", query="", sessions=listed, openings=openings, hits=[]
            )
        hits = await self.runtime.search(HistoryQuery(text=query, limit=50))
        shown = [(hit, snippet_html(hit.snippet, query)) for hit in hits]
        return self.render(
            request, "sessions.html", query=query, sessions=[], openings={}, hits=shown
        )

    async def session(self, request: web.Request) -> web.Response:
        try:
            session = await self.runtime.find_session(request.match_info["session_id"])
            messages = await self.runtime.messages(session.session_id)
            marks = await self.runtime.compactions(session.session_id)
            children = await self.runtime.children(session.session_id)
            usage = await self.runtime.usage_report(session.session_id)
        except SessionNotFound as exc:
            return self.render(request, "error.html", status=404, message=str(exc))
        marks_after: dict[int, list[Any]] = {}
        for mark in marks:
            marks_after.setdefault(mark.boundary_seq, []).append(mark)
        return self.render(
            request,
            "session.html",
            session=session,
            messages=messages,
            results=_results(messages),
            marks_after=marks_after,
            children=children,
            usage=usage,
        )

    async def export(self, request: web.Request) -> web.Response:
        fmt = request.match_info["fmt"]
        if fmt not in EXPORT_FORMATS:
            raise web.HTTPNotFound(text=f"export as {' or '.join(EXPORT_FORMATS)}")
        try:
            session = await self.runtime.find_session(request.match_info["session_id"])
            messages = await self.runtime.messages(session.session_id)
        except SessionNotFound as exc:
            raise web.HTTPNotFound(text=str(exc)) from None
        out = io.StringIO()
        write_export(out, fmt, session, messages)
        kind = "text/markdown" if fmt == "md" else "application/x-ndjson"
        response = web.Response(text=out.getvalue(), content_type=kind, charset="utf-8")
        name = f"hermes-{session.session_id}.{fmt}"
        response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
        return response

    # --- status, pending writes, plugins ----------------------------------------------------

    async def status(self, request: web.Request) -> web.Response:
        lines = await self.runtime.status()
        rows = await self.runtime.usage(since=time.time() - USAGE_DAYS * 86400)
        days = by_day(rows, USAGE_DAYS)
        models = by_model(rows)
        totals = {
            "tokens": sum(bar.tokens for bar in days),
            "cost": sum(bar.cost_usd for bar in days),
            "calls": sum(bar.calls for bar in days),
            "unpriced": sum(bar.unpriced_calls for bar in days),
        }
        return self.render(
            request,
            "status.html",
            lines=lines,
            day_chart=bar_chart(days, label=f"tokens per day, last {USAGE_DAYS} days"),
            model_chart=row_chart(models),
            totals=totals,
            days=USAGE_DAYS,
        )

    async def pending(self, request: web.Request) -> web.Response:
        visitor = request.get(VISITOR)
        message = self._flash.pop(visitor.sid, None) if visitor else None
        writes = await self.runtime.pending_writes()
        return self.render(request, "pending.html", writes=writes, message=message)

    async def decide(self, request: web.Request) -> web.Response:
        form = await request.post()
        action = str(form.get("action", ""))
        if action not in {"approve", "reject"}:
            raise web.HTTPBadRequest(text="action must be approve or reject")
        queue, write_id = request.match_info["queue"], request.match_info["write_id"]
        try:
            message = await self.runtime.decide_pending_write(
                queue, write_id, approve=action == "approve"
            )
        except (UnknownProposal, ValueError) as exc:
            message = str(exc)
        except TimeoutError:
            message = f"the {queue} plugin did not answer in time: try again"
        log.info("web ui: %s %s/%s: %s", action, queue, write_id, message)
        visitor = request.get(VISITOR)
        if visitor is not None:
            self._flash[visitor.sid] = message  # shown once, by the page the browser loads next
        raise web.HTTPSeeOther("/pending")

    async def plugins(self, request: web.Request) -> web.Response:
        states = sorted(self.runtime.plugins(), key=lambda p: (p.state != "failed", p.name))
        visitor = request.get(VISITOR)
        message = self._flash.pop(visitor.sid, None) if visitor else None
        try:
            section = (await self.runtime.read_config()).get("plugins")
        except ValueError:
            section = None
        listed = section.get("disabled") if isinstance(section, dict) else None
        disabled = {str(name) for name in listed} if isinstance(listed, list) else set()
        # What config.yaml says now, which a restart applies: the button follows it.
        wanted = {p.name: p.name not in disabled for p in states}
        return self.render(request, "plugins.html", plugins=states, message=message, wanted=wanted)

    async def toggle_plugin(self, request: web.Request) -> web.Response:
        """Enable or disable a plugin in config.yaml, as ``hermes plugins enable`` does."""
        form = await request.post()
        action = str(form.get("action", ""))
        if action not in {"enable", "disable"}:
            raise web.HTTPBadRequest(text="action must be enable or disable")
        name = request.match_info["name"]
        try:
            message = await self.runtime.set_plugin_enabled(name, action == "enable")
            message += " (restart hermes to apply it)"
        except ValueError as exc:
            message = str(exc)
        log.info("web ui: %s plugin %s: %s", action, name, message)
        visitor = request.get(VISITOR)
        if visitor is not None:
            self._flash[visitor.sid] = message
        raise web.HTTPSeeOther("/plugins")


def _local(target: str | None) -> str:
    """Where to go after logging in: a path of this server only (never ``//elsewhere``)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/chat"
    if any(character <= " " or character == "\x7f" for character in target):
        return "/chat"  # a tab or a newline is dropped on the way: "/\t/evil" is "//evil"
    return target


def _results(messages: list[SessionMessage]) -> dict[str, SessionMessage]:
    """Each tool call's result by call id, to fold under the call."""
    return {m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id}
