"""A self-built app's callback (its decrypted XML's fields) as the gateway's message: text,
images, voice, video, files, locations and links. Events (opening the app, a follow) carry
nothing to answer."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_sdk.platform import ChatRef, Inbound

__all__ = ["Fetch", "Read", "message_key", "read_message"]

PLATFORM = "wecom"


@dataclass(frozen=True, slots=True)
class Fetch:
    """A file a message carries, by its MediaId (WeCom keeps it three days)."""

    media_id: str
    name: str
    expect_image: bool = False


@dataclass(frozen=True, slots=True)
class Read:
    inbound: Inbound
    files: tuple[Fetch, ...]


def message_key(fields: dict[str, str]) -> str:
    """What names a callback's message (or event) whichever time WeCom posts it."""
    sender, kind = fields.get("FromUserName", ""), fields.get("MsgType", "")
    return fields.get("MsgId") or f"{sender}:{fields.get('CreateTime', '')}:{kind}"


def read_message(fields: dict[str, str]) -> Read | None:
    """The message the fields carry; None for an event or a message without a sender."""
    kind = fields.get("MsgType", "")
    sender = fields.get("FromUserName", "")
    if kind == "event" or not sender:
        return None
    message_id = message_key(fields)
    text, files = "", tuple[Fetch, ...]()
    media = fields.get("MediaId", "")
    if kind == "text":
        text = fields.get("Content", "")
    elif kind == "image" and media:
        files = (Fetch(media, "image.jpg", expect_image=True),)
    elif kind == "voice" and media:
        files = (Fetch(media, f"voice.{(fields.get('Format') or 'amr').lower()}"),)
    elif kind == "video" and media:
        files = (Fetch(media, "video.mp4"),)
    elif kind == "file" and media:
        files = (Fetch(media, fields.get("FileName") or fields.get("Title") or "file"),)
    elif kind == "location":
        place = fields.get("Label", "")
        text = f"[a location: {place} ({fields.get('Location_X')}, {fields.get('Location_Y')})]"
    elif kind == "link":
        link = f"[a link: {fields.get('Title', '')} {fields.get('Url', '')}]"
        text = f"{link}\n{fields.get('Description', '')}"
    else:
        text = f"[a {kind or 'message'} message, which Hermes does not read]"
    inbound = Inbound(
        chat=ChatRef(PLATFORM, sender, "private"),
        user_id=sender,
        text=text.strip(),
        message_id=message_id,
    )
    return Read(inbound, files)
