"""``/handoff``: the same conversation, continued on another front-end.

From the terminal, ``/handoff telegram`` makes the owner's Telegram chat talk in this
session: its next message there goes on from here (the gateway's route for that chat now
names the session; the gateway's tool choice for the chat still applies). From a chat,
``/handoff cli`` gives the command that continues it in the terminal. Only the owner at the
terminal hands a conversation to a chat: a person on a platform cannot move one into
another chat.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_sdk.events import SlashContext
from hermes_sdk.storage import Store

__all__ = ["handoff"]

TERMINAL_WORDS = frozenset({"cli", "terminal", "chat", "tui"})
USAGE = "usage: /handoff PLATFORM [CHAT_ID] (to a chat), or /handoff cli (to the terminal)"


def handoff(args: str, context: SlashContext) -> str:
    words = args.split()
    session_id = context.session_id
    if not words:
        return USAGE
    if session_id is None:
        return "nothing to hand off yet: this conversation starts with your next message"
    target = words[0].lower()
    if target in TERMINAL_WORDS:
        return (
            f"to go on in the terminal: hermes chat -r {session_id} (or hermes tui -r {session_id})"
        )
    if context.user_scope is not None:
        return "only the owner, at the terminal, hands a conversation to a chat"
    platforms = context.config.get("platforms") or {}
    if target not in platforms:
        known = ", ".join(sorted(platforms)) or "none"
        return (
            f"no platform {target!r} is set up (platforms.{target} in config.yaml); set up: {known}"
        )
    from hermes_plugin_gateway.ledger import Ledger
    from hermes_plugin_gateway.schema import SCHEMA
    from hermes_sdk.storage import open_store

    with open_store(context.home, SCHEMA) as store:
        chat_id = words[1] if len(words) > 1 else _owner_chat(store, context.config, target)
        if chat_id is None:
            return (
                f"name the chat: /handoff {target} CHAT_ID (no direct chat on {target} has "
                f"talked to Hermes yet, and platforms.{target}.allowed_users does not name "
                "exactly one user)"
            )
        Ledger(store).set_route(f"{target}:dm:{chat_id}", session_id)
    return (
        f"handed off: your next message in the {target} chat {chat_id} goes on in this "
        f"conversation ({session_id}); /handoff cli there brings it back"
    )


def _owner_chat(store: Store, config: Mapping[str, Any], platform: str) -> str | None:
    """The direct chat of the platform's allowed users that has talked to Hermes, when
    there is one; else the one allowed user's (a direct chat's id is its user's, as on
    Telegram). Never a chat of someone only paired: the owner's conversation is the
    owner's."""
    section = (config.get("platforms") or {}).get(platform) or {}
    users = {str(user) for user in section.get("allowed_users") or []}
    keys = [
        str(row[0])
        for row in store.query(
            "SELECT key FROM gateway_routes WHERE key LIKE ? ESCAPE '\\'",
            (platform.replace("_", "\\_") + ":dm:%",),
        )
    ]
    chats = {key.split(":")[2] for key in keys if key.count(":") == 2} & users
    if len(chats) == 1:
        return chats.pop()
    return next(iter(users)) if len(users) == 1 and not chats else None
