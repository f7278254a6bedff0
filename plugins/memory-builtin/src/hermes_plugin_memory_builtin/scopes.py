"""Where one person's memory lives.

The owner at the terminal (no user scope) has ``memories/MEMORY.md`` and ``USER.md``. A chat
user of the gateway ("telegram:42") has their own folder under ``memories/users/``: their
USER.md always, and their own MEMORY.md unless ``memory.share_agent_notes`` is on. No setting
lets one chat user read another's profile.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Budgets", "MemoryPlace", "place_for"]

TARGETS = ("memory", "user")


@dataclass(frozen=True)
class Budgets:
    memory: int = 2200
    user: int = 1375

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Budgets:
        from hermes_plugin_memory_builtin.settings import memory_settings

        settings = memory_settings(config)
        return cls(memory=settings.memory_chars, user=settings.user_chars)

    def of(self, target: str) -> int:
        return self.memory if target == "memory" else self.user


@dataclass(frozen=True)
class MemoryPlace:
    memory: Path
    user: Path
    pending: Path
    """Writes that wait for the user's approval (memory.write_approval)."""

    def path(self, target: str) -> Path:
        return self.memory if target == "memory" else self.user


def scope_folder(user_scope: str) -> str:
    """A folder name for a scope: readable, and distinct even where sanitizing would merge
    two scopes ("a/b" and "a_b")."""
    readable = re.sub(r"[^A-Za-z0-9_.-]", "_", user_scope)[:60]
    digest = hashlib.sha256(user_scope.encode()).hexdigest()[:8]
    return f"{readable}-{digest}"


def place_for(home: str, user_scope: str | None, config: Mapping[str, Any]) -> MemoryPlace:
    root = Path(home) / "memories"
    if user_scope is None:
        return MemoryPlace(root / "MEMORY.md", root / "USER.md", root / "pending")
    own = root / "users" / scope_folder(user_scope)
    from hermes_plugin_memory_builtin.settings import memory_settings

    shared = memory_settings(config).share_agent_notes
    return MemoryPlace((root if shared else own) / "MEMORY.md", own / "USER.md", own / "pending")
