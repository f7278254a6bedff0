"""An event from the bridge's ``GET /messages``, read (its form: ``extractBridgeEvent`` in
hermes-agent's ``bridge_helpers.js``): a person's message (text, a file the bridge wrote
to disk, a group's mention or reply to the bot), a vote in one of the bot's polls (an
answer to a question), or nothing the gateway wants.

People are known by their number (``15551234567``), whatever WhatsApp id the event names
them by (``15551234567@s.whatsapp.net``, ``...:12@s.whatsapp.net`` for a device, or a
privacy id ``98765@lid``, whose number the bridge's session keeps in
``lid-mapping-98765_reverse.json``); a privacy id whose number is unknown stays as it is.
A private chat's id here is the person's; a group's is its WhatsApp id (``...@g.us``)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_commons.wake_words import woken
from hermes_sdk.platform import ChatRef, Inbound

__all__ = ["File", "People", "Said", "Voted", "read_event"]

PLATFORM = "whatsapp_bridge"
GROUP = "@g.us"
_SKIPPED = frozenset({"reaction", "sticker", "poll"})
"""Kinds of message that say nothing to answer (a poll someone else made, a sticker)."""


@dataclass(frozen=True)
class File:
    path: str
    name: str
    mime: str | None


@dataclass(frozen=True)
class Said:
    inbound: Inbound
    chat_jid: str
    """The WhatsApp id the message came in (a reply goes back to it)."""
    files: tuple[File, ...] = ()

    @property
    def chat(self) -> ChatRef:
        return self.inbound.chat


@dataclass(frozen=True)
class Voted:
    chat: ChatRef
    user_id: str
    poll_id: str
    options: tuple[str, ...]


class People:
    """Numbers behind WhatsApp ids, from the bridge's session folder."""

    def __init__(self, session: Path) -> None:
        self.session = session
        self._known: dict[str, str] = {}

    def number(self, jid: str) -> str:
        user, _, domain = jid.partition("@")
        user = user.split(":")[0]
        if domain.split("@")[-1] != "lid":
            return user.lstrip("+")
        if user not in self._known:
            number = self._lid_number(user)
            if number is None:
                return f"{user}@lid"  # looked up again next time: the bridge may learn it
            self._known[user] = number
        return self._known[user]

    def _lid_number(self, lid: str) -> str | None:
        if not re.fullmatch(r"\d+", lid):
            return None
        try:
            found = json.loads((self.session / f"lid-mapping-{lid}_reverse.json").read_text())
        except (OSError, ValueError):
            return None
        number = str(found or "").split("@")[0].split(":")[0]
        return number if re.fullmatch(r"\d{6,15}", number) else None


def _chat(event: Mapping[str, Any], people: People) -> tuple[ChatRef, str, str]:
    chat_jid = str(event.get("chatId") or "")
    sender = people.number(str(event.get("senderId") or chat_jid))
    group = chat_jid.endswith(GROUP)
    chat = ChatRef(
        platform=PLATFORM,
        chat_id=chat_jid if group else sender,
        chat_type="group" if group else "private",
    )
    return chat, chat_jid, sender


def read_event(
    event: Mapping[str, Any],
    people: People,
    *,
    mentions: Sequence[re.Pattern[str]] = (),
    require_mention: bool = True,
) -> Said | Voted | None:
    """What an event is to the gateway, or None: a broadcast or channel post, the owner's
    own message forwarded, a reaction, a sticker, an empty message."""
    chat_jid = str(event.get("chatId") or "")
    if (
        not event.get("messageId")
        or not chat_jid
        or chat_jid.endswith(("@broadcast", "@newsletter"))
    ):
        return None
    if event.get("fromOwner"):
        return None  # the account's owner writing to someone: not a message to the bot
    chat, chat_jid, sender = _chat(event, people)
    kind = str(event.get("mediaType") or "")
    if kind == "poll_update":
        update = ((event.get("nativeMetadata") or {}).get("pollUpdate")) or {}
        options = tuple(str(o) for o in update.get("selectedOptions") or ())
        poll_id = str(update.get("pollId") or event.get("quotedMessageId") or "")
        if not poll_id or not options:
            return None  # a vote taken back
        return Voted(chat, sender, poll_id, options)
    if kind in _SKIPPED:
        return None
    text = str(event.get("body") or "")
    files: tuple[File, ...] = ()
    if event.get("hasMedia"):
        name = str(event.get("fileName") or "")
        files = tuple(
            File(str(path), name or Path(str(path)).name, str(event.get("mime") or "") or None)
            for path in event.get("mediaUrls") or ()
            if isinstance(path, str) and path
        )
        if text == f"[{kind} received]":
            text = ""  # the bridge's stand-in for no caption
    if not text.strip() and not files:
        return None
    addressed = True
    if chat.chat_type == "group":
        bots = {people.number(str(b)) for b in event.get("botIds") or ()}
        mentioned = any(people.number(str(m)) in bots for m in event.get("mentionedIds") or ())
        quoted = str(event.get("quotedParticipant") or "")
        replied = bool(quoted) and people.number(quoted) in bots
        said = text
        for raw in event.get("botIds") or ():  # "@15550001111 what is..." reads "what is..."
            user = str(raw).split("@")[0].split(":")[0]
            text = re.sub(rf"@{re.escape(user)}\b\s*", "", text) if user else text
        text = text if text.strip() or files else said  # a bare "@bot" stays as it was
        text, wake = woken(text, mentions)
        addressed = mentioned or replied or wake or not require_mention
    inbound = Inbound(
        chat=chat,
        user_id=sender,
        user_name=str(event.get("senderName") or sender),
        text=text.strip(),
        message_id=str(event["messageId"]),
        addressed=addressed,
    )
    return Said(inbound, chat_jid, files)
