"""Which tools a message's turn gets, by where it came from.

What arrives from people or systems the owner does not control (a webhook's payload, an
email, a group chat) must not drive the shell: its turns get the safe toolsets unless the
owner widens them (``platforms.<name>.toolsets``, ``group_toolsets``, a webhook route's
``toolsets``), and its text is fenced as untrusted data (:func:`hermes_commons.scan.
as_untrusted`). A private chat with an allowed user gets every toolset, as the CLI does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_plugin_gateway.access import PlatformAccess
from hermes_sdk.platform import ChatRef

__all__ = ["RISKY_TOOLSETS", "UNSAFE_TOOLS", "shared_chat", "tool_choice", "untrusted_source"]

RISKY_TOOLSETS = frozenset({"terminal", "files", "code", "browser", "cron", "delegation", "memory"})
"""What acts on this machine, outlives the turn, or writes what later prompts hold."""
UNSAFE_TOOLS = ("skill_manage",)
"""Tools of otherwise safe toolsets that write what later prompts hold."""


def shared_chat(chat: ChatRef) -> bool:
    return chat.chat_type in ("group", "channel")


def safe_toolsets(installed: Sequence[str]) -> tuple[str, ...]:
    """Every installed toolset but the risky ones and MCP servers (which may do anything)."""
    return tuple(
        name for name in installed if name not in RISKY_TOOLSETS and not name.startswith("mcp")
    )


def tool_choice(
    adapter: Any, rules: PlatformAccess, chat: ChatRef, installed: Sequence[str]
) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """(the toolsets, None for all; the tools left out) for a turn in ``chat``. The
    platform decides first (a webhook route), then the owner's config, then the default."""
    decide = getattr(adapter, "toolsets_for", None)
    chosen = decide(chat) if callable(decide) else None
    if chosen is not None:
        return tuple(chosen), ()
    written = rules.group_toolsets if shared_chat(chat) else rules.toolsets
    if written is not None:
        return tuple(written), ()
    if shared_chat(chat) or getattr(adapter, "untrusted_text", False):
        return safe_toolsets(installed), UNSAFE_TOOLS
    return None, ()


def untrusted_source(adapter: Any, chat: ChatRef) -> str | None:
    """How to name where a message came from when its text is untrusted data; None when
    it is the user's own words (a private chat with an allowed user)."""
    if getattr(adapter, "untrusted_text", False):
        return f"{chat.platform} ({chat.chat_id})"
    if shared_chat(chat):
        return f"a {chat.platform} group chat (its members, not only your user)"
    return None
