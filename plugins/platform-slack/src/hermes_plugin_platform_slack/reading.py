"""What a Slack event or button press means to the gateway: which chat (a DM, a channel or
a thread), who wrote it, whether it is meant for the bot, and its text."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from hermes_sdk.platform import ButtonPress, ChatRef, Inbound

__all__ = ["Bot", "SharedFile", "plain_text", "read_event", "read_press", "shared_files"]

PLATFORM = "slack"
_HANDLED_SUBTYPES = {None, "file_share", "thread_broadcast"}


class Threads(Protocol):
    def __contains__(self, key: object) -> bool: ...


@dataclass
class Bot:
    user_id: str
    bot_id: str
    threads: Threads = field(default_factory=set)
    """(channel, thread_ts) of the threads the bot answers in: said there without a mention
    is still said to it."""


def _chat(event: Mapping[str, Any], thread_ts: str | None) -> ChatRef:
    channel = str(event.get("channel") or "")
    private = event.get("channel_type") == "im" or channel.startswith("D")
    return ChatRef(PLATFORM, channel, "private" if private else "group", thread_id=thread_ts)


_MARKUP = re.compile(r"<([^<>\n]+)>")
_SPECIAL = {"here": "@here", "channel": "@channel", "everyone": "@everyone"}


def _spelled(match: re.Match[str]) -> str:
    """One piece of Slack's markup as a person reads it: a link as its label (and its
    address when the label is not it), a person or a channel by name, a date by its
    fallback text."""
    target, _, label = match.group(1).partition("|")
    if target.startswith("@"):
        return f"@{label or target[1:]}"
    if target.startswith("#"):
        return f"#{label or target[1:]}"
    if target.startswith("!"):
        name = target[1:].split("^")[0]  # !subteam^S123, !date^...: a group or a date
        return label or _SPECIAL.get(name, f"@{name}")
    if target.startswith("mailto:"):
        return label or target.removeprefix("mailto:")
    bare = re.sub(r"^[a-z]+://", "", target).rstrip("/")
    if not label or label.rstrip("/") in (target.rstrip("/"), bare):
        return target
    return f"{label} ({target})"


def plain_text(text: str) -> str:
    """Slack's message text (``<https://x|x>``, ``<@U123>``, ``<#C1|general>``, ``&amp;``)
    as plain text for the model."""
    return html.unescape(_MARKUP.sub(_spelled, text))


def _text(event: Mapping[str, Any], bot: Bot) -> str:
    text = str(event.get("text") or "").replace(f"<@{bot.user_id}>", "")
    return plain_text(re.sub(r"[ \t]{2,}", " ", text).strip())


@dataclass(frozen=True)
class SharedFile:
    """A file of a ``file_share`` event, before it is downloaded."""

    name: str
    mimetype: str | None
    size: int | None
    url: str


def shared_files(event: Mapping[str, Any]) -> list[SharedFile]:
    """The files an event shares (hosted ones: an external link has no content to read)."""
    found = []
    for file in event.get("files") or ():
        url = file.get("url_private_download") or file.get("url_private")
        if not isinstance(url, str) or file.get("mode") == "external":
            continue
        size = file.get("size")
        found.append(
            SharedFile(
                name=str(file.get("name") or "file"),
                mimetype=file.get("mimetype"),
                size=size if isinstance(size, int) else None,
                url=url,
            )
        )
    return found


def read_event(event: Mapping[str, Any], bot: Bot, *, require_mention: bool) -> Inbound | None:
    """The gateway's view of an Events API ``event``, or None for what it does not handle
    (the bot's own and other bots' messages, edits and deletions, chatter not meant for the
    bot). A mention arrives as both ``message`` and ``app_mention``: both give the same
    ``message_id`` (the ts), and the gateway admits it once."""
    kind = event.get("type")
    if kind not in ("message", "app_mention") or event.get("subtype") not in _HANDLED_SUBTYPES:
        return None
    user = str(event.get("user") or "")
    if not user or event.get("bot_id") or user == bot.user_id:
        return None
    ts = str(event.get("ts") or "")
    thread = event.get("thread_ts")
    private = _chat(event, None).chat_type == "private"
    mentioned = kind == "app_mention" or f"<@{bot.user_id}>" in str(event.get("text") or "")
    in_our_thread = thread is not None and (str(event.get("channel")), str(thread)) in bot.threads
    addressed = private or mentioned or in_our_thread
    if not addressed and require_mention:
        return None
    if private:
        chat = _chat(event, str(thread) if thread else None)
    else:
        # An answered channel message is answered in its thread (a new one starts at the
        # message itself), so the reply and what follows there are one session.
        chat = _chat(event, str(thread or ts) if addressed else None)
    text = _text(event, bot)
    if not ts or (not text and not event.get("files")):
        return None
    return Inbound(
        chat=chat,
        user_id=user,
        user_name=user,
        text=text,
        message_id=ts,
        addressed=addressed,
    )


def read_press(payload: Mapping[str, Any]) -> tuple[ButtonPress, str] | None:
    """A ``block_actions`` payload as a press, with the pressed message's ts."""
    if payload.get("type") != "block_actions":
        return None
    actions = payload.get("actions") or ()
    container = payload.get("container") or {}
    channel = str((payload.get("channel") or {}).get("id") or container.get("channel_id") or "")
    if not actions or not channel:
        return None
    request_id, _, choice = str(actions[0].get("value") or "").rpartition(":")
    if not request_id:
        return None
    thread = container.get("thread_ts") or (payload.get("message") or {}).get("thread_ts")
    chat = _chat({"channel": channel}, str(thread) if thread else None)
    user = str((payload.get("user") or {}).get("id") or "")
    press = ButtonPress(chat=chat, user_id=user, request_id=request_id, choice=choice)
    return press, str(container.get("message_ts") or "")
