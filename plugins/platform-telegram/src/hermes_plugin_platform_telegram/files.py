"""Files in Telegram messages: which one a message carries (the largest size of a photo, a
voice note, an audio file, a document), and which Bot API method sends a file back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_sdk.media import Attachment, AttachmentKind

__all__ = ["DOWNLOAD_LIMIT", "FileRef", "file_of", "upload_method"]

DOWNLOAD_LIMIT = 20 * 1024 * 1024
"""Telegram lets bots download files up to 20 MB (getFile)."""


@dataclass(frozen=True)
class FileRef:
    """A file a message carries, before it is downloaded."""

    file_id: str
    size: int | None
    name: str
    declared: str | None
    """The type Telegram (or the sender's app) gave; checked against the content."""
    expect: AttachmentKind | None
    """What the message says it is (a photo must be an image)."""


def _size(item: Mapping[str, Any]) -> int | None:
    size = item.get("file_size")
    return int(size) if isinstance(size, int) else None


def file_of(message: Mapping[str, Any]) -> FileRef | None:
    """The file Hermes reads from ``message``, or None (text, a sticker, a video ...)."""
    photos = message.get("photo")
    if isinstance(photos, list) and photos:
        largest = max(photos, key=lambda p: (p.get("width", 0) * p.get("height", 0), _size(p) or 0))
        return FileRef(str(largest["file_id"]), _size(largest), "photo.jpg", "image/jpeg", "image")
    voice = message.get("voice")
    if isinstance(voice, Mapping):
        declared = str(voice.get("mime_type") or "audio/ogg")
        return FileRef(str(voice["file_id"]), _size(voice), "voice.ogg", declared, "audio")
    audio = message.get("audio")
    if isinstance(audio, Mapping):
        name = str(audio.get("file_name") or "audio")
        mime = audio.get("mime_type")
        return FileRef(str(audio["file_id"]), _size(audio), name, mime, "audio")
    document = message.get("document")
    if isinstance(document, Mapping):
        name = str(document.get("file_name") or "document")
        return FileRef(
            str(document["file_id"]), _size(document), name, document.get("mime_type"), None
        )
    return None


def upload_method(attachment: Attachment) -> tuple[str, str]:
    """(Bot API method, its file field) for sending ``attachment``: OGG audio as a voice
    note (Telegram plays Opus in OGG as one), other audio as a track, an image as a photo,
    anything else as a document."""
    if attachment.kind == "audio":
        if attachment.mime in ("audio/ogg", "audio/opus"):
            return "sendVoice", "voice"
        return "sendAudio", "audio"
    if attachment.kind == "image" and attachment.mime in ("image/jpeg", "image/png"):
        return "sendPhoto", "photo"
    return "sendDocument", "document"
