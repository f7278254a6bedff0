"""Files that come with a chat message, for platform adapters: each is checked before it is
downloaded (its announced size against its kind's cap), downloaded only when the sender is
allowed in (a stranger's file is never fetched: the gateway refuses or pairs them first),
then sniffed and kept by the media layer. What is refused comes back as one line each, for
the adapter to show in the chat; what could not be downloaded is named in the message's text,
so the agent can say so::

    files = [IncomingFile(name=f.name, declared=f.mime, size=f.size, download=fetcher(f))]
    read = await receive_files(host, inbound, files, self.media)
    for line in read.refusals:
        await self.send(inbound.chat, line)
    if read.message is not None:
        await host.receive(read.message)
"""

from __future__ import annotations

import asyncio
import logging
import mimetypes
from collections.abc import AsyncIterable, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from hermes_sdk.media import Attachment, AttachmentKind, MediaCache, MediaRefused, kind_of_mime
from hermes_sdk.platform import Inbound, PlatformHost

__all__ = [
    "MAX_FILES",
    "FilesRead",
    "IncomingFile",
    "hand_over_with_files",
    "read_capped",
    "receive_files",
]

log = logging.getLogger("hermes.platform")

MAX_FILES = 10
"""Files of one message that are read; the rest are named only."""


@dataclass(frozen=True)
class IncomingFile:
    """A file a message carries, before it is downloaded."""

    name: str
    declared: str | None
    """The type the platform or the sender's app gave; checked against the content."""
    size: int | None
    """The size the platform announced, if it did: checked before downloading."""
    download: Callable[[int], Awaitable[bytes]]
    """Fetch the content, reading at most the given number of bytes (raise past it)."""
    expect: AttachmentKind | None = None
    """What the message says it is (a photo must be an image)."""

    def kind(self) -> AttachmentKind:
        if self.expect is not None:
            return self.expect
        declared = self.declared or mimetypes.guess_type(self.name)[0] or ""
        return kind_of_mime(declared)


@dataclass(frozen=True)
class FilesRead:
    message: Inbound | None
    """The message with its attachments, and notes for what could not be read; None when
    nothing is left to hand over (a file alone, refused)."""
    refusals: list[str] = field(default_factory=list)
    """One line per refused file, to show in the chat."""


async def receive_files(
    host: PlatformHost,
    message: Inbound,
    files: Sequence[IncomingFile],
    media: MediaCache,
    *,
    max_files: int = MAX_FILES,
) -> FilesRead:
    """``message`` (whose text is the caption, possibly empty) with ``files`` read."""
    if not files:
        return FilesRead(message)
    if not await host.allows(message.user_id):
        names = ", ".join(file.name for file in files)
        text = f"{message.text}\n\n[files sent: {names}]".strip()
        return FilesRead(replace(message, text=text))
    kept: list[Attachment] = []
    notes: list[str] = []
    refusals: list[str] = []
    for number, file in enumerate(files):
        if number >= max_files:
            notes.append(f"[{file.name} was not read: only the first {max_files} files are]")
            continue
        kind = file.kind()
        try:
            if file.size is not None:
                media.check_size(kind, file.size, file.name)
            data = await file.download(media.limits.cap(kind))
            kept.append(
                await asyncio.to_thread(
                    media.ingest, data, name=file.name, declared=file.declared, expect=file.expect
                )
            )
        except MediaRefused as exc:
            refusals.append(str(exc))
        except Exception as exc:  # noqa: BLE001 - named to the agent; the message goes on
            why = " ".join(str(exc).split())[:200] or type(exc).__name__
            notes.append(f"[{file.name} was sent but could not be downloaded: {why}]")
    text = "\n\n".join(part for part in (message.text, *notes) if part)
    if not kept and not text.strip():
        return FilesRead(None, refusals)
    return FilesRead(replace(message, text=text, attachments=tuple(kept)), refusals)


async def read_capped(chunks: AsyncIterable[bytes], limit: int) -> bytes:
    """A download's body (``response.content.iter_chunked(...)``, ``aiter_bytes()``), read
    until it passes ``limit``: then ValueError, before the rest is read."""
    read: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise ValueError(f"it is over {limit} bytes")
        read.append(chunk)
    return b"".join(read)


async def hand_over_with_files(
    host: PlatformHost,
    message: Inbound,
    files: Sequence[IncomingFile],
    media: MediaCache,
    tell: Callable[[str], Awaitable[object]],
) -> None:
    """:func:`receive_files`, then each refusal told in the chat with ``tell`` (a notice:
    one that cannot be sent is logged) and the message handed to the gateway, if anything
    is left of it."""
    read = await receive_files(host, message, files, media)
    for line in read.refusals:
        log.info("%s: %s", message.chat.platform, line)
        try:
            await tell(line)
        except Exception as exc:  # noqa: BLE001 - only a notice; the log has it
            log.info("%s: could not say that a file was refused: %s", message.chat.platform, exc)
    if read.message is not None:
        await host.receive(read.message)
