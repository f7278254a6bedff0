"""The HTTP server (aiohttp's): authentication, sessions, and a turn per request.

A request continues a session when it names one (``X-Hermes-Session-Id``, returned on every
response) or sends the ``user`` of an earlier request; otherwise it opens a new one. One
session runs one turn at a time: a second request for a busy session gets 409. Nobody can
answer a question over HTTP, so a dangerous command is denied (unless the configured
approvals mode lets it run) and the model explains that in its reply. A client that goes
away stops its turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from hermes_commons.addresses import loopback_host_header
from hermes_commons.throttle import LoginThrottle
from hermes_plugin_api_server.settings import ServerSettings
from hermes_plugin_api_server.wire import (
    AGENT_MODEL,
    chunk,
    completion,
    error_body,
    model_list,
    new_completion_id,
    sse,
    user_images,
    user_input,
)
from hermes_sdk.following import TurnWatcher, follow_turn, tool_event_json
from hermes_sdk.media import Attachment, MediaRefused
from hermes_sdk.runtime import (
    Runtime,
    RuntimeTurn,
    SessionBusy,
    SessionNotFound,
    SessionOptions,
    ToolFinished,
    ToolStarted,
    TurnEnded,
)

__all__ = ["SESSION_HEADER", "ApiServer"]

log = logging.getLogger("hermes.api_server")

SESSION_HEADER = "X-Hermes-Session-Id"
TOOL_EVENTS_HEADER = "X-Hermes-Tool-Events"
SOURCE = "api"
OWNER = "hermes.owner"
"""The request's key id (:func:`key_owner`), set by the authentication middleware."""
NO_KEY = "local"
"""The owner of sessions opened without a key (``--no-auth``, loopback only)."""


def key_owner(key: str) -> str:
    """A short id for an API key (a hash, never the key): it names the sessions the key
    opens, so another key cannot continue them."""
    return "k" + hashlib.sha256(key.encode()).hexdigest()[:12]


STOPPING_WAIT_SECONDS = 10.0
MAX_IMAGES = 10
"""Images one request may carry."""
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _error(status: int, message: str, kind: str, code: str | None = None) -> web.Response:
    return web.json_response(error_body(message, kind, code), status=status)


class ApiServer:
    """The service: ``run(runtime)`` serves until cancelled."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.runtime: Runtime | None = None
        self.bound_port: int | None = None
        self.ready = asyncio.Event()
        self._users: dict[str, str] = {}
        """``user`` field -> its session, for this process (else found in the store)."""
        self._opening: dict[str, asyncio.Lock] = {}
        self._abandoned: dict[str, RuntimeTurn] = {}
        """Turns stopped because their client went away, until they have ended."""
        self._created = int(time.time())
        self.throttle = LoginThrottle(allowed=10, window_s=60.0)
        """Wrong keys, per address: the eleventh in a minute is refused (429)."""

    # --- the service ------------------------------------------------------------------------

    async def run(self, runtime: Runtime) -> None:
        self.runtime = runtime
        app = web.Application(
            middlewares=[self._closed, self._cors, self._authenticate],
            client_max_size=self.settings.max_body_bytes,
        )
        app.router.add_get("/health", self._health)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        # A client that disconnects cancels its handler, which stops its turn.
        runner = web.AppRunner(
            app, access_log=None, handle_signals=False, handler_cancellation=True
        )
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.settings.host, self.settings.port)
            await site.start()
            addresses = runner.addresses  # the port the OS chose for port 0
            self.bound_port = int(addresses[0][1]) if addresses else self.settings.port
            auth = "bearer key required" if self.settings.keys else "NO AUTHENTICATION"
            log.info(
                "api server on http://%s:%s/v1 (%s)", self.settings.host, self.bound_port, auth
            )
            self.ready.set()
            await asyncio.Event().wait()
        finally:
            self.ready.clear()
            await runner.cleanup()

    # --- middlewares ------------------------------------------------------------------------

    @web.middleware
    async def _cors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        allowed = origin is not None and (
            origin in self.settings.cors_origins or "*" in self.settings.cors_origins
        )
        if request.method == "OPTIONS" and origin is not None:
            if not allowed:
                return web.Response(status=403, text="origin not allowed")
            response: web.StreamResponse = web.Response(status=204)
            response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
            response.headers["Access-Control-Allow-Headers"] = (
                f"Authorization, Content-Type, {SESSION_HEADER}, {TOOL_EVENTS_HEADER}"
            )
            response.headers["Access-Control-Max-Age"] = "600"
        else:
            response = await handler(request)
        if allowed and origin is not None:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Expose-Headers"] = SESSION_HEADER
            response.headers["Vary"] = "Origin"
        return response

    @web.middleware
    async def _closed(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """What a browser page on another site must not do: without a key (``--no-auth``),
        only a loopback Host is answered (DNS rebinding sends the page's own name); and a
        POST must say ``application/json``, which a page cannot send to another origin
        without a preflight this server refuses (a ``text/plain`` form post is refused)."""
        if not self.settings.keys and not loopback_host_header(request.host):
            return _error(
                421,
                "this server runs without a key and answers only to localhost/127.0.0.1",
                "invalid_request_error",
            )
        if request.method == "POST" and request.content_type != "application/json":
            return _error(
                415,
                "send the body as JSON with Content-Type: application/json",
                "invalid_request_error",
            )
        return await handler(request)

    @web.middleware
    async def _authenticate(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path == "/health" or not self.settings.keys:
            request[OWNER] = NO_KEY
            return await handler(request)
        address = request.remote or "?"
        if self.throttle.blocked(address):
            response = _error(
                429,
                "too many wrong API keys from this address; wait a minute",
                "invalid_request_error",
                "rate_limit_exceeded",
            )
            response.headers["Retry-After"] = str(int(self.throttle.window_s))
            return response
        header = request.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        # Every key is compared, in constant time, so timing says nothing about which is close.
        matched: str | None = None
        for key in self.settings.keys:
            if hmac.compare_digest(given.strip().encode(), key.encode()):
                matched = key
        if scheme.lower() != "bearer" or matched is None:
            self.throttle.failed(address)
            log.info("api server: refused a request without a valid key from %s", address)
            return _error(
                401,
                "Incorrect API key provided: use one of API_SERVER_KEY / API_SERVER_KEYS "
                "as the bearer token",
                "invalid_request_error",
                "invalid_api_key",
            )
        self.throttle.succeeded(address)
        request[OWNER] = key_owner(matched)
        return await handler(request)

    # --- endpoints --------------------------------------------------------------------------

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _models(self, request: web.Request) -> web.Response:
        assert self.runtime is not None
        return web.json_response(model_list(self.runtime.models(), self._created))

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        assert self.runtime is not None
        try:
            body = await request.json()
        except (ValueError, UnicodeDecodeError):
            return _error(400, "the body is not JSON", "invalid_request_error")
        if not isinstance(body, dict):
            return _error(400, "the body must be a JSON object", "invalid_request_error")
        model = body.get("model") or AGENT_MODEL
        options = self._options(str(model), body.get("user"), request[OWNER])
        if options is None:
            return _error(
                404,
                f"The model {model!r} does not exist: use {AGENT_MODEL!r}, or one that "
                "GET /v1/models lists",
                "invalid_request_error",
                "model_not_found",
            )
        try:
            session_id, new = await self._session(request, options, body.get("user"))
        except SessionNotFound as exc:
            return _error(404, str(exc), "invalid_request_error", "session_not_found")
        except ValueError as exc:
            return _error(400, str(exc), "invalid_request_error", "model_not_available")
        try:
            images = user_images(body.get("messages"))
            text = user_input(body.get("messages"), new, with_images=bool(images))
        except ValueError as exc:
            return _error(400, str(exc), "invalid_request_error")
        try:
            attachments = await self._images(images)
        except MediaRefused as exc:
            return _error(400, str(exc), "invalid_request_error", "invalid_image")
        try:
            turn = await self._start(session_id, text, attachments)
        except SessionBusy:
            return _error(
                409,
                f"session {session_id} is answering another request; send this one when "
                "that one has finished",
                "conflict",
                "session_busy",
            )
        headers = {SESSION_HEADER: session_id}
        try:
            if body.get("stream"):
                return await self._stream(request, turn, str(model), headers, body)
            ended, tools = await _collect(turn)
            extension = {"session_id": session_id, "status": ended.status, "tools": tools}
            payload = completion(new_completion_id(), str(model), ended, extension)
            return web.json_response(payload, headers=headers)
        finally:
            if not turn.done:  # the client went away (the handler was cancelled)
                self._abandoned[session_id] = turn
                turn.stop()

    async def _stream(
        self,
        request: web.Request,
        turn: RuntimeTurn,
        model: str,
        headers: dict[str, str],
        body: dict[str, Any],
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={
                **headers,
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        completion_id, created = new_completion_id(), int(time.time())
        with_tools = request.headers.get(TOOL_EVENTS_HEADER, "").lower() in {"1", "true", "yes"}

        async def send(data: Any) -> None:
            await response.write(sse(data))

        try:
            await self._send_events(turn, send, completion_id, model, created, with_tools, body)
        except ConnectionError:  # the client went away; _chat stops the turn
            return response
        await response.write_eof()
        return response

    async def _send_events(
        self,
        turn: RuntimeTurn,
        send: Callable[[Any], Awaitable[None]],
        completion_id: str,
        model: str,
        created: int,
        with_tools: bool,
        body: dict[str, Any],
    ) -> None:
        stream_options = body.get("stream_options")
        include_usage = isinstance(stream_options, dict) and bool(
            stream_options.get("include_usage")
        )
        await send(chunk(completion_id, model, created, delta={"role": "assistant", "content": ""}))

        async def text(content: str) -> None:
            await send(chunk(completion_id, model, created, delta={"content": content}))

        async def tool(event: ToolStarted | ToolFinished) -> None:
            await send(chunk(completion_id, model, created, extension=tool_event_json(event)))

        async def ended(event: TurnEnded) -> None:
            if event.status != "done":
                note = f"[{event.status}: {event.error}]" if event.error else f"[{event.status}]"
                await text(f"\n\n{note}")
            extension = {"session_id": turn.session_id, "status": event.status}
            await send(chunk(completion_id, model, created, finish=event, extension=extension))
            if include_usage:
                await send(chunk(completion_id, model, created, usage=event))

        watcher = TurnWatcher(
            on_text=text,  # no on_restart: text sent to the client cannot be taken back
            on_tool_started=tool if with_tools else None,
            on_tool_finished=tool if with_tools else None,
            on_end=ended,
        )
        await follow_turn(turn, watcher)
        await send("[DONE]")

    async def _images(self, urls: list[str]) -> tuple[Attachment, ...]:
        """Each ``image_url`` as an attachment: a data: URL decoded, an http(s) URL fetched
        through the web tools' SSRF guard; every one sniffed and capped."""
        if not urls:
            return ()
        assert self.runtime is not None
        from hermes_commons.media_urls import attachment_from_url
        from hermes_sdk.media import MediaCache

        if len(urls) > MAX_IMAGES:
            raise MediaRefused(f"{len(urls)} images is over the {MAX_IMAGES} one message takes")
        cache = MediaCache.of_home(self.runtime.home, self.runtime.config)
        config = self.runtime.config
        return tuple(
            [await attachment_from_url(url, cache, config, expect="image") for url in urls]
        )

    async def _start(
        self, session_id: str, text: str, attachments: tuple[Attachment, ...] = ()
    ) -> RuntimeTurn:
        """Start the turn. A turn whose client went away is still stopping for a moment:
        the session's next request waits for that rather than getting 409."""
        assert self.runtime is not None
        abandoned = self._abandoned.pop(session_id, None)
        if abandoned is not None and self.runtime.running(session_id) is abandoned:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(abandoned.result(), STOPPING_WAIT_SECONDS)
        return self.runtime.start_turn(session_id, text, attachments=attachments)

    # --- sessions ---------------------------------------------------------------------------

    def _options(self, model: str, user: Any, owner: str) -> SessionOptions | None:
        """The session a request for ``model`` opens; None if no such model is offered. Its
        scope names the key that opened it (``api:KEY-ID[:user]``): sessions belong to it."""
        scope = f"{SOURCE}:{owner}" + (f":{user}" if isinstance(user, str) and user else "")
        if model == AGENT_MODEL:
            return SessionOptions(source=SOURCE, user_scope=scope)
        prefix, _, rest = model.partition("/")
        provider, _, name = rest.partition("/")
        if prefix != AGENT_MODEL or not provider or not name:
            return None
        assert self.runtime is not None
        offered = {(c.provider, c.model) for c in self.runtime.models()}
        if (provider, name) not in offered:
            return None
        return SessionOptions(source=SOURCE, user_scope=scope, provider=provider, model=name)

    async def _session(
        self, request: web.Request, options: SessionOptions, user: Any
    ) -> tuple[str, bool]:
        """The session id for this request, and whether it is new."""
        assert self.runtime is not None
        owner = request[OWNER]
        named = request.headers.get(SESSION_HEADER, "").strip()
        if named:
            # Only a session this key opened: never a CLI's, a chat app's or another key's.
            found = await self.runtime.find_session(named)
            scope = (found.user_scope or "").split(":")
            if found.session_id != named or found.source != SOURCE or scope[1:2] != [owner]:
                raise SessionNotFound(f"no session {named!r} for this API key")
            if self.runtime.running(named) is None:
                await self.runtime.resume_session(named)
            return named, False
        if not (isinstance(user, str) and user):
            opened = await self.runtime.open_session(options)
            return opened.session_id, True
        mine = f"{owner}:{user}"
        lock = self._opening.setdefault(mine, asyncio.Lock())
        async with lock:  # two first requests of one user open one session
            known = self._users.get(mine)
            if known is None:
                earlier = await self.runtime.sessions(source=SOURCE, user_scope=options.user_scope)
                live = [s for s in earlier if s.ended_at is None]
                known = live[0].session_id if live else None
                if known is not None:
                    await self.runtime.resume_session(known)
            if known is not None:
                self._users[mine] = known
                return known, False
            opened = await self.runtime.open_session(options)
            self._users[mine] = opened.session_id
            return opened.session_id, True


async def _collect(turn: RuntimeTurn) -> tuple[TurnEnded, list[dict[str, Any]]]:
    watcher = TurnWatcher()
    ended = await follow_turn(turn, watcher)
    return ended, [tool_event_json(call) for call in watcher.tool_calls]
