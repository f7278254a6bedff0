"""DingTalk's robot messages (Stream mode's ``/v1.0/im/bot/messages/get``) as the
gateway's messages: text, rich text, pictures, files, video, and voice (with DingTalk's own
transcript)."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from hermes_sdk.platform import ChatRef, Inbound

__all__ = ["Fetch", "Read", "read_message", "user_of"]

PLATFORM = "dingtalk"


@dataclass(frozen=True, slots=True)
class Fetch:
    """A file a message carries, fetched by its download code."""

    code: str
    name: str
    expect_image: bool = False


@dataclass(frozen=True, slots=True)
class Read:
    inbound: Inbound
    files: tuple[Fetch, ...]
    webhook: str
    """The message's session webhook, where a reply can go while it lasts."""
    webhook_expires_ms: int


def user_of(message: dict[str, Any], allowed: Collection[str]) -> str:
    """The sender's staff id (stable in the organisation), or their DingTalk id when
    ``allowed_users`` lists that one (or when they are outside the organisation, with no
    staff id)."""
    dingtalk_id = str(message.get("senderId") or "")
    if dingtalk_id and dingtalk_id in allowed:
        return dingtalk_id
    return str(message.get("senderStaffId") or dingtalk_id)


def chat_of(message: dict[str, Any]) -> ChatRef:
    """A group is its conversation id (``cid...``); a one-to-one chat is the person (their
    staff id), which the robot can write to later too."""
    if str(message.get("conversationType")) == "2":
        return ChatRef(PLATFORM, str(message.get("conversationId") or ""), "group")
    person = str(message.get("senderStaffId") or message.get("senderId") or "")
    return ChatRef(PLATFORM, person, "private")


def read_message(message: dict[str, Any], allowed: Collection[str]) -> Read | None:
    """The message a robot callback carries; None for one without an id."""
    if not message.get("msgId"):
        return None
    text, files = _content(message)
    chat = chat_of(message)
    inbound = Inbound(
        chat=chat,
        user_id=user_of(message, allowed),
        user_name=str(message.get("senderNick") or ""),
        text=text.strip(),
        message_id=str(message["msgId"]),
        # DingTalk pushes a robot only the group messages that @ it (isInAtList says so).
        addressed=chat.chat_type == "private" or bool(message.get("isInAtList", True)),
    )
    expires = int(message.get("sessionWebhookExpiredTime") or 0)
    return Read(inbound, files, str(message.get("sessionWebhook") or ""), expires)


def _content(message: dict[str, Any]) -> tuple[str, tuple[Fetch, ...]]:
    kind = str(message.get("msgtype") or "")
    content = message.get("content")
    if isinstance(content, str):  # some kinds carry it as JSON text
        try:
            content = json.loads(content)
        except ValueError:
            content = {}
    if not isinstance(content, dict):
        content = {}
    if kind == "text":
        said = message.get("text")
        return str(said.get("content") or "") if isinstance(said, dict) else "", ()
    if kind == "picture":
        code = content.get("downloadCode") or content.get("pictureDownloadCode")
        return "", (Fetch(str(code), "image.jpg", expect_image=True),) if code else ()
    if kind == "richText":
        texts, files = [], []
        for part in content.get("richText") or ():
            if part.get("text"):
                texts.append(str(part["text"]))
            code = part.get("downloadCode") or part.get("pictureDownloadCode")
            if part.get("type") == "picture" and code:
                files.append(Fetch(str(code), "image.jpg", expect_image=True))
        return "".join(texts), tuple(files)
    if kind == "audio":
        heard = str(content.get("recognition") or "").strip()
        if heard:  # DingTalk's own transcript: what was said, without a download
            return heard, ()
        code = content.get("downloadCode")
        return "", (Fetch(str(code), "voice.amr"),) if code else ()
    if kind in ("file", "video") and content.get("downloadCode"):
        default = "video.mp4" if kind == "video" else "file"
        return "", (Fetch(str(content["downloadCode"]), str(content.get("fileName") or default)),)
    return f"[a {kind or 'message'} message, which Hermes does not read]", ()
