"""The Telegram adapter: long polling for updates, and replies as HTML messages that are split
at 4,096 characters, edited while streaming and fall back to plain text when Telegram
refuses the markup."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from hermes_commons.platform_files import IncomingFile, receive_files
from hermes_plugin_platform_telegram.client import BotApi, TelegramError, TelegramUnreachable
from hermes_plugin_platform_telegram.files import DOWNLOAD_LIMIT, FileRef, file_of, upload_method
from hermes_plugin_platform_telegram.render import to_html
from hermes_plugin_platform_telegram.updates import Bot, GroupPolicy, read_update
from hermes_sdk.media import Attachment, MediaRefused, describe_size
from hermes_sdk.platform import (
    ButtonPress,
    ChatRef,
    Choice,
    Inbound,
    MessageGone,
    PlatformContext,
    PlatformHost,
    PlatformNotConfigured,
    split_message,
)

__all__ = ["TelegramAdapter"]

log = logging.getLogger("hermes.telegram")

MAX_MESSAGE_CHARS = 4096
DEFAULT_API_URL = "https://api.telegram.org"
DEFAULT_TOKEN_VARIABLE = "TELEGRAM_BOT_TOKEN"
POLL_ERROR_BACKOFF = (1.0, 2.0, 5.0, 10.0, 30.0)
CONFLICT_BACKOFF = (5.0, 15.0, 30.0, 60.0)
"""Polling again after Telegram's 409 (another copy polls with this token)."""
CONFLICT_QUIET_SECONDS = 600.0
"""Ten minutes without a 409 end a fight: the next one is said again, from 5 s."""
PEEK_SECONDS = 0.02
"""While a batch is being stored, how often to look for newer updates. The next getUpdates
offset tells Telegram it may forget a batch, so it is only sent once the gateway has stored
the batch (synced to disk); until then the loop asks with the old offset, and Telegram
answers at once with that batch again (skipped here) and anything newer. So a disk that
stalls holds up only the confirmation, not the messages behind it."""


def _transient(error: TelegramError) -> bool:
    """Worth polling again for: Telegram's own trouble (5xx, a body in JSON or not), or
    another copy polling (409), which the backoff settles. Anything else is the config's."""
    return error.code >= 500 or error.code == 409


def _chat_of(update: dict[str, Any]) -> object:
    message = update.get("message") or (update.get("callback_query") or {}).get("message") or {}
    chat_id = (message.get("chat") or {}).get("id")
    return chat_id if chat_id is not None else ("update", update.get("update_id"))


class TelegramAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = True

    def __init__(self, context: PlatformContext) -> None:
        config = context.config
        token = context.token(DEFAULT_TOKEN_VARIABLE, "the token @BotFather gave your bot")
        self.poll_timeout = int(config.get("poll_timeout_seconds", 25))
        self.groups = GroupPolicy(
            require_mention=bool(config.get("require_mention", True)),
            chats={str(k): v for k, v in (config.get("chats") or {}).items()},
        )
        self.api_url = str(config.get("api_url") or DEFAULT_API_URL)
        self.api = BotApi(
            token,
            self.api_url,
            timeout=float(config.get("request_timeout_seconds", 30)),
            max_flood_wait=float(config.get("max_flood_wait_seconds", 300)),
        )
        self.bot: Bot | None = None
        self._conflicts = 0  # 409s in this fight with another copy
        self._last_conflict = 0.0
        self._chats: dict[object, asyncio.Task[None]] = {}  # each chat's latest hand-over
        self.media = context.media()

    # --- receiving ---------------------------------------------------------------------------

    async def run(self, host: PlatformHost) -> None:
        try:
            me = await self.api.call("getMe", {})
        except TelegramError as exc:
            if exc.code == 401:  # retried: Telegram has answered 401 in its own outages
                raise RuntimeError(
                    "Telegram refused the bot token (401 Unauthorized): it was revoked or "
                    f"mistyped; put the one @BotFather gives now in {DEFAULT_TOKEN_VARIABLE}"
                ) from None
            if exc.code == 404:
                where = "" if self.api_url == DEFAULT_API_URL else f", or api_url {self.api_url}"
                raise PlatformNotConfigured(
                    "Telegram does not know this bot token's form (404 Not Found): copy it "
                    f"whole from @BotFather into {DEFAULT_TOKEN_VARIABLE} (digits, a colon, "
                    f"then 35 letters, digits, - or _){where}"
                ) from None
            raise
        self.bot = Bot(int(me["id"]), str(me.get("username") or ""))
        # Long polling and a webhook exclude each other: drop a webhook left by another tool.
        await self.api.call("deleteWebhook", {"drop_pending_updates": False})
        log.info("telegram: polling as @%s", self.bot.username)
        offset = 0  # the updates before it are stored: the next getUpdates confirms them
        handed = 0  # the updates before it are handed to the gateway
        storing: deque[tuple[asyncio.Future[list[None]], int]] = deque()  # with its offset
        failures = 0
        try:
            while True:
                if storing:
                    await asyncio.wait({storing[0][0]}, timeout=PEEK_SECONDS)
                while storing and storing[0][0].done():
                    batch, offset = storing.popleft()
                    batch.result()  # not stored: raise; Telegram sends it again after a restart
                try:
                    updates = await self.api.call(
                        "getUpdates",
                        {
                            "offset": offset,
                            "timeout": 0 if storing else self.poll_timeout,
                            "allowed_updates": ["message", "callback_query"],
                        },
                        timeout=self.poll_timeout + 15,
                    )
                except (TelegramUnreachable, TelegramError) as exc:
                    if isinstance(exc, TelegramError) and not _transient(exc):
                        raise
                    if isinstance(exc, TelegramError) and exc.code == 409:
                        await asyncio.sleep(await self._conflicted(exc))
                        continue
                    delay = POLL_ERROR_BACKOFF[min(failures, len(POLL_ERROR_BACKOFF) - 1)]
                    failures += 1
                    log.warning("telegram: %s; polling again in %s s", exc, delay)
                    await asyncio.sleep(delay)
                    continue
                failures = 0
                fresh = [u for u in updates or () if int(u["update_id"]) >= handed]
                if fresh:
                    handed = max(int(u["update_id"]) for u in fresh) + 1
                    storing.append((self._hand_over(host, fresh), handed))
        finally:
            for batch, _ in storing:
                batch.cancel()

    async def _conflicted(self, error: TelegramError) -> float:
        """After a 409 on polling: how long to wait. Another copy polling with this token
        ends each of this one's polls (and this one's end its): backing off lets one win;
        said once per fight (a quiet spell ends it). A webhook set meanwhile (by another
        tool) excludes polling: taken off again, as at start."""
        if "webhook" in error.description:
            log.warning("telegram: a webhook was set for this bot; removing it to poll again")
            await self.api.call("deleteWebhook", {"drop_pending_updates": False})
            return 1.0
        now = time.monotonic()
        if now - self._last_conflict > CONFLICT_QUIET_SECONDS:
            self._conflicts = 0
        self._last_conflict = now
        delay = CONFLICT_BACKOFF[min(self._conflicts, len(CONFLICT_BACKOFF) - 1)]
        if self._conflicts == 0:
            log.error(
                "telegram: another copy of this bot is polling with the same token (a second "
                "gateway, an old service?); stop it, or give this one a bot of its own. "
                "Polling again in %s s",
                delay,
            )
        self._conflicts += 1
        return delay

    def _hand_over(
        self, host: PlatformHost, updates: Sequence[dict[str, Any]]
    ) -> asyncio.Future[list[None]]:
        """Hand a batch to the gateway; done once it is stored. Chats are independent, so
        they go at once (the gateway stores them with one disk sync); within a chat, each
        update waits for the one before, even from an earlier batch, so "do this" then
        "/stop" keep their order."""
        by_chat: dict[object, list[dict[str, Any]]] = {}
        for update in updates:
            by_chat.setdefault(_chat_of(update), []).append(update)
        return asyncio.gather(
            *(self._after_chat(chat, host, chat_updates) for chat, chat_updates in by_chat.items())
        )

    def _after_chat(
        self, chat: object, host: PlatformHost, updates: list[dict[str, Any]]
    ) -> asyncio.Task[None]:
        task = asyncio.ensure_future(self._dispatch_in_order(host, updates, self._chats.get(chat)))
        self._chats[chat] = task

        def forget(done: asyncio.Task[None]) -> None:
            if self._chats.get(chat) is done:
                del self._chats[chat]

        task.add_done_callback(forget)
        return task

    async def _dispatch_in_order(
        self,
        host: PlatformHost,
        updates: list[dict[str, Any]],
        after: asyncio.Task[None] | None,
    ) -> None:
        if after is not None:
            await asyncio.wait({after})  # its failure is raised by its own batch
        for update in updates:
            await self._dispatch(host, update)

    async def _dispatch(self, host: PlatformHost, update: dict[str, Any]) -> None:
        assert self.bot is not None
        event = read_update(update, self.bot, self.groups)
        if event is None:
            return
        if isinstance(event, ButtonPress):
            query = update["callback_query"]
            toast = await host.pressed(event)
            await self._quietly(
                "answerCallbackQuery", {"callback_query_id": query["id"], "text": toast[:200]}
            )
            message = query.get("message") or {}
            # One answer per question: the buttons go once it is answered (or expired); a
            # press that did not answer it (someone else's) leaves them for the one asked.
            still_open = getattr(host, "question_open", None)
            if callable(still_open) and still_open(event.request_id):
                return
            if message.get("message_id"):
                await self._quietly(
                    "editMessageReplyMarkup",
                    {
                        "chat_id": int(event.chat.chat_id),
                        "message_id": message["message_id"],
                        "reply_markup": {"inline_keyboard": []},
                    },
                )
            return
        message = update.get("message") or {}
        ref = file_of(message)
        if ref is not None:
            # The caption as read (a group's @mention of the bot taken out); without one the
            # text is only the note that stood for the file.
            caption = event.text if message.get("caption") else ""
            with_file = await self._with_file(host, event, ref, caption)
            if with_file is None:
                return
            event = with_file
        await host.receive(event)

    async def _with_file(
        self, host: PlatformHost, event: Inbound, ref: FileRef, caption: str
    ) -> Inbound | None:
        """The message with its file downloaded and checked (see
        :func:`~hermes_commons.platform_files.receive_files`); a refused file gets its one line
        back in the chat, and the message goes on only if it had a caption."""

        async def download(limit: int) -> bytes:
            if ref.size is not None and ref.size > DOWNLOAD_LIMIT:
                raise MediaRefused(
                    f"{ref.name} is refused: Telegram lets bots download files up to 20 MB, "
                    f"and it is {describe_size(ref.size)}"
                )
            return await self.api.download(ref.file_id, min(limit, DOWNLOAD_LIMIT))

        incoming = IncomingFile(
            name=ref.name,
            declared=ref.declared,
            size=ref.size,
            download=download,
            expect=ref.expect,
        )
        read = await receive_files(host, replace(event, text=caption), [incoming], self.media)
        for line in read.refusals:
            log.info("telegram: %s", line)
            await self._quietly("sendMessage", {**self._target(event.chat), "text": line})
        return read.message

    async def send_file(
        self, chat: ChatRef, attachment: Attachment, *, caption: str | None = None
    ) -> list[str]:
        """A file as Telegram shows it best: OGG/Opus audio as a voice note, other audio as
        a track, a JPEG or PNG as a photo, anything else as a document."""
        method, field = upload_method(attachment)
        params = self._target(chat)
        if caption:
            params["caption"] = caption[:1024]  # Telegram's caption limit
        data = await asyncio.to_thread(attachment.read_bytes)
        file = (attachment.name, data, attachment.mime)
        try:
            sent = await self.api.upload(method, params, field, file)
        except TelegramError as exc:
            if method != "sendVoice" or "VOICE_MESSAGES_FORBIDDEN" not in exc.description:
                raise
            # The user's privacy settings refuse voice messages from bots: a track plays.
            log.info("telegram: chat %s refuses voice messages; sent as audio", chat.chat_id)
            sent = await self.api.upload("sendAudio", params, "audio", file)
        return [str(sent["message_id"])]

    async def _quietly(self, method: str, params: dict[str, Any]) -> None:
        try:
            await self.api.call(method, params)
        except (TelegramError, TelegramUnreachable) as exc:
            log.info("telegram: %s", exc)

    # --- sending -----------------------------------------------------------------------------

    @staticmethod
    def _target(chat: ChatRef) -> dict[str, Any]:
        params: dict[str, Any] = {"chat_id": int(chat.chat_id)}
        if chat.thread_id is not None:
            params["message_thread_id"] = int(chat.thread_id)
        return params

    async def _send_one(self, params: dict[str, Any], markdown: str) -> str:
        try:
            sent = await self.api.call(
                "sendMessage", {**params, "text": to_html(markdown), "parse_mode": "HTML"}
            )
        except TelegramError as exc:
            if not exc.unparsable:
                raise
            log.info("telegram refused the markup (%s); sending plain text", exc.description)
            sent = await self.api.call("sendMessage", {**params, "text": markdown})
        return str(sent["message_id"])

    async def send(self, chat: ChatRef, text: str, *, reply_to: str | None = None) -> list[str]:
        ids = []
        for number, chunk in enumerate(split_message(text, MAX_MESSAGE_CHARS)):
            params = self._target(chat)
            if number == 0 and reply_to is not None:
                params["reply_parameters"] = {
                    "message_id": int(reply_to),
                    "allow_sending_without_reply": True,
                }
            ids.append(await self._send_one(params, chunk))
        return ids

    async def edit(self, chat: ChatRef, message_id: str, text: str) -> None:
        params = {"chat_id": int(chat.chat_id), "message_id": int(message_id)}
        try:
            try:
                await self.api.call(
                    "editMessageText", {**params, "text": to_html(text), "parse_mode": "HTML"}
                )
            except TelegramError as exc:
                if not exc.unparsable:
                    raise
                await self.api.call("editMessageText", {**params, "text": text})
        except TelegramError as exc:
            if exc.not_modified:
                return
            if exc.gone:
                raise MessageGone(str(exc)) from None
            raise

    async def typing(self, chat: ChatRef) -> None:
        await self.api.call("sendChatAction", {**self._target(chat), "action": "typing"})

    async def ask(
        self, chat: ChatRef, question: str, choices: Sequence[Choice], request_id: str
    ) -> None:
        keyboard = [
            [{"text": choice.label, "callback_data": f"{request_id}:{choice.value}"}]
            for choice in choices
        ]
        await self.api.call(
            "sendMessage",
            {
                **self._target(chat),
                "text": to_html(question),
                "parse_mode": "HTML",
                "reply_markup": {"inline_keyboard": keyboard},
            },
        )

    async def aclose(self) -> None:
        await self.api.aclose()
