"""A Telegram Bot API server on loopback, over real HTTP, for testing platform adapters and
the gateway without Telegram.

It speaks the real protocol (``POST /bot<token>/<method>``, parameters as JSON, form or
query string; ``{"ok": true, "result": ...}`` or an error with ``error_code``,
``description`` and ``parameters.retry_after``): getMe, deleteWebhook, getUpdates long
polling with offsets, sendMessage (the 4,096-character limit counted on the visible text,
"can't parse entities" for bad HTML or MarkdownV2), editMessageText ("message is not
modified", "message to edit not found"), editMessageReplyMarkup, sendChatAction and
answerCallbackQuery; files both ways (:mod:`.telegram_files`: getFile, downloads,
sendPhoto, sendVoice, sendAudio, sendDocument as multipart uploads); 401 for a wrong
token, 404 for one not of a token's form.

It says no as Telegram does, each behaviour off until a test turns it on:
:meth:`~FakeTelegram.flood` (429 for the next calls of a method),
:meth:`~FakeTelegram.limit_chats` (Telegram's per-chat flood limits: a message a second in
a private chat, 20 a minute in a group, edits counted; 429 with the seconds to wait),
:meth:`~FakeTelegram.conflicts` (a second poller: the waiting getUpdates ends with 409),
:meth:`~FakeTelegram.fail` (5xx, with a JSON body or a proxy's HTML page) and
:meth:`~FakeTelegram.refuse_voice` (a user whose privacy settings refuse voice messages).

Tests drive it as the users would, and read what the bot did::

    with FakeTelegram() as telegram:
        telegram.user_says(42, "hello")
        reply = telegram.wait_for_message(chat_id=42)
        telegram.press(42, reply, "once")

Manual runs: ``python -m hermes_plugin_platform_telegram.testing.telegram_server --port 8081``
then point the adapter's ``api_url`` at it; ``POST /control/say {"user_id": 1, "text":
"hi"}`` injects a
message and ``GET /control/sent`` lists what the bot sent.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qsl, urlsplit

from hermes_plugin_platform_telegram.testing.telegram_files import (
    SentFile,
    TelegramFailure,
    TelegramFiles,
    multipart_parameters,
)
from hermes_plugin_platform_telegram.testing.telegram_markup import ParseError, visible_text

__all__ = ["FakeTelegram", "SentFile", "SentMessage"]

MAX_MESSAGE_CHARS = 4096
DEFAULT_TOKEN = "123456789:TEST-fake-bot-token-for-loopback"


class _Dropped(Exception):
    """A held call that never reached "Telegram": the connection is closed unanswered."""


_Failure = TelegramFailure
_TOKEN_FORM = re.compile(r"[0-9]+:[A-Za-z0-9_-]+")
"""What Telegram routes as a token; anything else is 404 Not Found, not 401."""
_POSTS = frozenset(
    {
        "sendMessage",
        "editMessageText",
        "editMessageReplyMarkup",
        "sendPhoto",
        "sendDocument",
        "sendAudio",
        "sendVoice",
        "sendVideo",
    }
)
"""What counts against a chat's flood limit (kept apart from the client's list on purpose:
the fake says what Telegram counts, the client what it paces)."""


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


@dataclass
class SentMessage:
    """A message the bot sent, as it stands now (``edits`` keeps earlier texts)."""

    message_id: int
    chat_id: int
    text: str
    """The text as sent (with its markup)."""
    visible: str
    """What the user sees."""
    parse_mode: str | None = None
    thread_id: int | None = None
    reply_to: int | None = None
    buttons: list[list[dict[str, Any]]] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)

    def button_data(self) -> list[str]:
        return [button["callback_data"] for row in self.buttons for button in row]

    def as_telegram(self, bot: Mapping[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {
            "message_id": self.message_id,
            "from": dict(bot),
            "chat": {"id": self.chat_id, "type": "private" if self.chat_id > 0 else "supergroup"},
            "date": int(time.time()),
            "text": self.visible,
        }
        if self.thread_id is not None:
            message["message_thread_id"] = self.thread_id
        if self.buttons:
            message["reply_markup"] = {"inline_keyboard": self.buttons}
        return message


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # a burst of connections is queued, not dropped and retried

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A bot that stops (or is killed) resets its idle connections: expected, not an error.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeTelegram(TelegramFiles):
    """The fake Bot API; a context manager listening on 127.0.0.1 (an ephemeral port)."""

    def __init__(
        self, token: str = DEFAULT_TOKEN, bot_username: str = "hermes_test_bot", port: int = 0
    ) -> None:
        self.token = token
        self.bot = {
            "id": int(token.split(":", 1)[0]),
            "is_bot": True,
            "first_name": "Hermes",
            "username": bot_username,
        }
        self._lock = threading.Condition()
        self._updates: list[dict[str, Any]] = []
        self._next_update = 1
        self._next_message = 1000
        self._floods: dict[str, list[int]] = {}  # method -> [calls left, retry_after]
        self._chat_limits: tuple[int, int, float] | None = None  # (a second, a minute, minute)
        self._posted: dict[int, list[float]] = {}  # chat -> when its posts were taken
        self._conflicts = False
        self.webhook = ""
        """Set by :meth:`set_webhook` (another tool's); deleteWebhook clears it."""
        self._polls = 0  # getUpdates calls so far: a newer one ends a waiting one (409)
        self._failures: dict[str, list[Any]] = {}  # method -> [calls left, status, html]
        self._voice_refused: set[int] = set()
        self._holds: list[tuple[str, str, bool]] = []  # (method, text it contains, drop)
        self._waiting: list[tuple[str, int]] = []  # calls waiting on a hold: (method, thread)
        self._stopping = threading.Event()
        self.messages: dict[int, SentMessage] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        """Every Bot API call in order: (method, parameters)."""
        self.chat_actions: list[tuple[int, str]] = []
        self.callback_answers: list[dict[str, Any]] = []
        self.rejected: list[tuple[str, int, str]] = []
        """Calls answered with an error: (method, error_code, description)."""
        self.confirmed_offset = 0
        self._said: dict[int, dict[str, Any]] = {}  # each user's last message
        self._init_files()
        self._http = _Server(("127.0.0.1", port), _Handler)
        self._http.daemon_threads = True
        self._http.owner = self  # type: ignore[attr-defined] # the handler finds us here
        self._thread = threading.Thread(
            target=self._http.serve_forever, args=(0.05,), daemon=True, name="fake-telegram"
        )

    # --- lifecycle ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def api_url(self) -> str:
        """The adapter's API base (it adds ``/bot<token>/<method>``)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            self._lock.notify_all()
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    # --- what users do -----------------------------------------------------------------------

    def _push(self, kind: str, payload: dict[str, Any]) -> int:
        with self._lock:
            update_id = self._next_update
            self._next_update += 1
            self._updates.append({"update_id": update_id, kind: payload})
            self._lock.notify_all()
        return update_id

    def deliver_again(self, user_id: int) -> None:
        """The user's last message again, as a new update (Telegram resends an update whose
        confirmation was lost): the message keeps its ``message_id``."""
        with self._lock:
            last = self._said[user_id]
        self._push("message", dict(last))

    def _message_id(self) -> int:
        with self._lock:
            self._next_message += 1
            return self._next_message

    def user_says(
        self,
        user_id: int,
        text: str,
        *,
        chat_id: int | None = None,
        username: str | None = None,
        thread_id: int | None = None,
        reply_to: SentMessage | None = None,
    ) -> int:
        """A user sends ``text``: in a DM with the bot by default, else in ``chat_id`` (a
        negative id is a supergroup). ``@<bot>`` in the text and ``/commands`` get their
        entities as Telegram sets them. Returns the message id."""
        return self._user_message(
            user_id,
            {"text": text},
            text,
            chat_id=chat_id,
            username=username,
            thread_id=thread_id,
            reply_to=reply_to,
        )

    def _user_sends(
        self, user_id: int, fields: dict[str, Any], caption: str | None, chat_id: int | None
    ) -> int:
        content = {**fields, **({"caption": caption} if caption else {})}
        return self._user_message(user_id, content, caption or "", chat_id=chat_id)

    def _new_message_id(self) -> int:
        return self._message_id()

    def _user_message(
        self,
        user_id: int,
        content: dict[str, Any],
        text: str,
        *,
        chat_id: int | None = None,
        username: str | None = None,
        thread_id: int | None = None,
        reply_to: SentMessage | None = None,
    ) -> int:
        chat = chat_id if chat_id is not None else user_id
        sender = {
            "id": user_id,
            "is_bot": False,
            "first_name": f"User{user_id}",
            "username": username or f"user{user_id}",
        }
        chat_info: dict[str, Any] = {"id": chat, "type": "private" if chat > 0 else "supergroup"}
        if chat < 0:
            chat_info["title"] = f"Group {chat}"
            if thread_id is not None:
                chat_info["is_forum"] = True
        message_id = self._message_id()
        message: dict[str, Any] = {
            "message_id": message_id,
            "from": sender,
            "chat": chat_info,
            "date": int(time.time()),
            **content,
        }
        entities = self._entities(text)
        if entities:
            message["caption_entities" if "caption" in content else "entities"] = entities
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            message["is_topic_message"] = True
        if reply_to is not None:
            message["reply_to_message"] = reply_to.as_telegram(self.bot)
        with self._lock:
            self._said[user_id] = message
        self._push("message", message)
        return message_id

    def _entities(self, text: str) -> list[dict[str, Any]]:
        entities = []
        mention = f"@{self.bot['username']}"
        start = text.find(mention)
        if start >= 0:
            entities.append(
                {
                    "type": "mention",
                    "offset": _utf16_length(text[:start]),
                    "length": _utf16_length(mention),
                }
            )
        if text.startswith("/"):
            command = text.split(maxsplit=1)[0]
            entities.append({"type": "bot_command", "offset": 0, "length": _utf16_length(command)})
        return entities

    def press(self, user_id: int, message: SentMessage, data: str) -> str:
        """A user presses the button of ``message`` whose callback data is ``data`` (or
        ends with ``:data``); returns the callback query id."""
        matches = [d for d in message.button_data() if d == data or d.endswith(f":{data}")]
        if not matches:
            raise KeyError(f"message {message.message_id} has no button {data!r}")
        query_id = f"cb{self._message_id()}"
        self._push(
            "callback_query",
            {
                "id": query_id,
                "from": {"id": user_id, "is_bot": False, "first_name": f"User{user_id}"},
                "message": message.as_telegram(self.bot),
                "chat_instance": "fake",
                "data": matches[0],
            },
        )
        return query_id

    # --- what the bot did --------------------------------------------------------------------

    def sent(self, chat_id: int | None = None) -> list[SentMessage]:
        with self._lock:
            return [m for m in self.messages.values() if chat_id in (None, m.chat_id)]

    def wait_for(self, predicate: Callable[[list[SentMessage]], Any], timeout: float = 10.0) -> Any:
        """Wait until ``predicate(all sent messages)`` is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                value = predicate(list(self.messages.values()))
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    shown = [m.visible[:80] for m in self.messages.values()]
                    raise TimeoutError(f"the bot did not do that in {timeout} s; sent: {shown}")
                self._lock.wait(min(left, 0.1))

    def wait_for_message(
        self, chat_id: int, containing: str = "", timeout: float = 10.0, buttons: bool = False
    ) -> SentMessage:
        """The first message to ``chat_id`` whose visible text contains ``containing``."""

        def found(messages: list[SentMessage]) -> SentMessage | None:
            for message in messages:
                if (
                    message.chat_id == chat_id
                    and containing in message.visible
                    and (not buttons or message.buttons)
                ):
                    return message
            return None

        result: SentMessage = self.wait_for(found, timeout)
        return result

    # --- misbehaving on demand ---------------------------------------------------------------

    def flood(self, method: str, calls: int, retry_after: int = 1) -> None:
        """The next ``calls`` calls of ``method`` get 429 with ``retry_after`` seconds."""
        with self._lock:
            self._floods[method] = [calls, retry_after]

    def limit_chats(
        self, private_per_second: int = 1, group_per_minute: int = 20, minute: float = 60.0
    ) -> None:
        """Telegram's flood limits per chat, on posts (messages, edits, files): over them,
        429 with ``retry_after`` the seconds until the chat takes one again. ``minute``:
        its length in seconds (shorter, to test a minute's worth quickly)."""
        with self._lock:
            self._chat_limits = (private_per_second, group_per_minute, minute)

    def conflicts(self) -> None:
        """Two copies of a bot polling with one token: a getUpdates still waiting when
        another arrives ends with 409 Conflict, as Telegram ends it."""
        with self._lock:
            self._conflicts = True

    def set_webhook(self, url: str = "https://elsewhere.example/hook") -> None:
        """Another tool sets a webhook for the bot: getUpdates is 409 until it is deleted."""
        with self._lock:
            self.webhook = url
            self._lock.notify_all()

    def fail(self, method: str, calls: int, status: int = 502, html: bool = False) -> None:
        """The next ``calls`` calls of ``method`` get ``status`` (Telegram's own trouble):
        the Bot API's JSON error, or with ``html`` a proxy's HTML page."""
        with self._lock:
            self._failures[method] = [calls, status, html]

    def refuse_voice(self, chat_id: int) -> None:
        """This user's privacy settings refuse voice messages: sendVoice to them is 400
        VOICE_MESSAGES_FORBIDDEN (audio files still go)."""
        with self._lock:
            self._voice_refused.add(chat_id)

    @contextmanager
    def holding(self, method: str, containing: str = "", drop: bool = True) -> Iterator[None]:
        """While inside, calls of ``method`` whose text contains ``containing`` wait. When
        the hold ends they are dropped unanswered (``drop``: the request never reached
        Telegram) or carried out (it did, but the caller may be gone)."""
        hold = (method, containing, drop)
        with self._lock:
            self._holds.append(hold)
        try:
            yield
        finally:
            with self._lock:
                self._holds.remove(hold)
                self._lock.notify_all()

    def held(self, method: str) -> int:
        """How many calls of ``method`` are waiting on a hold right now."""
        with self._lock:
            return sum(1 for name, _ in self._waiting if name == method)

    # --- the protocol ------------------------------------------------------------------------

    def handle(self, token: str, method: str, params: dict[str, Any]) -> Any:
        """Answer one Bot API call; raises _Failure for an error reply."""
        if not _TOKEN_FORM.fullmatch(token):
            raise _Failure(404, "Not Found")
        if token != self.token:
            raise _Failure(401, "Unauthorized")
        with self._lock:
            self.calls.append((method, params))
            failure = self._failures.get(method)
            if failure and failure[0] > 0:
                failure[0] -= 1
                raise _Failure(failure[1], "Internal Server Error", html=failure[2])
            flood = self._floods.get(method)
            if flood and flood[0] > 0:
                flood[0] -= 1
                raise _Failure(429, f"Too Many Requests: retry after {flood[1]}", flood[1])
            if method in _POSTS:
                self._take_chat_slot(params)
            if method == "sendVoice" and _int(params.get("chat_id")) in self._voice_refused:
                raise _Failure(400, "Bad Request: VOICE_MESSAGES_FORBIDDEN")
        self._wait_while_held(method, str(params.get("text", "")))
        handler = getattr(self, f"_api_{method}", None)
        if handler is None:
            raise _Failure(404, "Not Found")
        return handler(params)

    def _take_chat_slot(self, params: dict[str, Any]) -> None:
        """Under the lock: a post to a chat within its limit is counted; over it, 429."""
        chat_id = _int(params.get("chat_id"))
        if self._chat_limits is None or chat_id is None:
            return
        per_second, per_minute, minute = self._chat_limits
        window, allowed = (minute, per_minute) if chat_id < 0 else (1.0, per_second)
        now = time.monotonic()
        recent = [at for at in self._posted.get(chat_id, []) if now - at < window]
        if len(recent) >= allowed:
            retry_after = max(1, math.ceil(window - (now - recent[0])))
            self._posted[chat_id] = recent
            raise _Failure(429, f"Too Many Requests: retry after {retry_after}", retry_after)
        self._posted[chat_id] = [*recent, now]

    def _wait_while_held(self, method: str, text: str) -> None:
        marker = (method, id(threading.current_thread()))

        def holds() -> list[bool]:
            return [drop for m, c, drop in self._holds if m == method and c in text]

        with self._lock:
            held = holds()
            if not held:
                return
            self._waiting = [*self._waiting, marker]
            try:
                while holds():
                    if self._stopping.is_set():
                        raise _Failure(500, "server stopping")
                    self._lock.wait(0.1)
            finally:
                self._waiting = [w for w in self._waiting if w != marker]
        if held[0]:
            raise _Dropped

    def _api_getMe(self, params: dict[str, Any]) -> Any:
        return dict(self.bot)

    def _api_deleteWebhook(self, params: dict[str, Any]) -> Any:
        with self._lock:
            self.webhook = ""
        return True

    def _api_getUpdates(self, params: dict[str, Any]) -> Any:
        offset = int(params.get("offset") or 0)
        limit = max(1, min(100, int(params.get("limit") or 100)))
        deadline = time.monotonic() + float(params.get("timeout") or 0)
        with self._lock:
            self._polls += 1
            poll = self._polls
            self._lock.notify_all()  # a waiting poll learns that a newer one came
            if offset:
                self.confirmed_offset = max(self.confirmed_offset, offset)
                self._updates = [u for u in self._updates if u["update_id"] >= offset]
            while not self._updates and not self._stopping.is_set():
                if self.webhook:
                    raise _Failure(
                        409,
                        "Conflict: can't use getUpdates method while webhook is active; use "
                        "deleteWebhook to delete the webhook first",
                    )
                if self._conflicts and self._polls != poll:
                    raise _Failure(
                        409,
                        "Conflict: terminated by other getUpdates request; make sure that "
                        "only one bot instance is running",
                    )
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._lock.wait(left)
            return self._updates[:limit]

    def _store(self, params: dict[str, Any], message_id: int | None = None) -> SentMessage:
        text = str(params.get("text") or "")
        if not text.strip():
            raise _Failure(400, "Bad Request: message text is empty")
        mode = params.get("parse_mode")
        try:
            visible = visible_text(text, mode)
        except ParseError as exc:
            raise _Failure(400, f"Bad Request: can't parse entities: {exc}") from None
        if len(visible) > MAX_MESSAGE_CHARS:
            raise _Failure(400, "Bad Request: message is too long")
        markup = params.get("reply_markup")
        if isinstance(markup, str):
            markup = json.loads(markup)
        buttons = (markup or {}).get("inline_keyboard") or []
        thread = params.get("message_thread_id")
        reply = params.get("reply_parameters") or {}
        if isinstance(reply, str):
            reply = json.loads(reply)
        return SentMessage(
            message_id=message_id or self._message_id(),
            chat_id=int(params["chat_id"]),
            text=text,
            visible=visible,
            parse_mode=mode,
            thread_id=int(thread) if thread is not None else None,
            reply_to=reply.get("message_id") or params.get("reply_to_message_id"),
            buttons=buttons,
        )

    def _api_sendMessage(self, params: dict[str, Any]) -> Any:
        if "chat_id" not in params:
            raise _Failure(400, "Bad Request: chat_id is empty")
        message = self._store(params)
        with self._lock:
            self.messages[message.message_id] = message
            self._lock.notify_all()
        return message.as_telegram(self.bot)

    def _api_editMessageText(self, params: dict[str, Any]) -> Any:
        message_id = int(params.get("message_id") or 0)
        with self._lock:
            current = self.messages.get(message_id)
        if current is None or current.chat_id != int(params.get("chat_id") or 0):
            raise _Failure(400, "Bad Request: message to edit not found")
        updated = self._store({**params, "message_thread_id": current.thread_id}, message_id)
        if updated.text == current.text and updated.buttons == current.buttons:
            raise _Failure(
                400,
                "Bad Request: message is not modified: specified new message content and "
                "reply markup are exactly the same as a current content and reply markup "
                "of the message",
            )
        updated.edits = [*current.edits, current.visible]
        updated.reply_to = current.reply_to
        with self._lock:
            self.messages[message_id] = updated
            self._lock.notify_all()
        return updated.as_telegram(self.bot)

    def _api_editMessageReplyMarkup(self, params: dict[str, Any]) -> Any:
        message_id = int(params.get("message_id") or 0)
        with self._lock:
            current = self.messages.get(message_id)
            if current is None:
                raise _Failure(400, "Bad Request: message to edit not found")
            markup = params.get("reply_markup") or {}
            if isinstance(markup, str):
                markup = json.loads(markup)
            current.buttons = markup.get("inline_keyboard") or []
            self._lock.notify_all()
            return current.as_telegram(self.bot)

    def _api_sendChatAction(self, params: dict[str, Any]) -> Any:
        with self._lock:
            self.chat_actions.append((int(params["chat_id"]), str(params.get("action"))))
        return True

    def _api_answerCallbackQuery(self, params: dict[str, Any]) -> Any:
        with self._lock:
            self.callback_answers.append(params)
            self._lock.notify_all()
        return True


def _parameters(handler: BaseHTTPRequestHandler, body: bytes) -> dict[str, Any]:
    params: dict[str, Any] = dict(parse_qsl(urlsplit(handler.path).query))
    kind = handler.headers.get("Content-Type", "")
    if body and kind.startswith("multipart/form-data"):
        params.update(multipart_parameters(kind, body))
    elif body and "json" in kind:
        loaded = json.loads(body)
        if isinstance(loaded, dict):
            params.update(loaded)
    elif body:
        params.update(parse_qsl(body.decode()))
    return params


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Headers and body are separate writes: without TCP_NODELAY, Nagle's algorithm
        # holds the body back until the client's delayed ACK (~40 ms on loopback).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # tests read calls from ``FakeTelegram.calls``

    def do_GET(self) -> None:
        self.do_POST()

    def do_POST(self) -> None:
        owner: FakeTelegram = self.server.owner  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if len(body) < length:  # the client went away mid-request: there is no request
            self.close_connection = True
            return
        path = urlsplit(self.path).path.strip("/")
        if path.startswith("file/bot"):  # a download: GET /file/bot<token>/<file_path>
            token, _, file_path = path.removeprefix("file/bot").partition("/")
            self._file(owner.file_content(token, file_path))
            return
        try:
            params = _parameters(self, body)
        except ValueError:
            self._reply(400, {"ok": False, "error_code": 400, "description": "Bad Request"})
            return
        if path.startswith("control/"):
            self._control(owner, path.removeprefix("control/"), params)
            return
        bot, _, method = path.partition("/")
        if not bot.startswith("bot") or not method:
            self._reply(404, {"ok": False, "error_code": 404, "description": "Not Found"})
            return
        try:
            result = owner.handle(bot.removeprefix("bot"), method, params)
        except _Dropped:
            self.close_connection = True
            return
        except _Failure as failure:
            with owner._lock:
                owner.rejected.append((method, failure.code, failure.description))
            payload: dict[str, Any] = {
                "ok": False,
                "error_code": failure.code,
                "description": failure.description,
            }
            if failure.retry_after is not None:
                payload["parameters"] = {"retry_after": failure.retry_after}
            if failure.html:
                self._page(failure.code)
            else:
                self._reply(failure.code, payload)
            return
        self._reply(200, {"ok": True, "result": result})

    def _control(self, owner: FakeTelegram, action: str, params: dict[str, Any]) -> None:
        if action == "say":
            chat = int(params["chat_id"]) if params.get("chat_id") else None
            message_id = owner.user_says(int(params["user_id"]), str(params["text"]), chat_id=chat)
            self._reply(200, {"ok": True, "result": message_id})
        elif action == "sent":
            sent = [
                {"message_id": m.message_id, "chat_id": m.chat_id, "text": m.visible}
                for m in owner.sent()
            ]
            self._reply(200, {"ok": True, "result": sent})
        else:
            self._reply(404, {"ok": False, "error_code": 404, "description": "Not Found"})

    def _file(self, data: bytes | None) -> None:
        if data is None:
            self._reply(404, {"ok": False, "error_code": 404, "description": "Not Found"})
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _page(self, status: int) -> None:
        """A proxy's error page in front of the Bot API: HTML, not JSON."""
        page = f"<html><body><h1>{status} Bad Gateway</h1></body></html>"
        self._write(status, "text/html", page.encode())

    def _reply(self, status: int, payload: Any) -> None:
        self._write(status, "application/json", json.dumps(payload).encode())

    def _write(self, status: int, content_type: str, data: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True  # the client went away (a killed gateway)


def main() -> None:
    parser = argparse.ArgumentParser(description="A fake Telegram Bot API on loopback.")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--token", default=DEFAULT_TOKEN)
    args = parser.parse_args()
    with FakeTelegram(token=args.token, port=args.port) as server:
        print(f"fake Bot API at {server.api_url} (token {args.token})", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
