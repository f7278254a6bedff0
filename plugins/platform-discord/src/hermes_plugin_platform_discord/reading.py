"""What a Discord message or button press means to the gateway: which chat (a DM, a server
channel or a thread), who wrote it, whether it is meant for the bot, and its text."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from hermes_commons.platform_files import IncomingFile
from hermes_sdk.platform import ChatRef, Inbound

if TYPE_CHECKING:
    import discord

__all__ = ["chat_of", "incoming_files", "read_message"]

PLATFORM = "discord"


def chat_of(channel: object, message_id: int | None = None) -> ChatRef | None:
    """The chat of a message in ``channel``. A DM is private. A thread is a session in its
    channel. A server channel's message that is answered gets a thread of its own, whose
    id is the message's (as Discord numbers a thread started from a message), so the reply
    and everything said in that thread later share one session, however often the message
    is delivered."""
    import discord

    channel_id = getattr(channel, "id", None)
    if channel_id is None:  # an interaction Discord sent without its channel
        return None
    if isinstance(channel, discord.DMChannel) or getattr(channel, "type", None) == (
        discord.ChannelType.private
    ):
        return ChatRef(PLATFORM, str(channel_id), "private")
    if isinstance(channel, discord.Thread):
        return ChatRef(PLATFORM, str(channel.parent_id), "group", thread_id=str(channel_id))
    thread = None if message_id is None else str(message_id)
    return ChatRef(PLATFORM, str(channel_id), "group", thread_id=thread)


def _mention_pattern(bot_id: int) -> re.Pattern[str]:
    return re.compile(rf"<@!?{bot_id}>")


def _own_roles(message: discord.Message, bot_id: int) -> list[int]:
    """The bot's managed role among the roles ``message`` mentions: Discord makes one for
    every bot in a server, and the client's autocomplete offers it beside the bot."""
    return [
        role.id
        for role in message.role_mentions
        if role.tags is not None and role.tags.bot_id == bot_id
    ]


def _addressed(message: discord.Message, bot_id: int) -> bool:
    import discord

    if any(user.id == bot_id for user in message.mentions) or _own_roles(message, bot_id):
        return True
    resolved = message.reference.resolved if message.reference is not None else None
    if isinstance(resolved, discord.Message) and resolved.author.id == bot_id:
        return True
    channel = message.channel
    return isinstance(channel, discord.Thread) and channel.owner_id == bot_id


def _text(message: discord.Message, bot_id: int) -> str:
    text = _mention_pattern(bot_id).sub("", message.content)
    for role in _own_roles(message, bot_id):
        text = text.replace(f"<@&{role}>", "")
    text = re.sub(r"[ \t]{2,}", " ", text).strip()
    forwarded = [
        f"[Forwarded message]\n{_snapshot_text(snapshot, bot_id)}".strip()
        for snapshot in getattr(message, "message_snapshots", None) or ()
    ]
    return "\n\n".join(part for part in (text, *forwarded) if part)


def _snapshot_text(snapshot: discord.MessageSnapshot, bot_id: int) -> str:
    """A forwarded message's text: its content (a mention of the bot in it is the original
    author's, not the forwarder's: left out), and its embeds' titles and descriptions."""
    parts = [_mention_pattern(bot_id).sub("", snapshot.content).strip()]
    for embed in snapshot.embeds:
        parts.extend(str(part) for part in (embed.title, embed.description) if part)
    return "\n".join(part for part in parts if part)


def _attachments(message: discord.Message) -> list[discord.Attachment]:
    """Its own files and those of the messages it forwards."""
    files = list(message.attachments)
    for snapshot in getattr(message, "message_snapshots", None) or ():
        files.extend(snapshot.attachments)
    return files


def incoming_files(message: discord.Message) -> list[IncomingFile]:
    """The message's attachments, downloaded from Discord's CDN when they are read."""
    return [
        IncomingFile(
            name=attachment.filename,
            declared=attachment.content_type,
            size=attachment.size,
            download=_reader(attachment),
        )
        for attachment in _attachments(message)
    ]


def _reader(attachment: discord.Attachment) -> Callable[[int], Awaitable[bytes]]:
    async def download(limit: int) -> bytes:
        if attachment.size > limit:  # announced sizes are checked first; this is a bound
            raise ValueError(f"it is over {limit} bytes")
        return await attachment.read()

    return download


def read_message(
    message: discord.Message,
    bot_id: int,
    *,
    allowed_guilds: frozenset[str],
    require_mention: bool,
) -> Inbound | None:
    """The gateway's view of ``message``, or None for what it does not handle: the bot's own
    and other bots' messages, servers not listed, chatter not meant for the bot, system
    messages (joins, pins) and empty ones."""
    import discord

    if message.author.bot or message.author.id == bot_id:
        return None
    if message.type not in (discord.MessageType.default, discord.MessageType.reply):
        return None
    if message.guild is not None and allowed_guilds and str(message.guild.id) not in allowed_guilds:
        return None
    in_channel = message.guild is not None and not isinstance(message.channel, discord.Thread)
    addressed = message.guild is None or _addressed(message, bot_id)
    if not addressed and require_mention:
        return None
    # Only an answered channel message opens a thread; chatter (require_mention: false)
    # is answered in the channel itself.
    chat = chat_of(message.channel, message.id if in_channel and addressed else None)
    text = _text(message, bot_id)
    if chat is None or (not text and not _attachments(message)):
        return None
    author = message.author
    return Inbound(
        chat=chat,
        user_id=str(author.id),
        user_name=f"@{author.name}",
        text=text,
        message_id=str(message.id),
        addressed=addressed,
    )
