"""QQ's message events (as qq-botpy parses them) as the gateway's messages: a direct
message (C2C), a group's @-message, a guild channel's @-message and a guild's direct
message; their images and files."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hermes_sdk.platform import ChatRef, Inbound

__all__ = ["Fetch", "Read", "read_event"]

PLATFORM = "qqbot"
PASSIVE_SECONDS = {"user": 3600.0, "group": 300.0, "channel": 300.0, "dms": 300.0}
"""How long after a message QQ lets the bot answer it (a passive reply)."""


@dataclass(frozen=True, slots=True)
class Fetch:
    url: str
    name: str
    declared: str | None
    expect_image: bool = False


@dataclass(frozen=True, slots=True)
class Read:
    inbound: Inbound
    files: tuple[Fetch, ...]


def kind_of(chat_id: str) -> str:
    """``user``, ``group``, ``channel`` or ``dms``: where a chat id (``group:...``) sends."""
    kind, _, target = chat_id.partition(":")
    return kind if target else "user"


def read_event(event: str, message: Any, bot_id: str) -> Read | None:
    """The message of ``event`` (``c2c_message_create`` ...); None for another event."""
    author = message.author
    if event == "c2c_message_create":
        user = str(author.user_openid or "")
        chat = ChatRef(PLATFORM, f"user:{user}", "private")
    elif event == "group_at_message_create":
        user = str(author.member_openid or "")
        chat = ChatRef(PLATFORM, f"group:{message.group_openid}", "group")
    elif event == "at_message_create":
        user = str(getattr(author, "id", "") or "")
        chat = ChatRef(PLATFORM, f"channel:{message.channel_id}", "channel")
    elif event == "direct_message_create":
        user = str(getattr(author, "id", "") or "")
        chat = ChatRef(PLATFORM, f"dms:{message.guild_id}", "private")
    else:
        return None
    if not user or not message.id:
        return None
    text = str(message.content or "")
    if bot_id:  # a guild's mention of the bot, <@!id>
        text = re.sub(rf"<@!?{re.escape(bot_id)}>", "", text)
    files = []
    for attachment in message.attachments or ():
        url = str(attachment.url or "")
        if url.startswith("//"):
            url = f"https:{url}"
        elif url and "://" not in url:  # a guild's: the host and path alone
            url = f"https://{url}"
        if not url:
            continue
        declared = str(attachment.content_type or "") or None
        image = bool(declared and declared.startswith("image/"))
        name = str(attachment.filename or ("image.jpg" if image else "file"))
        files.append(Fetch(url, name, declared if declared and "/" in declared else None, image))
    inbound = Inbound(
        chat=chat,
        user_id=user,
        user_name=str(getattr(author, "username", "") or ""),
        text=text.strip(),
        message_id=str(message.id),
        addressed=True,  # QQ sends a bot only the group and channel messages that @ it
    )
    return Read(inbound, tuple(files))
