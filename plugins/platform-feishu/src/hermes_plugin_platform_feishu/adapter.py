"""The Feishu (and Lark) adapter: a self-built app's bot. Events come over the long
connection or as HTTP callbacks (:mod:`.events`); replies go out through the IM API as
interactive cards, which are updated in place while a reply streams.

What delivery it can promise: an event is acknowledged once its message is stored, so one
Feishu sends again (it does, when unacknowledged) keeps its ``message_id`` and is answered
once. A reply sent again by the ledger carries the same ``uuid``, which Feishu answers
with the message it already made (for an hour)."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import mimetypes
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hermes_commons.platform_files import IncomingFile, hand_over_with_files
from hermes_commons.sending import DUPLICATE_NOTE, send_in_parts
from hermes_plugin_platform_feishu.api import CredentialsRefused, FeishuApi, FeishuError
from hermes_plugin_platform_feishu.cards import answered_card, question_card, reply_card
from hermes_plugin_platform_feishu.events import (
    LongConnection,
    Refused,
    checked_callback,
    dispatcher,
    load_sdk,
)
from hermes_plugin_platform_feishu.reading import Fetch, press_of, read_message
from hermes_plugin_platform_feishu.settings import FeishuSettings
from hermes_sdk.platform import (
    ChatOrder,
    ChatRef,
    Choice,
    MessageGone,
    NotSent,
    PlatformContext,
    PlatformHost,
    PlatformNotConfigured,
    TypedAnswers,
    split_message,
)

if TYPE_CHECKING:
    from aiohttp import web

    from hermes_sdk.media import Attachment

__all__ = ["FeishuAdapter"]

log = logging.getLogger("hermes.feishu")

MAX_MESSAGE_CHARS = 4000
"""A card takes 30 KB of JSON; 4,000 characters of any script stay well within it."""
ORIGINAL_GONE = frozenset({230011, 231003})
"""The message replied to was recalled or deleted: the reply goes to the chat instead."""
EDIT_GONE = frozenset({230011, 230031, 231003})
"""Recalled, deleted, or older than the 14 days a card can be updated for."""
CLOSED_KEPT = 512
REFUSAL_LOG_SECONDS = 60.0


class FeishuAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = True

    def __init__(self, context: PlatformContext) -> None:
        self.settings = FeishuSettings.from_context(context)
        self.media = context.media()
        self.api = FeishuApi(self.settings)
        self._allowed = frozenset(str(u) for u in context.config.get("allowed_users") or ())
        self._order = ChatOrder()
        self._typed = TypedAnswers()
        self.bot_open_id = ""
        self._topics: OrderedDict[str, str] = OrderedDict()
        """Each topic's latest message: what a send into the topic replies to."""
        self._asked: dict[str, str] = {}
        """Open questions' texts, for the card their answer leaves."""
        self._closed: OrderedDict[str, None] = OrderedDict()
        """Questions a press here closed: a second press at the same moment does not."""
        self._refusals_logged = 0.0

    async def run(self, host: PlatformHost) -> None:
        try:
            bot = await self.api.call("GET", "/open-apis/bot/v3/info")
        except CredentialsRefused as exc:
            raise PlatformNotConfigured(
                f"Feishu refused the app's credentials ({exc}): set FEISHU_APP_ID and "
                "FEISHU_APP_SECRET to those of Credentials & Basic Info, and the domain "
                "(feishu or lark) to where the app was made"
            ) from None
        self.bot_open_id = str((bot.get("bot") or {}).get("open_id") or "")
        await load_sdk()
        if self.settings.mode == "webhook":
            url = await host.http_route(self.settings.path, self._callbacks(host))
            log.info("feishu: callbacks served at %s%s", url, self.settings.path)
            await asyncio.Event().wait()  # events arrive on the listener
        else:
            events = dispatcher(
                self.settings,
                asyncio.get_running_loop(),
                functools.partial(self._message, host),
                functools.partial(self._press, host),
            )
            log.info("feishu: connecting to %s over the long connection", self.settings.base_url)
            await LongConnection(self.settings, events).run()

    # --- receiving -------------------------------------------------------------------

    def _callbacks(self, host: PlatformHost) -> Any:
        """The HTTP callbacks' handler: each checked (:func:`checked_callback`), then
        handled on this loop; answered 200 once its message is stored, 500 if it could not
        be (Feishu sends it again)."""
        from aiohttp import web

        async def callback(request: web.Request) -> web.StreamResponse:
            if request.method != "POST":
                return web.json_response({"msg": "POST events here"}, status=405)
            body = await request.read()
            try:
                kind, event = checked_callback(body, request.headers, self.settings)
            except Refused as exc:
                self._log_refusal(str(exc))
                return web.json_response({"msg": str(exc)}, status=exc.status)
            if kind == "url_verification":
                return web.json_response({"challenge": str(event.get("challenge") or "")})
            inner = event.get("event")
            if not isinstance(inner, dict):
                inner = {}
            try:
                if kind == "im.message.receive_v1":
                    await self._message(host, inner)
                elif kind == "card.action.trigger":
                    return web.json_response(await self._press(host, inner))
            except Exception as exc:  # noqa: BLE001 - 500: Feishu sends it again
                log.warning("feishu: an event could not be taken (%s)", exc)
                return web.json_response({"msg": "not stored; send it again"}, status=500)
            return web.json_response({"msg": "success"})

        return callback

    def _log_refusal(self, why: str) -> None:
        now = time.monotonic()
        if now - self._refusals_logged > REFUSAL_LOG_SECONDS:
            self._refusals_logged = now
            log.warning("feishu: a callback not from Feishu was refused: %s", why)

    async def _message(self, host: PlatformHost, event: dict[str, Any]) -> None:
        read = read_message(event, self.bot_open_id, self._allowed)
        if read is None:
            return
        inbound, fetches = read.inbound, read.files
        if inbound.chat.thread_id:  # replies made later (a file, a question) go in here
            self._topics[inbound.chat.thread_id] = inbound.message_id
            self._topics.move_to_end(inbound.chat.thread_id)
            while len(self._topics) > CLOSED_KEPT:
                self._topics.popitem(last=False)
        files = [self._incoming(inbound.message_id, fetch) for fetch in fetches]

        async def deliver() -> None:
            typed = (inbound.chat, inbound.user_id, inbound.text)
            if not files and await self._typed.answer(host, *typed):
                return
            unaddressed = inbound.chat.chat_type != "private" and not inbound.addressed
            if unaddressed and self.settings.require_mention:
                return
            await hand_over_with_files(
                host, inbound, files, self.media, lambda line: self.send(inbound.chat, line)
            )

        await self._order.run(inbound.chat, deliver)

    def _incoming(self, message_id: str, fetch: Fetch) -> IncomingFile:
        async def download(limit: int) -> bytes:
            return await self.api.download(message_id, fetch.key, fetch.kind, limit)

        return IncomingFile(
            name=fetch.name,
            declared=mimetypes.guess_type(fetch.name)[0],
            size=None,
            download=download,
            expect="image" if fetch.expect_image else None,
        )

    async def _press(self, host: PlatformHost, event: dict[str, Any]) -> dict[str, Any]:
        """A card button: the answer to a question, told in a toast; the card shows the
        outcome once the question is closed by this press."""
        press = press_of(event, self._allowed)
        if press is None:
            return {}
        was_open = host.question_open(press.request_id)
        toast = await host.pressed(press)
        answer: dict[str, Any] = {"toast": {"type": "info", "content": toast}}
        first_to_close = press.request_id not in self._closed  # no await since: one wins
        if host.question_open(press.request_id) or not was_open or not first_to_close:
            return answer  # someone else's question, or one already answered
        self._closed[press.request_id] = None
        while len(self._closed) > CLOSED_KEPT:
            self._closed.popitem(last=False)
        self._typed.settle(press.request_id, False)
        asked = self._asked.pop(press.request_id, "The question")
        answer["card"] = {"type": "raw", "data": answered_card(asked, toast)}
        return answer

    # --- sending ---------------------------------------------------------------------

    async def _post(
        self, chat: ChatRef, kind: str, content: str, reply_to: str | None, key: str | None
    ) -> str:
        """One message: a reply to ``reply_to`` in a group (in its topic, if it has one),
        else a new message in the chat. ``key`` makes a retry give back the first one."""
        body: dict[str, Any] = {"msg_type": kind, "content": content}
        if key:
            body["uuid"] = key
        try:
            if reply_to and (chat.chat_type != "private" or chat.thread_id):
                path = f"/open-apis/im/v1/messages/{reply_to}/reply"
                reply = {**body, "reply_in_thread": chat.thread_id is not None}
                try:
                    made = await self.api.call("POST", path, body=reply)
                    return str(made["data"]["message_id"])
                except FeishuError as exc:
                    if exc.code not in ORIGINAL_GONE:
                        raise
            # In a topic, a reply inside it to its latest message (a new message at the
            # chat's level would start another topic).
            anchor = self._topics.get(chat.thread_id or "")
            if anchor and anchor != reply_to:
                return await self._post(chat, kind, content, anchor, key)
            made = await self.api.call(
                "POST",
                "/open-apis/im/v1/messages",
                body={**body, "receive_id": chat.chat_id},
                params={"receive_id_type": "chat_id"},
            )
            return str(made["data"]["message_id"])
        except FeishuError as exc:
            if exc.status >= 500 and exc.code == -1 and not key:
                raise ConnectionError(f"Feishu answered {exc}") from None  # maybe made
            raise exc.not_sent() from None
        except CredentialsRefused as exc:
            raise NotSent(f"Feishu refused the app's credentials: {exc}") from None

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        """A reply sent again carries the same uuids as the first time: within the hour
        Feishu keeps them, it gives back the message it made (and the note a retry puts in
        front is not seen); later, the note says it may be a duplicate."""
        noted = bool(reply_to) and text.startswith(DUPLICATE_NOTE)
        plain = text[len(DUPLICATE_NOTE) :].lstrip("\n") if noted else text
        # Cut as the first attempt was (without the note), so each part keeps its uuid.
        keys = split_message(plain, MAX_MESSAGE_CHARS)
        parts = [f"{DUPLICATE_NOTE}\n\n{keys[0]}", *keys[1:]] if noted and keys else keys
        numbered = iter(range(len(parts)))

        async def one(part: str) -> str:
            number = next(numbered)
            key = None
            if reply_to:
                seed = f"{chat.chat_id}\0{reply_to}\0{number}\0{keys[number]}".encode()
                key = hashlib.sha256(seed).hexdigest()[:48]
            return await self._post(chat, "interactive", reply_card(part), reply_to, key)

        return await send_in_parts(parts, one)

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        try:
            await self.api.call(
                "PATCH",
                f"/open-apis/im/v1/messages/{message_id}",
                body={"content": reply_card(text)},
            )
        except FeishuError as exc:
            if exc.code in EDIT_GONE or exc.status == 404:
                raise MessageGone(str(exc)) from None
            raise exc.not_sent() from None

    async def typing(self, chat: ChatRef) -> None:
        """Feishu shows a bot no typing indicator."""

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        """A card with a button per choice; the word typed back answers too."""
        text = self._typed.prompt(chat, question, choices, request_id)
        if len(text) > MAX_MESSAGE_CHARS:  # a card takes 30 KB: the question goes first
            await self.send(chat, question)
            text = self._typed.prompt(
                chat, "Your choice, for the question above:", choices, request_id
            )
            question = question[:200] + "…"
        self._asked[request_id] = question
        while len(self._asked) > CLOSED_KEPT:
            self._asked.pop(next(iter(self._asked)))
        await self._post(
            chat, "interactive", question_card(chat, text, choices, request_id), None, None
        )

    async def send_file(
        self, chat: ChatRef, attachment: Attachment, *, caption: str | None = None
    ) -> list[str]:
        """An image as an image message; Opus audio as a voice message; anything else as a
        file."""
        data = await asyncio.to_thread(attachment.read_bytes)
        name = attachment.name or "file"
        try:
            if attachment.kind == "image":
                key = await self.api.upload("image", data, name)
                kind, content = "image", {"image_key": key}
            else:
                opus = attachment.mime in ("audio/ogg", "audio/opus")
                key = await self.api.upload("file", data, name, "opus" if opus else "stream")
                kind, content = ("audio" if opus else "file"), {"file_key": key}
        except FeishuError as exc:
            raise exc.not_sent() from None
        except CredentialsRefused as exc:
            raise NotSent(f"Feishu refused the app's credentials: {exc}") from None
        ids = [await self._post(chat, kind, json.dumps(content), None, None)]
        if caption:
            ids += await self.send(chat, caption)
        return ids

    async def aclose(self) -> None:
        await self.api.aclose()
