"""The pydantic model of the ``memory:`` section, for ``hermes config validate``, ``hermes
doctor``, ``config show`` and ``config set`` (``hermes_config_sections``). Its defaults and
limits are :mod:`settings`' (which reads the section on every session, without pydantic)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from hermes_plugin_memory_builtin.settings import BUDGET, DEFAULTS, PROVIDER_NAME

__all__ = ["MemoryConfig"]


class MemoryConfig(BaseModel):
    """The ``memory:`` section: the built-in notes (MEMORY.md, USER.md) and one external
    provider."""

    model_config = ConfigDict(extra="forbid")

    memory_chars: int = Field(
        default=DEFAULTS.memory_chars,
        ge=BUDGET[0],
        le=BUDGET[1],
        description="Budget of MEMORY.md (the agent's notes).",
    )
    user_chars: int = Field(
        default=DEFAULTS.user_chars,
        ge=BUDGET[0],
        le=BUDGET[1],
        description="Budget of USER.md (the user's profile).",
    )
    share_agent_notes: bool = Field(
        default=DEFAULTS.share_agent_notes,
        description="Gateway users share the owner's MEMORY.md (never USER.md); off: each "
        "chat user has their own notes too.",
    )
    write_approval: bool = Field(
        default=DEFAULTS.write_approval,
        description="Memory writes by the agent wait in /memory pending until you approve.",
    )
    provider: str | None = Field(
        default=DEFAULTS.provider,
        pattern=PROVIDER_NAME,
        description="An external memory provider to use besides the built-in memory.",
    )
