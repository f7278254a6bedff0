"""Which session a message belongs to, and whose memory it uses.

A DM is its own conversation, and each thread in it one more (email threads, Matrix
threads). In a group each participant has their own by default
(``gateway.group_sessions: shared`` makes it one for the group); a thread or forum topic is
always shared. Keys are routing handles, never credentials: knowing one grants nothing.
"""

from __future__ import annotations

from hermes_sdk.platform import ChatRef, Inbound

__all__ = ["route_key", "user_scope"]


def route_key(message: Inbound, group_sessions: str = "per_user") -> str:
    chat = message.chat
    if chat.chat_type == "private":
        if chat.thread_id is not None:
            return f"{chat.platform}:dm:{chat.chat_id}:{chat.thread_id}"
        return f"{chat.platform}:dm:{chat.chat_id}"
    if chat.thread_id is not None:
        return f"{chat.platform}:thread:{chat.chat_id}:{chat.thread_id}"
    if group_sessions == "shared":
        return f"{chat.platform}:group:{chat.chat_id}"
    return f"{chat.platform}:group:{chat.chat_id}:{message.user_id}"


def is_shared(key: str) -> bool:
    kind = key.split(":")[1]
    return kind == "thread" or (kind == "group" and key.count(":") == 2)


def user_scope(chat: ChatRef, user_id: str, key: str) -> str:
    """Memory and history scope: the person (``telegram:42``), or in a shared conversation
    the chat (``telegram:chat:-100123``), so one member's profile is never shown to others."""
    if is_shared(key):
        return f"{chat.platform}:chat:{chat.chat_id}"
    return f"{chat.platform}:{user_id}"
