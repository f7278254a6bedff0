"""How the kit's model servers check the images in a request, in the words of the services'
own errors, and how a test reads them back.

OpenAI's chat completions take ``image_url`` parts in a user message's content list (a
``data:`` URL or an https URL). Anthropic's Messages API takes ``image`` blocks whose
``source`` is base64 data with a ``media_type`` of JPEG, PNG, GIF or WebP, which must match
the bytes, at most 5 MB each."""

from __future__ import annotations

import base64
import binascii
from typing import Any

__all__ = ["anthropic_image_problem", "images_in", "openai_image_problem"]

_MAGIC = {
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}
ANTHROPIC_IMAGE_BYTES = 5 * 1024 * 1024


def _decoded(data: Any) -> bytes | None:
    if not isinstance(data, str) or not data:
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _matches(mime: str, data: bytes) -> bool:
    return any(data.startswith(magic) for magic in _MAGIC.get(mime, ()))


def openai_image_problem(body: Any) -> str | None:
    messages = body.get("messages") if isinstance(body, dict) else None
    for index, message in enumerate(messages if isinstance(messages, list) else ()):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for number, part in enumerate(content):
            where = f"messages[{index}].content[{number}]"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                if not isinstance(part.get("text"), str):
                    return f"Invalid type for '{where}.text': expected a string."
                continue
            if kind != "image_url":
                return f"Invalid value: '{kind}'. Supported values are: 'text' and 'image_url'."
            if message.get("role") != "user":
                return "Image URLs are only allowed for messages with role 'user'."
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else None
            if not isinstance(url, str):
                return f"Missing required parameter: '{where}.image_url.url'."
            if url.startswith("https://"):
                continue
            head, _, data = url.partition(",")
            mime = head.removeprefix("data:").removesuffix(";base64")
            raw = _decoded(data) if head.startswith("data:") and head.endswith(";base64") else None
            if raw is None or mime not in _MAGIC or not _matches(mime, raw):
                return (
                    f"Invalid image in '{where}': you uploaded an unsupported image. Please "
                    "make sure your image has of one the following formats: ['png', 'jpeg', "
                    "'gif', 'webp']."
                )
    return None


def anthropic_image_problem(body: Any) -> str | None:
    messages = body.get("messages") if isinstance(body, dict) else None
    for index, message in enumerate(messages if isinstance(messages, list) else ()):
        content = message.get("content") if isinstance(message, dict) else None
        for number, block in enumerate(content if isinstance(content, list) else ()):
            if not isinstance(block, dict) or block.get("type") != "image":
                continue
            where = f"messages.{index}.content.{number}.image.source"
            if message.get("role") != "user":
                return f"{where}: images are only allowed in user messages"
            source = block.get("source")
            if not isinstance(source, dict) or source.get("type") not in ("base64", "url"):
                return (
                    f"{where}: Input tag does not match any of the expected tags: 'base64', 'url'"
                )
            if source["type"] == "url":
                continue
            mime = source.get("media_type")
            if mime not in _MAGIC:
                return (
                    f"{where}.base64.media_type: Input should be 'image/jpeg', 'image/png', "
                    "'image/gif' or 'image/webp'"
                )
            raw = _decoded(source.get("data"))
            if raw is None:
                return f"{where}.base64.data: invalid base64 data"
            if len(source["data"]) > ANTHROPIC_IMAGE_BYTES:
                return f"{where}.base64.data: image exceeds 5 MB maximum"
            if not _matches(mime, raw):
                return f"{where}.base64.data: Image does not match the provided media type {mime}"
    return None


def images_in(body: Any) -> list[tuple[str, bytes]]:
    """Every image of a request, as (MIME type, bytes), in either wire format."""
    found: list[tuple[str, bytes]] = []
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else ():
            if not isinstance(part, dict):
                continue
            if part.get("type") == "image_url":
                head, _, data = str(part["image_url"]["url"]).partition(",")
                found.append(
                    (head.removeprefix("data:").removesuffix(";base64"), _decoded(data) or b"")
                )
            elif part.get("type") == "image" and part["source"].get("type") == "base64":
                found.append(
                    (part["source"]["media_type"], _decoded(part["source"]["data"]) or b"")
                )
    return found
