"""A Mattermost post as the gateway sees it: who wrote it, where (a channel, a direct or a
group message, a thread), whether it is for the bot, and the files it carries.

The same post arrives from two places: the websocket's ``posted`` event (the post as a JSON
string inside the event) and the REST read-back after a reconnect (a PostList). Both end
here."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hermes_sdk.platform import ChatRef, Inbound

__all__ = ["Attached", "Me", "Said", "chat_type_of", "read_post"]

PLATFORM = "mattermost"
_CHAT_TYPES = {"D": "private", "G": "group", "O": "channel", "P": "channel"}


def chat_type_of(channel_type: str) -> str:
    """Mattermost's channel type (``O`` open, ``P`` private, ``D`` direct, ``G`` group)."""
    return _CHAT_TYPES.get(channel_type, "channel")


@dataclass(frozen=True, slots=True)
class Me:
    user_id: str
    username: str

    def mention(self) -> re.Pattern[str]:
        """``@username`` as a word, any case (``@hermes,`` and ``@hermes:`` too; not
        ``@hermes2`` or ``@hermes.bot``)."""
        name = re.escape(self.username)
        return re.compile(rf"(?<![\w@.-])@{name}(?![\w-]|\.\w)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Attached:
    file_id: str
    name: str
    mime: str | None
    size: int | None


@dataclass(frozen=True, slots=True)
class Said:
    inbound: Inbound
    files: tuple[Attached, ...]
    created: int
    """When the post was made (ms): the channel's read position once it is stored."""
    mentioned: bool
    """The post names the bot (a direct message always does)."""


def _files(post: dict[str, Any]) -> tuple[Attached, ...]:
    infos = {str(i.get("id")): i for i in (post.get("metadata") or {}).get("files") or ()}
    found = []
    for file_id in post.get("file_ids") or ():
        info = infos.get(str(file_id)) or {}
        size = info.get("size")
        found.append(
            Attached(
                file_id=str(file_id),
                name=str(info.get("name") or f"file-{file_id}"),
                mime=str(info.get("mime_type") or "") or None,
                size=size if isinstance(size, int) else None,
            )
        )
    return tuple(found)


def read_post(
    post: dict[str, Any],
    channel_type: str,
    sender: str,
    me: Me,
    *,
    threaded: bool,
    in_bot_thread: bool,
) -> Said | None:
    """The post, or None for what is never handed over: the bot's own, a system message
    (someone joined), a deleted one, one with nothing in it. ``threaded``: channel
    replies go in the post's thread; ``in_bot_thread``: the bot answered in that thread."""
    if post.get("user_id") == me.user_id or post.get("type") or post.get("delete_at"):
        return None
    post_id, channel_id = str(post.get("id") or ""), str(post.get("channel_id") or "")
    text = str(post.get("message") or "")
    files = _files(post)
    if not post_id or not channel_id or (not text.strip() and not files):
        return None
    kind = chat_type_of(channel_type)
    root = str(post.get("root_id") or "") or None
    pattern = me.mention()
    mentioned = kind == "private" or bool(pattern.search(text))
    if pattern.match(text.lstrip()):  # "@hermes what is ..." reads "what is ..."
        text = pattern.sub("", text.lstrip(), count=1).lstrip(" ,:").strip()
    # A direct message stays flat unless the user wrote in a thread; a channel's post is
    # answered in its thread unless replies are flat.
    thread = root if kind == "private" else root or (post_id if threaded else None)
    created = post.get("create_at")
    inbound = Inbound(
        chat=ChatRef(PLATFORM, channel_id, kind, thread),
        user_id=str(post.get("user_id") or ""),
        user_name=sender.lstrip("@"),
        text=text,
        message_id=post_id,
        addressed=mentioned or (root is not None and in_bot_thread),
    )
    return Said(
        inbound=inbound,
        files=files,
        created=created if isinstance(created, int) else 0,
        mentioned=mentioned,
    )
