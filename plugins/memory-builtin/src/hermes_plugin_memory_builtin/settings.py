"""The ``memory:`` section of config.yaml, which this plugin owns (``hermes_config_sections``):
the budgets of MEMORY.md and USER.md, whether chat users share the agent's notes, whether the
agent's writes wait for approval, and the external memory provider used beside them.

Read on every new session, so read without pydantic (importing it would double a one-shot
chat's start-up): :func:`memory_settings` takes the values as they are, with the checks of
the section's model (:mod:`section_model`, which ``hermes config validate`` and ``hermes
doctor`` run) for the values this plugin uses. Keys it does not know are left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULTS", "SECTION", "MemorySettings", "memory_settings"]

SECTION = "memory"
BUDGET = (200, 100_000)
"""The least and the most a file's budget may be, in characters."""
PROVIDER_NAME = r"^[a-z][a-z0-9_-]{0,63}$"


@dataclass(frozen=True)
class MemorySettings:
    memory_chars: int = 2200
    user_chars: int = 1375
    share_agent_notes: bool = False
    write_approval: bool = False
    provider: str | None = None


DEFAULTS = MemorySettings()


def _budget(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not BUDGET[0] <= value <= BUDGET[1]:
        raise ValueError(
            f"{SECTION}.{key}: must be a whole number of characters from {BUDGET[0]} to "
            f"{BUDGET[1]}, got {value!r} (see: hermes config validate)"
        )
    return value


def _switch(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{SECTION}.{key}: must be true or false, got {value!r}")
    return value


def memory_settings(config: Mapping[str, Any]) -> MemorySettings:
    """The ``memory:`` section of ``config`` (all of config.yaml); ValueError, one line, for
    a value this plugin cannot use."""
    section = config.get(SECTION) or {}
    if not isinstance(section, Mapping):
        raise ValueError(f"{SECTION}: must be a mapping of settings, got {section!r}")
    provider = section.get("provider")
    named = isinstance(provider, str) and re.match(PROVIDER_NAME, provider)
    if provider is not None and not named:
        raise ValueError(f"{SECTION}.provider: {provider!r} is not a plugin's memory provider name")
    return MemorySettings(
        memory_chars=_budget("memory_chars", section.get("memory_chars", DEFAULTS.memory_chars)),
        user_chars=_budget("user_chars", section.get("user_chars", DEFAULTS.user_chars)),
        share_agent_notes=_switch(
            "share_agent_notes", section.get("share_agent_notes", DEFAULTS.share_agent_notes)
        ),
        write_approval=_switch(
            "write_approval", section.get("write_approval", DEFAULTS.write_approval)
        ),
        provider=provider,
    )
