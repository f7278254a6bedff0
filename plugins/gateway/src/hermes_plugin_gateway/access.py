"""Who may talk to the agent through a platform: default deny.

A user is let in by ``platforms.<name>.allowed_users`` (ids), by a DM pairing the owner
approved, or by ``allow_all: true``, which must be written explicitly. Everyone else gets
nothing but, in a private chat and if pairing is on, a pairing code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_plugin_gateway.pairing import Pairings
from hermes_sdk.platform import Inbound

__all__ = ["Access", "PlatformAccess"]


@dataclass(frozen=True)
class PlatformAccess:
    allowed_users: frozenset[str] = frozenset()
    allow_all: bool = False
    pairing: bool | None = None
    """As written; unset: the platform's default (on, but off for email)."""
    toolsets: tuple[str, ...] | None = None
    """The toolsets its private chats' turns get, as written; unset: the gateway's choice
    (:mod:`hermes_plugin_gateway.toolsets`)."""
    group_toolsets: tuple[str, ...] | None = None
    """The same for group chats and channels."""

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> PlatformAccess:
        toolsets, group = section.get("toolsets"), section.get("group_toolsets")
        return cls(
            allowed_users=frozenset(str(u) for u in section.get("allowed_users") or ()),
            allow_all=section.get("allow_all") is True,
            pairing=None if section.get("pairing") is None else section["pairing"] is not False,
            toolsets=None if toolsets is None else tuple(str(t) for t in toolsets),
            group_toolsets=None if group is None else tuple(str(t) for t in group),
        )


class Access:
    def __init__(self, platforms: Mapping[str, Any], pairings: Pairings) -> None:
        self._rules = {
            name: PlatformAccess.from_config(section or {}) for name, section in platforms.items()
        }
        self.pairings = pairings

    def rules(self, platform: str) -> PlatformAccess:
        return self._rules.get(platform, PlatformAccess())

    def allowed_by_config(self, message: Inbound) -> bool:
        return self.allowed_by_user(message.chat.platform, message.user_id)

    def allowed_by_user(self, platform: str, user_id: str) -> bool:
        rules = self.rules(platform)
        return rules.allow_all or user_id in rules.allowed_users

    def allowed(self, message: Inbound) -> bool:
        """By config, or by a pairing the owner approved (a database read)."""
        if self.allowed_by_config(message):
            return True
        return self.pairings.is_paired(message.chat.platform, message.user_id)

    def may_pair(self, message: Inbound, default: bool = True) -> bool:
        pairing = self.rules(message.chat.platform).pairing
        return message.chat.chat_type == "private" and (default if pairing is None else pairing)
