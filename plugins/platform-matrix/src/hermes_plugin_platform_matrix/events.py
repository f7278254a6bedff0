"""Matrix events, as the gateway's messages: who wrote, in which room and thread, and
whether the bot was addressed. Pure functions of the event and what the adapter knows of
the room, so each rule is tested without a server."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_sdk.platform import ChatRef, Inbound

__all__ = [
    "PLATFORM",
    "Bot",
    "RoomFacts",
    "SharedMedia",
    "is_encrypted_message",
    "media_of",
    "read_message",
]

PLATFORM = "matrix"
_FILES = {
    "m.image": "an image",
    "m.file": "a file",
    "m.audio": "a voice or audio message",
    "m.video": "a video",
}


@dataclass(frozen=True, slots=True)
class Bot:
    user_id: str
    display_name: str = ""

    @property
    def localpart(self) -> str:
        return self.user_id[1:].split(":", 1)[0]


@dataclass(frozen=True, slots=True)
class RoomFacts:
    """What decides how a room's message is treated."""

    direct: bool
    """Only the bot and one person are in it."""
    in_thread_with_bot: bool = False
    replied_to_bot: bool = False


def is_encrypted_message(event: Mapping[str, Any]) -> bool:
    return event.get("type") == "m.room.encrypted"


def relation(event: Mapping[str, Any]) -> Mapping[str, Any]:
    content = event.get("content")
    related = content.get("m.relates_to") if isinstance(content, Mapping) else None
    return related if isinstance(related, Mapping) else {}


def thread_of(event: Mapping[str, Any]) -> str | None:
    related = relation(event)
    if related.get("rel_type") == "m.thread" and related.get("event_id"):
        return str(related["event_id"])
    return None


def replied_to(event: Mapping[str, Any]) -> str | None:
    reply = relation(event).get("m.in_reply_to")
    if isinstance(reply, Mapping) and reply.get("event_id"):
        if relation(event).get("is_falling_back") is True:
            return None  # a thread's fallback, not a reply the person chose
        return str(reply["event_id"])
    return None


def is_message(event: Mapping[str, Any], bot: Bot) -> bool:
    """A person's new message (not the bot's own, not an edit, not a bot's notice)."""
    if event.get("type") != "m.room.message" or event.get("sender") == bot.user_id:
        return False
    content = event.get("content")
    if not isinstance(content, Mapping) or "msgtype" not in content:
        return False  # redacted
    return relation(event).get("rel_type") != "m.replace" and content.get("msgtype") != "m.notice"


def _mentions(content: Mapping[str, Any], bot: Bot) -> bool:
    mentions = content.get("m.mentions")
    if isinstance(mentions, Mapping):
        ids = mentions.get("user_ids")
        if isinstance(ids, list) and bot.user_id in ids:
            return True
    formatted = str(content.get("formatted_body") or "")
    if f"matrix.to/#/{bot.user_id}" in formatted:
        return True
    body = str(content.get("body") or "")
    names = [bot.user_id, bot.localpart] + ([bot.display_name] if bot.display_name else [])
    return any(
        re.search(rf"(?<![\w@]){re.escape(name)}(?![\w])", body, re.IGNORECASE) for name in names
    )


def _without_reply_fallback(body: str) -> str:
    """Clients quote the message replied to as ``> ...`` lines before a blank line."""
    lines = body.split("\n")
    if not lines or not lines[0].startswith("> "):
        return body
    for number, line in enumerate(lines):
        if not line.startswith(">"):
            return "\n".join(lines[number:]).lstrip("\n")
    return body


@dataclass(frozen=True, slots=True)
class SharedMedia:
    """The file of an ``m.image`` / ``m.audio`` / ``m.video`` / ``m.file`` event."""

    name: str
    mimetype: str | None
    size: int | None
    url: str
    """Its ``mxc://`` URI."""
    encrypted: Mapping[str, Any] | None = None
    """In an encrypted room, the file's key, IV and hash (``EncryptedFile``): what the
    homeserver holds is ciphertext."""


def media_of(content: Mapping[str, Any]) -> SharedMedia | None:
    """The event's file, if it carries one Hermes can download: ``url`` in a plain room,
    ``file`` (the URL with its key) in an encrypted one."""
    if content.get("msgtype") not in _FILES:
        return None
    secret = content.get("file")
    secret = secret if isinstance(secret, Mapping) and "key" in secret else None
    url = (secret or content).get("url")
    if not isinstance(url, str) or not url.startswith("mxc://"):
        return None
    info = content.get("info")
    info = info if isinstance(info, Mapping) else {}
    size = info.get("size")
    name = str(content.get("filename") or content.get("body") or "file")
    mimetype = info.get("mimetype")
    return SharedMedia(
        name,
        mimetype if isinstance(mimetype, str) else None,
        size if isinstance(size, int) else None,
        url,
        secret,
    )


def text_of(content: Mapping[str, Any]) -> str:
    msgtype = str(content.get("msgtype") or "")
    body = _without_reply_fallback(str(content.get("body") or ""))
    if msgtype in _FILES:
        if media_of(content) is not None:
            # The file comes as an attachment; a body other than its name is a caption.
            filename = content.get("filename")
            return body if filename and body != filename else ""
        return (
            f"[The user sent {_FILES[msgtype]}, {body!r}, which Hermes cannot open here; say "
            "so if the request needs it.]"
        )
    if msgtype == "m.emote":
        return f"* {body}"
    return body


def read_message(
    room_id: str, event: Mapping[str, Any], bot: Bot, facts: RoomFacts, require_mention: bool
) -> Inbound:
    """The gateway's message for a person's event; ``addressed`` is False for what the
    gateway should not see (an unaddressed message in a group room, when mentions are
    required), which may still answer an open question."""
    content = event["content"]
    thread = thread_of(event)
    addressed = (
        facts.direct
        or not require_mention
        or _mentions(content, bot)
        or facts.replied_to_bot
        or facts.in_thread_with_bot
    )
    sender = str(event["sender"])
    return Inbound(
        chat=ChatRef(PLATFORM, room_id, "private" if facts.direct else "group", thread),
        user_id=sender,
        user_name=sender,
        text=text_of(content),
        message_id=str(event["event_id"]),
        addressed=bool(addressed),
    )
