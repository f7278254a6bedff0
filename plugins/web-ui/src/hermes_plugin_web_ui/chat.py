"""The chat's API for the page's script: send a message (or a slash command), follow the
turn's events (server-sent events, resumable with Last-Event-ID), answer a question, stop.

Turns run with ``answers_questions``: an approval is a question the page shows as buttons.
A turn keeps running when its page closes; opening the session again shows it, live.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from typing import Any

from aiohttp import BodyPartReader, web

from hermes_commons.text import one_line
from hermes_plugin_web_ui.live import LiveTurn, LiveTurns
from hermes_sdk.media import Attachment, MediaCache, MediaRefused
from hermes_sdk.runtime import (
    Runtime,
    SessionBusy,
    SessionNotFound,
    SessionOptions,
)

__all__ = ["SOURCE", "ChatApi"]

log = logging.getLogger("hermes.web_ui")

SOURCE = "web"
MAX_MESSAGE_CHARS = 100_000
MAX_FILES = 10
SLASH_COMMAND = re.compile(r"/[a-z][\w-]*(\s|$)")
"""What a command looks like: "/etc/hosts: what is this?" is a message, not a command."""
_CHAT_API: web.AppKey[ChatApi] = web.AppKey("chat_api")


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


class ChatApi:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.live = LiveTurns()
        self._resumed: set[str] = set()
        self.next_model: tuple[str, str] | None = None
        """The (provider, model) ``/model`` chose before the page had a session: the next
        session opened here opens with it (one owner, one choice for the UI's new chats)."""
        self.next_yolo = False
        """``/yolo on`` before the page had a session: the next session (that one alone)
        runs unasked."""
        self.models: dict[str, tuple[str, str]] = {}
        """Session id -> the (provider, model) ``/model`` chose for it in this process (the
        session's stored row keeps the one it was opened with)."""
        self.news: list[str] = []
        """Lines commands promised for later (a ``/background`` task that finished), shown
        with the page's next answer (the page has no channel of its own for them)."""

    @staticmethod
    def of(app: web.Application) -> ChatApi:
        return app[_CHAT_API]

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_post("/api/turns", self.send)
        router.add_get("/api/sessions/{session_id}/events", self.events)
        router.add_post("/api/sessions/{session_id}/stop", self.stop)
        router.add_post("/api/questions/{question_id}", self.answer)

    def attach(self, app: web.Application) -> None:
        app[_CHAT_API] = self

    async def close(self) -> None:
        """The UI is going away: stop its turns, then end the sessions it opened or
        resumed, so what their tools hold (a container, a connection) is let go."""
        await self.live.stop_all()
        for session_id in sorted(self._resumed):
            if self.runtime.running(session_id) is None:
                with contextlib.suppress(Exception):  # ending is tidying: never fail the stop
                    await self.runtime.end_session(session_id, "web ui stopped")

    # --- sending ----------------------------------------------------------------------------

    async def send(self, request: web.Request) -> web.Response:
        try:
            if request.content_type == "multipart/form-data":
                body, attachments = await self._multipart(request)
            else:
                body, attachments = await _json(request), ()
        except MediaRefused as exc:
            return _error(400, str(exc))
        text = body.get("text")
        session_id = body.get("session_id") or None
        if attachments and isinstance(text, str) and not text.strip():
            text = "(sent files)"
        if not isinstance(text, str) or not text.strip():
            return _error(400, "write a message first")
        if len(text) > MAX_MESSAGE_CHARS:
            return _error(413, f"a message holds {MAX_MESSAGE_CHARS:,} characters at most")
        if session_id is not None and not isinstance(session_id, str):
            return _error(400, "session_id must be a string")
        if SLASH_COMMAND.match(text):
            return await self._slash(text, session_id)
        try:
            if session_id is None:
                provider, model = self.next_model or (None, None)
                opened = await self.runtime.open_session(
                    SessionOptions(
                        source=SOURCE, provider=provider, model=model, yolo=self.next_yolo
                    )
                )
                self.next_yolo = False  # "for this conversation": never a later one
                session_id = opened.session_id
                self._resumed.add(session_id)
                before = 0
            else:
                before = await self._resume(session_id)
            turn = self.runtime.start_turn(
                session_id, text, answers_questions=True, attachments=attachments
            )
        except SessionNotFound as exc:
            return _error(404, str(exc))
        except SessionBusy:
            return _error(409, "a turn is running on this session: wait for it, or stop it")
        except ValueError as exc:  # the model cannot be used
            return _error(400, str(exc))
        live = LiveTurn(turn, text, before, attachments, self.live.next_id())
        self.live.add(live)
        return web.json_response({"session_id": session_id, "turn": live.turn_id, **self._news()})

    def _news(self) -> dict[str, list[str]]:
        news = list(self.news)
        self.news.clear()  # in place: the commands' notify holds this very list
        return {"news": news} if news else {}

    async def _multipart(
        self, request: web.Request
    ) -> tuple[dict[str, Any], tuple[Attachment, ...]]:
        """A message with files: ``text``, ``session_id`` and ``files`` parts. Each file is
        sniffed and kept in the media cache (refused if it is not what it says, a program,
        or over its kind's cap)."""
        cache = MediaCache.of_home(self.runtime.home, self.runtime.config)
        fields: dict[str, Any] = {}
        attachments: list[Attachment] = []
        reader = await request.multipart()
        budget = max(cache.limits.max_bytes.values())
        async for part in reader:
            if not isinstance(part, BodyPartReader):
                continue
            if part.name == "files" and part.filename is not None:
                if len(attachments) >= MAX_FILES:
                    raise MediaRefused(f"a message takes {MAX_FILES} files at most")
                data = await _read_capped(part, budget)
                budget -= len(data)
                if not data and not part.filename:
                    continue  # the empty part a form sends when no file was chosen
                declared = part.headers.get("Content-Type")
                attachments.append(
                    await asyncio.to_thread(
                        cache.ingest, bytes(data), name=part.filename, declared=declared
                    )
                )
            elif part.name in {"text", "session_id"}:
                fields[part.name] = await part.text()
        return fields, tuple(attachments)

    async def model_of(self, session_id: str) -> tuple[str | None, str | None]:
        """The (provider, model) a session's next turn uses: ``/model``'s choice in this
        process, else the one it was opened with."""
        chosen = self.models.get(session_id)
        if chosen is not None:
            return chosen
        summary = await self.runtime.find_session(session_id)
        return summary.provider, summary.model

    async def _resume(self, session_id: str) -> int:
        """Make the stored session ready for a turn here; its message count before it."""
        if session_id not in self._resumed and self.runtime.running(session_id) is None:
            summary = await self.runtime.resume_session(session_id)
            self._resumed.add(session_id)
            return summary.message_count
        return (await self.runtime.find_session(session_id)).message_count

    # --- following --------------------------------------------------------------------------

    async def events(self, request: web.Request) -> web.StreamResponse:
        live = self.live.get(request.match_info["session_id"])
        asked = request.query.get("turn", "")
        if live is None or (asked.isdigit() and int(asked) != live.turn_id):
            return web.Response(status=204)  # nothing (or another turn) now: the page stops
        after = _after(request.headers.get("Last-Event-ID") or request.query.get("after"))
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
                "X-Content-Type-Options": "nosniff",  # sent before the headers middleware runs
            }
        )
        await response.prepare(request)
        try:
            await response.write(b"retry: 1000\n\n")
            async for index, entry in live.follow(after):
                if index < 0:
                    await response.write(b": still here\n\n")
                    continue
                data = json.dumps(entry, ensure_ascii=False)
                await response.write(f"id: {index}\ndata: {data}\n\n".encode())
            await response.write(b"event: close\ndata: {}\n\n")
        except ConnectionError:
            pass  # the page went away; the turn goes on
        return response

    async def answer(self, request: web.Request) -> web.Response:
        body = await _json(request)
        value = body.get("value")
        question_id = request.match_info["question_id"]
        live = self.live.question(question_id)
        if live is None or not isinstance(value, str):
            return _error(409, "that question is no longer open")
        try:
            answered = await live.answer(question_id, value)
        except ValueError as exc:
            return _error(400, str(exc))
        if not answered:
            return _error(409, "that question is closed: it timed out or was answered")
        return web.json_response({"answered": value})

    async def stop(self, request: web.Request) -> web.Response:
        live = self.live.get(request.match_info["session_id"])
        if live is None or live.done:
            return web.json_response({"stopped": False, "output": "nothing is running"})
        live.turn.stop()
        return web.json_response({"stopped": True})

    # --- slash commands ---------------------------------------------------------------------

    async def _slash(self, text: str, session_id: str | None) -> web.Response:
        """A ``/NAME``: the runtime runs it (the built-in commands and the plugins' alike);
        the page shows its text and does what it asks (a new chat, a reload, the model)."""
        name, _, args = text[1:].partition(" ")
        name, args = name.strip().lower(), args.strip()
        try:
            if session_id is not None and name not in {"help", "stop"}:
                await self._resume(session_id)
            route = self.next_model if session_id is None else None
            reply = await self.runtime.run_slash(
                name, args, session_id, route=route, notify=self.news.append
            )
        except (SessionNotFound, SessionBusy, ValueError, LookupError) as exc:
            message = str(exc).strip("'\"")
            return web.json_response({"output": message or "a turn is running on this session"})
        except Exception as exc:  # noqa: BLE001 - a plugin's command failed: one line
            return web.json_response({"output": f"/{name} failed: {one_line(str(exc), 300)}"})
        answer: dict[str, Any] = {"output": reply.text or "(nothing to show)", **self._news()}
        if reply.new_session:
            if session_id is not None:
                self._resumed.discard(session_id)
                self.models.pop(session_id, None)
            answer["new"] = True
        if reply.reload:
            answer["reload"] = True
        if reply.send is not None:
            answer["send"] = reply.send  # the page sends it, once a running turn is over
        if reply.session_id is not None:
            answer["switch"] = reply.session_id  # /branch: the page goes on in the copy
        if reply.yolo is not None and session_id is None:
            self.next_yolo = reply.yolo  # the next session opens with it
        if reply.provider is not None and reply.model is not None:
            if session_id is not None:
                self.models[session_id] = (reply.provider, reply.model)
            else:  # the page's next message opens its session with it
                self.next_model = (reply.provider, reply.model)
        if name == "model" or reply.model is not None:
            # The page's header shows the model: it changes with it.
            answer["model"] = _shown(
                await self.model_of(session_id) if session_id else self._default_model()
            )
        return web.json_response(answer)

    def _default_model(self) -> tuple[str | None, str | None]:
        if self.next_model is not None:
            return self.next_model
        info = self.runtime.describe_model()
        return info.provider, info.model


def _shown(route: tuple[str | None, str | None]) -> str:
    """A model as the chat page's header shows it."""
    provider, model = route
    return f"{provider or '?'} / {model or '?'}"


async def _read_capped(part: BodyPartReader, limit: int) -> bytes:
    """A file part, read in chunks and refused as soon as it passes ``limit`` (what the
    message may still carry): never a whole oversized upload in memory."""
    chunks: list[bytes] = []
    size = 0
    while chunk := await part.read_chunk(256 * 1024):
        size += len(chunk)
        if size > limit:
            raise MediaRefused(
                f"{part.filename or 'a file'} is refused: the message's files are over the "
                "largest media cap (media.max_mb)"
            )
        chunks.append(chunk)
    return b"".join(chunks)


async def _json(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        raise web.HTTPBadRequest(text="the body is not JSON") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="the body must be a JSON object")
    return body


def _after(value: str | None) -> int:
    try:
        return max(int(value or -1), -1)
    except ValueError:
        return -1
