"""The pydantic model of the ``skills:`` section, for ``hermes config validate``, ``hermes
doctor``, ``config show`` and ``config set`` (``hermes_config_sections``). Its defaults and
limits are :mod:`settings`' (which reads the section on every session, without pydantic)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from hermes_plugin_skills.settings import DEFAULTS, INDEX

__all__ = ["SkillsConfig"]


class CuratorConfig(BaseModel):
    """``skills.curator``: archiving the agent's own skills it stopped using."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(
        default=DEFAULTS.curator.enabled,
        description="Archive skills the agent wrote and has not used for archive_after_days.",
    )
    archive_after_days: int = Field(
        default=DEFAULTS.curator.archive_after_days,
        ge=1,
        description="Days without a view, use or change before an agent-written skill is archived.",
    )
    interval_hours: int = Field(
        default=DEFAULTS.curator.interval_hours,
        ge=1,
        description="Hours between automatic curator runs (at the start of a session).",
    )


class SkillsConfig(BaseModel):
    """The ``skills:`` section: where skills come from and how the agent may change them."""

    model_config = ConfigDict(extra="forbid")

    write_approval: bool = Field(
        default=DEFAULTS.write_approval,
        description="Skill changes by the agent wait in /skills pending until you approve.",
    )
    index_chars: int = Field(
        default=DEFAULTS.index_chars,
        ge=INDEX[0],
        le=INDEX[1],
        description="Most characters the skills index takes in the system prompt.",
    )
    external_dirs: list[str] = Field(
        default_factory=list, description="More folders of skills, read-only (~ is expanded)."
    )
    curator: CuratorConfig = Field(
        default_factory=CuratorConfig, description="Archiving stale agent-written skills."
    )
