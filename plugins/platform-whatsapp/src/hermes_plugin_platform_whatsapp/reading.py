"""A verified webhook's payload, read: the messages people sent this number (their text,
their files by media id, what they replied to), the replies they chose with a button or a
list, and the fate of what the bot sent (``statuses``).

The payload (Meta's "messages" field)::

    {"object": "whatsapp_business_account", "entry": [{"changes": [{"field": "messages",
     "value": {"metadata": {"phone_number_id": ...}, "contacts": [...],
               "messages": [...], "statuses": [...]}}]}]}

A business account's numbers share one webhook: only this number's changes are read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_sdk.media import AttachmentKind
from hermes_sdk.platform import ChatRef, Inbound, unread_attachment_note

__all__ = ["Chosen", "MediaRef", "Read", "Said", "Sent", "read_payload"]

PLATFORM = "whatsapp"
_MEDIA: Mapping[str, AttachmentKind | None] = {
    "image": "image",
    "audio": "audio",
    "video": None,
    "document": "document",
    "sticker": "image",
}
"""Message types that carry a file, and what the file must turn out to be."""


@dataclass(frozen=True)
class MediaRef:
    """A file a message carries: fetched by id from the Graph API, if the sender is let in."""

    media_id: str
    name: str
    mime: str | None
    expect: AttachmentKind | None


@dataclass(frozen=True)
class Said:
    """A person's message, ready for the gateway, and its files."""

    inbound: Inbound
    files: tuple[MediaRef, ...] = ()
    sent_at: float | None = None
    """When the person sent it (Meta may deliver it days later)."""


@dataclass(frozen=True)
class Chosen:
    """A reply button or list row pressed: its id is ``REQUEST:VALUE``."""

    chat: ChatRef
    user_id: str
    message_id: str
    choice_id: str
    sent_at: float | None = None


@dataclass(frozen=True)
class Sent:
    """What became of a message the bot sent: sent, delivered, read or failed."""

    message_id: str
    recipient: str
    status: str
    errors: tuple[str, ...] = ()
    codes: tuple[int, ...] = ()


@dataclass
class Read:
    said: list[Said] = field(default_factory=list)
    chosen: list[Chosen] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)


def _values(payload: Mapping[str, Any], phone_number_id: str) -> Iterator[Mapping[str, Any]]:
    if payload.get("object") != "whatsapp_business_account":
        return
    for entry in payload.get("entry") or ():
        for change in (entry or {}).get("changes") or ():
            if not isinstance(change, Mapping) or change.get("field") != "messages":
                continue
            value = change.get("value") or {}
            if str((value.get("metadata") or {}).get("phone_number_id")) == phone_number_id:
                yield value


def _names(value: Mapping[str, Any]) -> dict[str, str]:
    names = {}
    for contact in value.get("contacts") or ():
        if isinstance(contact, Mapping) and contact.get("wa_id"):
            names[str(contact["wa_id"])] = str((contact.get("profile") or {}).get("name") or "")
    return names


def _file(kind: str, body: Mapping[str, Any], message_id: str) -> MediaRef:
    mime = str(body.get("mime_type") or "") or None
    if kind == "audio" and body.get("voice"):
        default = "voice-note.ogg"
    else:
        extension = (mime or "").split("/")[-1].split(";")[0] or "bin"
        default = f"{kind}-{message_id[-8:]}.{extension}"
    return MediaRef(
        media_id=str(body["id"]),
        name=str(body.get("filename") or default),
        mime=mime,
        expect=_MEDIA[kind],
    )


def _text(message: Mapping[str, Any]) -> tuple[str, tuple[MediaRef, ...]]:
    kind = str(message.get("type") or "")
    message_id = str(message.get("id") or "")
    body = message.get(kind) or {}
    if kind == "text":
        return str(body.get("body") or ""), ()
    if kind in _MEDIA and isinstance(body, Mapping) and body.get("id"):
        if kind == "video":  # not a kind the media layer keeps: named to the agent
            return _caption(body, unread_attachment_note("a video")), ()
        return str(body.get("caption") or ""), (_file(kind, body, message_id),)
    if kind == "button":  # a template's quick reply
        return str(body.get("text") or body.get("payload") or ""), ()
    if kind == "location":
        where = ", ".join(str(body[k]) for k in ("name", "address") if body.get(k))
        return f"[a location: {body.get('latitude')}, {body.get('longitude')} {where}]".strip(), ()
    if kind == "contacts":
        people = [str((c.get("name") or {}).get("formatted_name") or "?") for c in body or ()]
        return f"[contact cards: {', '.join(people)}]", ()
    return unread_attachment_note(f"a WhatsApp {kind or 'message'}"), ()


def _caption(body: Mapping[str, Any], note: str) -> str:
    return "\n\n".join(part for part in (str(body.get("caption") or ""), note) if part)


def read_payload(payload: Mapping[str, Any], phone_number_id: str) -> Read:
    read = Read()
    for value in _values(payload, phone_number_id):
        names = _names(value)
        for message in value.get("messages") or ():
            if not isinstance(message, Mapping) or not message.get("from") or not message.get("id"):
                continue
            sender, message_id = str(message["from"]), str(message["id"])
            chat = ChatRef(platform=PLATFORM, chat_id=sender, chat_type="private")
            stamp = str(message.get("timestamp") or "")
            sent_at = float(stamp) if stamp.isdigit() else None
            kind = message.get("type")
            if kind == "reaction":  # a reaction is no message to answer
                continue
            if kind == "interactive":
                answer = message.get("interactive") or {}
                picked = answer.get("button_reply") or answer.get("list_reply") or {}
                if picked.get("id"):
                    chosen = Chosen(chat, sender, message_id, str(picked["id"]), sent_at)
                    read.chosen.append(chosen)
                continue
            text, files = _text(message)
            read.said.append(
                Said(
                    Inbound(
                        chat=chat,
                        user_id=sender,
                        user_name=names.get(sender, ""),
                        text=text,
                        message_id=message_id,
                    ),
                    files,
                    sent_at,
                )
            )
        for status in value.get("statuses") or ():
            if isinstance(status, Mapping) and status.get("id"):
                errors = [e for e in status.get("errors") or () if isinstance(e, Mapping)]
                read.sent.append(
                    Sent(
                        message_id=str(status["id"]),
                        recipient=str(status.get("recipient_id") or ""),
                        status=str(status.get("status") or ""),
                        errors=tuple(
                            str(e.get("title") or e.get("message") or e.get("code")) for e in errors
                        ),
                        codes=tuple(int(e["code"]) for e in errors if str(e.get("code")).isdigit()),
                    )
                )
    return read
