"""A Teams activity as the gateway sees it: the chat (personal, a group chat, a channel and
its thread), the sender (their Entra object id), whether the bot was mentioned (by the
mention entities, not the text), the text without the bot's own mention, and the files."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from hermes_sdk.platform import ChatRef, Inbound

__all__ = ["Said", "chat_of", "conversation_id", "read_activity"]

PLATFORM = "teams"
_KINDS = {"personal": "private", "groupChat": "group", "channel": "channel"}
_AT = re.compile(r"<at>(.*?)</at>", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(r"<[^>]+>")
DOWNLOAD_INFO = "application/vnd.microsoft.teams.file.download.info"


@dataclass(frozen=True, slots=True)
class Said:
    inbound: Inbound
    files: tuple[dict[str, Any], ...]
    """Attachments that are files: the download info of one sent in a personal chat, or an
    image pasted in (its ``contentUrl`` on the connector, read with the bot's token)."""


def chat_of(activity: dict[str, Any]) -> ChatRef:
    """The chat an activity belongs to: a channel post's thread is its root's id (from the
    conversation's ``;messageid=``, or the post itself when it starts one)."""
    conversation = activity.get("conversation") or {}
    kind = _KINDS.get(str(conversation.get("conversationType") or ""), "private")
    base, _, thread = str(conversation.get("id") or "").partition(";messageid=")
    if kind != "channel":
        return ChatRef(PLATFORM, base, kind)
    return ChatRef(PLATFORM, base, kind, thread or str(activity.get("id") or "") or None)


def conversation_id(chat: ChatRef) -> str:
    """Where a reply goes: a channel's thread is ``CONVERSATION;messageid=ROOT``."""
    if chat.chat_type == "channel" and chat.thread_id:
        return f"{chat.chat_id};messageid={chat.thread_id}"
    return chat.chat_id


def _text(activity: dict[str, Any], bot_id: str) -> tuple[str, bool]:
    """The text with the bot's mention taken out and others kept as ``@Name``; whether the
    bot was mentioned (an entity naming the activity's recipient)."""
    text = str(activity.get("text") or "")
    mentioned = False
    for entity in activity.get("entities") or ():
        if not isinstance(entity, dict) or entity.get("type") != "mention":
            continue
        who = str((entity.get("mentioned") or {}).get("id") or "")
        if who.lower() == bot_id.lower():
            mentioned = True
            said = str(entity.get("text") or "")
            if said:
                text = text.replace(said, " ")
    text = _AT.sub(lambda m: "@" + m.group(1), text)
    if "<" in text and activity.get("textFormat") != "plain":
        text = _TAGS.sub("", text)
    return " ".join(html.unescape(text).split()), mentioned


def read_activity(activity: dict[str, Any]) -> Said | None:
    """A message activity as the gateway's message, or None (a bot's, an empty one)."""
    sender = activity.get("from") or {}
    recipient = activity.get("recipient") or {}
    if not activity.get("id") or str(sender.get("role") or "") == "bot":
        return None
    bot_id = str(recipient.get("id") or "")
    text, mentioned = _text(activity, bot_id)
    files = tuple(
        a
        for a in activity.get("attachments") or ()
        if isinstance(a, dict)
        and (
            a.get("contentType") == DOWNLOAD_INFO
            or (str(a.get("contentType") or "").startswith("image/") and a.get("contentUrl"))
        )
    )
    if not text and not files:
        return None
    chat = chat_of(activity)
    inbound = Inbound(
        chat=chat,
        user_id=str(sender.get("aadObjectId") or sender.get("id") or ""),
        user_name=str(sender.get("name") or ""),
        text=text,
        message_id=str(activity["id"]),
        addressed=chat.chat_type == "private" or mentioned,
    )
    return Said(inbound=inbound, files=files)
