"""A message as BlueBubbles' REST API serializes it (``MessageSerializer``), read: a
person's message (text, attachments, a group's wake word or reply to the bot), a tapback on
one of the bot's messages (an answer to a question), or nothing the gateway wants.

A person's chat id here is their address (``+15551234567`` or an Apple ID's email): the
same conversation's chat guid changes between ``iMessage;-;``, ``SMS;-;`` and ``any;-;``
(macOS 15). A group's is its chat guid (``iMessage;+;chat123``)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_commons.wake_words import woken
from hermes_sdk.platform import ChatRef, Inbound

__all__ = ["Attached", "Said", "Tapback", "read_message"]

PLATFORM = "bluebubbles"
GROUP_STYLE = 43
"""chat.style of a group chat in Messages' database."""
FINISHED = 5
"""An attachment's ``transferState`` once it is on the Mac's disk."""
INLINE_OBJECT = "\ufffc"
"""Where an attachment stands in a message's text."""


@dataclass(frozen=True)
class Attached:
    guid: str
    name: str
    mime: str | None
    size: int | None
    ready: bool = True
    """On the Mac's disk (``transferState`` 5, finished): one still downloading cannot be
    fetched yet."""


@dataclass(frozen=True)
class Said:
    inbound: Inbound
    chat_guid: str
    files: tuple[Attached, ...] = ()


@dataclass(frozen=True)
class Tapback:
    chat: ChatRef
    user_id: str
    kind: str
    """love, like, dislike, laugh, emphasize or question."""
    target: str
    """The guid of the message tapped."""
    removed: bool


def _chat(record: Mapping[str, Any]) -> tuple[str, bool] | None:
    """The message's chat guid and whether it is a group."""
    chats = [c for c in record.get("chats") or () if isinstance(c, Mapping) and c.get("guid")]
    if not chats:
        return None
    chat = chats[0]
    guid = str(chat["guid"])
    return guid, chat.get("style") == GROUP_STYLE or ";+;" in guid


def _target(guid: str) -> str:
    """A tapback names its target as ``p:0/GUID`` (the part tapped) or ``bp:GUID``."""
    return guid.rsplit("/", 1)[-1].removeprefix("bp:")


def _hidden(item: Mapping[str, Any]) -> bool:
    """A link preview's data, which Messages keeps as an attachment nobody sees."""
    name = str(item.get("transferName") or "")
    return bool(item.get("hideAttachment")) or name.endswith(".pluginPayloadAttachment")


def _files(record: Mapping[str, Any]) -> tuple[Attached, ...]:
    found = []
    for item in record.get("attachments") or ():
        if not isinstance(item, Mapping) or not item.get("guid") or _hidden(item):
            continue
        size = item.get("totalBytes")
        state = item.get("transferState")
        found.append(
            Attached(
                guid=str(item["guid"]),
                name=str(item.get("transferName") or f"attachment-{item['guid']}"),
                mime=str(item.get("mimeType") or "") or None,
                size=size if isinstance(size, int) and size > 0 else None,
                ready=not isinstance(state, int) or state == FINISHED,
            )
        )
    return tuple(found)


def read_message(
    record: Mapping[str, Any],
    *,
    mine: set[str],
    mentions: Sequence[re.Pattern[str]],
    require_mention: bool = True,
) -> Said | Tapback | None:
    """What a message is to the gateway, or None: the bot's own (or its Apple ID's other
    devices'), a group's change, an edit's echo, a sticker. ``mine``: guids of messages the
    bot sent (a reply to one in a group is for the bot)."""
    if record.get("isFromMe") or not record.get("guid"):
        return None
    where = _chat(record)
    handle = record.get("handle")
    sender = str(handle.get("address") or "") if isinstance(handle, Mapping) else ""
    if where is None or not sender:
        return None
    chat_guid, group = where
    chat = ChatRef(
        platform=PLATFORM,
        chat_id=chat_guid if group else sender,
        chat_type="group" if group else "private",
    )
    kind = record.get("associatedMessageType")
    if kind not in (None, "", 0, "0"):
        associated = str(record.get("associatedMessageGuid") or "")
        kind = str(kind)
        if not associated or kind.lstrip("-") not in TAPBACKS:
            return None  # a sticker, or a kind this reader does not know
        return Tapback(
            chat=chat,
            user_id=sender,
            kind=kind.lstrip("-"),
            target=_target(associated),
            removed=kind.startswith("-"),
        )
    text = str(record.get("text") or "").replace(INLINE_OBJECT, "").strip()
    files = _files(record)
    if not text and not files:
        return None  # a group's rename or new member, an unsent message
    addressed = True
    if group:
        text, wake = woken(text, mentions)
        replied = str(record.get("threadOriginatorGuid") or "") in mine
        addressed = wake or replied or not require_mention
    inbound = Inbound(
        chat=chat,
        user_id=sender,
        user_name=sender,
        text=text,
        message_id=str(record["guid"]),
        addressed=addressed,
    )
    return Said(inbound, chat_guid, files)


TAPBACKS = frozenset({"love", "like", "dislike", "laugh", "emphasize", "question"})
