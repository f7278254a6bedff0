"""The Telegram adapter: long polling for updates, and replies as HTML messages that are split
at 4,096 characters, edited while streaming and fall back to plain text when Telegram
refuses the markup."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from hermes_plugin_platform_telegram.client import BotApi, TelegramError, TelegramUnreachable
from hermes_plugin_platform_telegram.render import to_html
from hermes_plugin_platform_telegram.updates import Bot, GroupPolicy, read_update
from hermes_sdk.platform import (
    ButtonPress,
    ChatRef,
    Choice,
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


def _chat_of(update: dict[str, Any]) -> object:
    message = update.get("message") or (update.get("callback_query") or {}).get("message") or {}
    chat_id = (message.get("chat") or {}).get("id")
    return chat_id if chat_id is not None else ("update", update.get("update_id"))


class TelegramAdapter:
    max_message_chars = MAX_MESSAGE_CHARS
    can_edit = True

    def __init__(self, context: PlatformContext) -> None:
        config = context.config
        variable = str(config.get("token_env") or DEFAULT_TOKEN_VARIABLE)
        token = context.secrets.get(variable, "").strip()
        if not token:
            raise PlatformNotConfigured(
                f"set {variable} in HERMES_HOME/.env to the token @BotFather gave your bot"
            )
        self.poll_timeout = int(config.get("poll_timeout_seconds", 25))
        self.groups = GroupPolicy(
            require_mention=bool(config.get("require_mention", True)),
            chats={str(k): v for k, v in (config.get("chats") or {}).items()},
        )
        self.api = BotApi(
            token,
            str(config.get("api_url") or DEFAULT_API_URL),
            timeout=float(config.get("request_timeout_seconds", 30)),
            max_flood_wait=float(config.get("max_flood_wait_seconds", 300)),
        )
        self.bot: Bot | None = None

    # --- receiving ---------------------------------------------------------------------------

    async def run(self, host: PlatformHost) -> None:
        try:
            me = await self.api.call("getMe", {})
        except TelegramError as exc:
            if exc.code == 401:
                raise RuntimeError(
                    "Telegram refused the bot token (401 Unauthorized); check it with @BotFather"
                ) from None
            raise
        self.bot = Bot(int(me["id"]), str(me.get("username") or ""))
        # Long polling and a webhook exclude each other: drop a webhook left by another tool.
        await self.api.call("deleteWebhook", {"drop_pending_updates": False})
        log.info("telegram: polling as @%s", self.bot.username)
        offset = 0
        failures = 0
        while True:
            try:
                updates = await self.api.call(
                    "getUpdates",
                    {
                        "offset": offset,
                        "timeout": self.poll_timeout,
                        "allowed_updates": ["message", "callback_query"],
                    },
                    timeout=self.poll_timeout + 15,
                )
            except TelegramUnreachable as exc:
                delay = POLL_ERROR_BACKOFF[min(failures, len(POLL_ERROR_BACKOFF) - 1)]
                failures += 1
                log.warning("telegram: %s; polling again in %s s", exc, delay)
                await asyncio.sleep(delay)
                continue
            failures = 0
            for update in updates or ():
                offset = max(offset, int(update["update_id"]) + 1)
            await self._dispatch_all(host, updates or ())
            # The next getUpdates with the new offset confirms these: the gateway has stored
            # each message by now, so a crash from here on loses none of them.

    async def _dispatch_all(self, host: PlatformHost, updates: Sequence[dict[str, Any]]) -> None:
        """Chats are independent, so their updates are handed over at once (the gateway
        stores them with one disk sync); within a chat, each waits for the one before, so
        "do this" then "/stop" keep their order."""
        by_chat: dict[object, list[dict[str, Any]]] = {}
        for update in updates:
            by_chat.setdefault(_chat_of(update), []).append(update)
        await asyncio.gather(*(self._dispatch_in_order(host, chat) for chat in by_chat.values()))

    async def _dispatch_in_order(self, host: PlatformHost, updates: list[dict[str, Any]]) -> None:
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
            if message.get("message_id"):  # one answer per question: take the buttons away
                await self._quietly(
                    "editMessageReplyMarkup",
                    {
                        "chat_id": int(event.chat.chat_id),
                        "message_id": message["message_id"],
                        "reply_markup": {"inline_keyboard": []},
                    },
                )
            return
        await host.receive(event)

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
