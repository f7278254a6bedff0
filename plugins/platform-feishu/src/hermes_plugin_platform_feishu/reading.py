"""Feishu's events as the gateway's messages: ``im.message.receive_v1`` (text, rich text
posts, images, files, audio, video; mentions resolved to names) and a card button's
``card.action.trigger``."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from hermes_sdk.platform import ButtonPress, ChatRef, Inbound

__all__ = ["Fetch", "Read", "press_of", "read_message"]

PLATFORM = "feishu"
ANSWER = "hermes_answer"
"""Marks the value of a question's button, so another card's press is not taken for one."""


@dataclass(frozen=True, slots=True)
class Fetch:
    """A file a message carries, fetched through the message resource API."""

    key: str
    kind: str
    """The resource ``type``: ``image`` or ``file`` (audio and video are files)."""
    name: str
    expect_image: bool = False


@dataclass(frozen=True, slots=True)
class Read:
    inbound: Inbound
    files: tuple[Fetch, ...]


def _chat(message: dict[str, Any]) -> ChatRef:
    chat_id = str(message.get("chat_id") or "")
    if message.get("chat_type") == "p2p":
        return ChatRef(PLATFORM, chat_id, "private")
    thread = str(message.get("thread_id") or "") or None  # a topic's replies stay in it
    return ChatRef(PLATFORM, chat_id, "group", thread)


def user_of(ids: dict[str, Any], allowed: Collection[str]) -> str:
    """The sender's ``open_id`` (stable for this app), or their ``user_id`` when
    ``allowed_users`` lists that (hermes-agent's allowlists take either)."""
    user_id = str(ids.get("user_id") or "")
    if user_id and user_id in allowed:
        return user_id
    return str(ids.get("open_id") or user_id or ids.get("union_id") or "")


def read_message(event: dict[str, Any], bot_open_id: str, allowed: Collection[str]) -> Read | None:
    """The message of an ``im.message.receive_v1`` event; None for a bot's or an app's own
    (no loops) and for what carries no message."""
    sender = event.get("sender") or {}
    message = event.get("message") or {}
    if sender.get("sender_type") not in (None, "user") or not message.get("message_id"):
        return None
    ids = sender.get("sender_id") or {}
    if bot_open_id and ids.get("open_id") == bot_open_id:
        return None
    try:
        content = json.loads(str(message.get("content") or "{}"))
    except ValueError:
        content = {}
    if not isinstance(content, dict):
        content = {}
    mentions = [m for m in message.get("mentions") or () if isinstance(m, dict)]
    names = {str(m.get("key")): str(m.get("name") or "") for m in mentions}
    bot_keys = {
        str(m.get("key")) for m in mentions if (m.get("id") or {}).get("open_id") == bot_open_id
    }
    kind = str(message.get("message_type") or "")
    text, files = _content(kind, content, names, bot_keys)
    chat = _chat(message)
    addressed = chat.chat_type == "private" or bool(bot_keys)
    inbound = Inbound(
        chat=chat,
        user_id=user_of(ids, allowed),
        text=text.strip(),
        message_id=str(message["message_id"]),
        addressed=addressed,
    )
    return Read(inbound, files)


def _content(
    kind: str, content: dict[str, Any], names: dict[str, str], bot_keys: set[str]
) -> tuple[str, tuple[Fetch, ...]]:
    if kind == "text":
        return _named(str(content.get("text") or ""), names, bot_keys), ()
    if kind == "post":
        return _post(content, names, bot_keys)
    if kind == "image" and content.get("image_key"):
        return "", (Fetch(str(content["image_key"]), "image", "image.png", expect_image=True),)
    if kind in ("file", "audio", "media") and content.get("file_key"):
        default = {"audio": "voice.opus", "media": "video.mp4"}.get(kind, "file")
        name = str(content.get("file_name") or default)
        return "", (Fetch(str(content["file_key"]), "file", name),)
    if kind == "sticker":
        return "[a sticker]", ()
    return f"[a {kind or 'message'} message, which Hermes does not read]", ()


def _named(text: str, names: dict[str, str], bot_keys: set[str]) -> str:
    """``@_user_1`` placeholders as the names they stand for; the bot's own left out."""
    text = text.replace("@_all", "@all")
    for key in sorted(names, key=len, reverse=True):  # @_user_10 before @_user_1
        if key in bot_keys:
            text = text.replace(f"{key} ", "").replace(key, "")
        else:
            text = text.replace(key, f"@{names[key]}")
    return text


def _post(
    content: dict[str, Any], names: dict[str, str], bot_keys: set[str]
) -> tuple[str, tuple[Fetch, ...]]:
    """A rich text post: its title and paragraphs as text, its images as files. A post
    received has no locale level; one sent by the API may (``{"zh_cn": {...}}``)."""
    if "content" not in content and content:
        content = next((v for v in content.values() if isinstance(v, dict)), {})
    lines = [str(content.get("title") or "")]
    files: list[Fetch] = []
    for paragraph in content.get("content") or ():
        line = []
        for element in paragraph if isinstance(paragraph, list) else ():
            tag = element.get("tag")
            if tag in ("text", "md"):
                line.append(str(element.get("text") or ""))
            elif tag == "a":
                line.append(f"[{element.get('text') or ''}]({element.get('href') or ''})")
            elif tag == "at":
                key = str(element.get("user_id") or "")
                if key not in bot_keys:
                    line.append(f"@{element.get('user_name') or names.get(key) or key}")
            elif tag == "code_block":
                line.append(f"\n```{element.get('language') or ''}\n{element.get('text')}\n```\n")
            elif tag == "img" and element.get("image_key"):
                files.append(Fetch(str(element["image_key"]), "image", "image.png", True))
            elif tag == "media" and element.get("file_key"):
                files.append(Fetch(str(element["file_key"]), "file", "video.mp4"))
        lines.append("".join(line).strip())
    return "\n".join(line for line in lines if line), tuple(files)


def press_of(event: dict[str, Any], allowed: Collection[str]) -> ButtonPress | None:
    """A question's button pressed (``card.action.trigger``); None for another card's."""
    action = event.get("action") or {}
    value = action.get("value") or {}
    if not isinstance(value, dict) or value.get(ANSWER) != "1":
        return None
    context = event.get("context") or {}
    operator = event.get("operator") or {}
    chat_id = str(context.get("open_chat_id") or "")
    chat_type = "private" if value.get("private") == "1" else "group"
    return ButtonPress(
        chat=ChatRef(PLATFORM, chat_id, chat_type, str(value.get("thread") or "") or None),
        user_id=user_of(operator, allowed),
        request_id=str(value.get("request") or ""),
        choice=str(value.get("choice") or ""),
    )
