"""Telegram updates as the gateway's events: who wrote what, where, and whether it was said
to the bot."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_sdk.platform import ButtonPress, ChatRef, Inbound, unread_attachment_note

__all__ = ["Bot", "GroupPolicy", "read_update"]

PLATFORM = "telegram"


@dataclass(frozen=True)
class Bot:
    id: int
    username: str


@dataclass(frozen=True)
class GroupPolicy:
    """``require_mention`` (default true): in groups, answer only messages that mention the
    bot, reply to it or are commands for it; ``chats`` overrides it per chat id."""

    require_mention: bool = True
    chats: Mapping[str, Mapping[str, Any]] | None = None

    def requires_mention(self, chat_id: str) -> bool:
        override = (self.chats or {}).get(chat_id) or {}
        return bool(override.get("require_mention", self.require_mention))


def _utf16_slice(text: str, offset: int, length: int) -> str:
    """Telegram's entity offsets count UTF-16 code units."""
    encoded = text.encode("utf-16-le")
    return encoded[offset * 2 : (offset + length) * 2].decode("utf-16-le", errors="replace")


def _chat(message: Mapping[str, Any]) -> ChatRef | None:
    chat = message.get("chat") or {}
    kinds = {"private": "private", "group": "group", "supergroup": "group"}
    kind = kinds.get(str(chat.get("type")))
    if kind is None:
        return None  # channels: the bot does not converse there
    thread = message.get("message_thread_id") if message.get("is_topic_message") else None
    return ChatRef(PLATFORM, str(chat.get("id")), kind, None if thread is None else str(thread))


def _addressed(message: Mapping[str, Any], text: str, bot: Bot) -> tuple[bool, str]:
    """Whether a group message is for the bot, and its text without the bot's @name."""
    handle = f"@{bot.username}".lower()
    addressed = False
    for entity in message.get("entities") or ():
        piece = _utf16_slice(text, int(entity.get("offset", 0)), int(entity.get("length", 0)))
        kind = entity.get("type")
        if (
            (kind == "mention" and piece.lower() == handle)
            or (kind == "text_mention" and (entity.get("user") or {}).get("id") == bot.id)
            or (kind == "bot_command" and ("@" not in piece or piece.lower().endswith(handle)))
        ):
            addressed = True
    replied = message.get("reply_to_message") or {}
    # In a forum topic every message "replies" to the topic's first (service) message.
    if (replied.get("from") or {}).get("id") == bot.id and "forum_topic_created" not in replied:
        addressed = True
    cleaned = text
    if addressed:
        index = cleaned.lower().find(handle)
        while index >= 0:
            cleaned = cleaned[:index] + cleaned[index + len(handle) :]
            index = cleaned.lower().find(handle)
        cleaned = re.sub(r" {2,}", " ", cleaned).strip() or text
    return addressed, cleaned


MEDIA = {
    "photo": "a photo",
    "video": "a video",
    "video_note": "a video message",
    "animation": "a GIF",
    "voice": "a voice message",
    "audio": "an audio file",
    "document": "a file",
    "location": "a location",
    "contact": "a contact",
    "poll": "a poll",
}
"""What a message without text may carry, as the agent is told about it."""


def _text(message: Mapping[str, Any]) -> str | None:
    """The message's text or caption; for media without either, a note saying what was
    sent (so the user hears that it was not read, instead of nothing); a sticker is its
    emoji."""
    text = message.get("text") or message.get("caption")
    if text:
        return str(text)
    sticker = message.get("sticker")
    if sticker is not None:
        return str(sticker.get("emoji") or "") or unread_attachment_note("a sticker")
    for field, what in MEDIA.items():
        if message.get(field):
            return unread_attachment_note(what)
    return None  # a service message: someone joined, a title changed ...


def read_update(
    update: Mapping[str, Any], bot: Bot, groups: GroupPolicy
) -> Inbound | ButtonPress | None:
    """The event in ``update``, or None for what the gateway does not handle (edits,
    channel posts, service messages, group chatter not meant for the bot)."""
    query = update.get("callback_query")
    if query is not None:
        message = query.get("message") or {}
        chat = _chat(message)
        request_id, _, choice = str(query.get("data") or "").rpartition(":")
        if chat is None or not request_id:
            return None
        return ButtonPress(
            chat=chat,
            user_id=str((query.get("from") or {}).get("id")),
            request_id=request_id,
            choice=choice,
        )
    message = update.get("message")
    if not message:
        return None
    chat = _chat(message)
    sender = message.get("from") or {}
    text = _text(message)
    if chat is None or not text or sender.get("is_bot"):
        return None
    addressed = True
    if chat.chat_type == "group":
        addressed, text = _addressed(message, text, bot)
        if not addressed and groups.requires_mention(chat.chat_id):
            return None
    name = sender.get("username")
    return Inbound(
        chat=chat,
        user_id=str(sender.get("id")),
        user_name=f"@{name}" if name else str(sender.get("first_name") or ""),
        text=text,
        message_id=str(message.get("message_id")),
        addressed=addressed,
    )
