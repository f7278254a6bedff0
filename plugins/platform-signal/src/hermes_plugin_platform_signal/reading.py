"""An envelope from signal-cli's event stream, read (its JSON form: signal-cli's
``json/*.java``): a person's message (text, attachments, a group's mention or reply), or a
reaction to one of the bot's messages (an answer to a question).

A message is known by its sender and its timestamp (milliseconds): what a quote, a
reaction and a read receipt name, and so its id here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_sdk.platform import ChatRef, Inbound

__all__ = ["Attached", "Reacted", "Said", "read_envelope"]

PLATFORM = "signal"
GROUP_PREFIX = "group:"
"""A group's chat id here is ``group:ID`` (hermes-agent's form), a person's their number."""
MENTION = "\ufffc"
"""What signal-cli puts in a message's text where a mention stands."""


@dataclass(frozen=True)
class Attached:
    attachment_id: str
    name: str
    mime: str | None
    size: int | None


@dataclass(frozen=True)
class Said:
    inbound: Inbound
    files: tuple[Attached, ...] = ()
    timestamp: int = 0
    sender: str = ""
    """Who to name in a read receipt (the number, else the service id)."""


@dataclass(frozen=True)
class Reacted:
    chat: ChatRef
    user_id: str
    emoji: str
    target_timestamp: int
    removed: bool


@dataclass
class Me:
    """The bot's own account: its number, and its service id once seen."""

    number: str
    uuid: str | None = None
    known: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.known.add(self.number)

    def is_me(self, number: Any, uuid: Any) -> bool:
        return bool(number and str(number) in self.known) or bool(uuid and str(uuid) == self.uuid)


def _sender(envelope: Mapping[str, Any]) -> str:
    return str(envelope.get("sourceNumber") or envelope.get("sourceUuid") or "")


def _text(message: Mapping[str, Any], me: Me) -> tuple[str, bool]:
    """The text with each mention written as @who; whether the bot is one of them. Each
    mention stands in the text as U+FFFC, in order (signal-cli's offsets count UTF-16
    units, not characters, so they are not used)."""
    text = str(message.get("message") or "")
    mentions = sorted(
        (m for m in message.get("mentions") or () if isinstance(m, Mapping)),
        key=lambda m: int(m.get("start") or 0),
    )
    mentioned = False
    parts = text.split(MENTION)
    written = [parts[0]]
    for number, rest in enumerate(parts[1:]):
        mention: Mapping[str, Any] = mentions[number] if number < len(mentions) else {}
        if me.is_me(mention.get("number"), mention.get("uuid")):
            mentioned, who = True, "bot"
        else:
            who = str(mention.get("number") or mention.get("uuid") or "someone")
        written.append(f"@{who}{rest}")
    return "".join(written), mentioned


def read_envelope(
    envelope: Mapping[str, Any], me: Me, require_mention: bool = True
) -> Said | Reacted | None:
    """What an envelope is to the gateway, or None (a receipt, typing, our own device's
    message, a group change, chatter in a group not addressed to the bot)."""
    message = envelope.get("dataMessage")
    sender = _sender(envelope)
    if not isinstance(message, Mapping) or not sender:
        return None
    if me.is_me(envelope.get("sourceNumber"), envelope.get("sourceUuid")):
        return None
    timestamp = int(message.get("timestamp") or envelope.get("timestamp") or 0)
    group = (message.get("groupInfo") or {}).get("groupId")
    if group and (message.get("groupInfo") or {}).get("type") == "UPDATE":
        return None
    chat = ChatRef(
        platform=PLATFORM,
        chat_id=f"{GROUP_PREFIX}{group}" if group else sender,
        chat_type="group" if group else "private",
    )
    reaction = message.get("reaction")
    if isinstance(reaction, Mapping):
        return Reacted(
            chat=chat,
            user_id=sender,
            emoji=str(reaction.get("emoji") or ""),
            target_timestamp=int(reaction.get("targetSentTimestamp") or 0),
            removed=bool(reaction.get("isRemove")),
        )
    text, mentioned = _text(message, me)
    quote = message.get("quote") or {}
    replied_to_me = isinstance(quote, Mapping) and me.is_me(
        quote.get("authorNumber"), quote.get("authorUuid")
    )
    files = tuple(
        Attached(
            attachment_id=str(a["id"]),
            name=str(a.get("filename") or f"attachment-{a['id']}"),
            mime=str(a.get("contentType") or "") or None,
            size=int(a["size"]) if isinstance(a.get("size"), int) else None,
        )
        for a in message.get("attachments") or ()
        if isinstance(a, Mapping) and a.get("id")
    )
    if not text.strip() and not files:
        return None  # a sticker, a remote delete, an empty message
    addressed = not group or mentioned or replied_to_me or not require_mention
    inbound = Inbound(
        chat=chat,
        user_id=sender,
        user_name=str(envelope.get("sourceName") or ""),
        text=text,
        message_id=f"{envelope.get('sourceUuid') or sender}:{timestamp}",
        addressed=addressed,
    )
    return Said(inbound, files, timestamp, sender)
