"""The pydantic model of the ``skills_hub:`` section (``hermes config validate``, ``config
show``, ``config set``); its defaults and limits are :mod:`settings`'."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from hermes_plugin_skills_hub.settings import _LIMITS, DEFAULTS

__all__ = ["SkillsHubConfig"]


class SkillsHubConfig(BaseModel):
    """The ``skills_hub`` section: the hubs skills are searched and installed from."""

    model_config = ConfigDict(extra="forbid")

    github_api: str = Field(default=DEFAULTS.github_api, description="GitHub's REST API.")
    github_raw: str = Field(
        default=DEFAULTS.github_raw, description="Where GitHub serves files as they are."
    )
    clawhub_api: str = Field(default=DEFAULTS.clawhub_api, description="ClawHub's API.")
    skills_sh: str = Field(default=DEFAULTS.skills_sh, description="skills.sh.")
    taps: list[str] = Field(
        default_factory=lambda: list(DEFAULTS.taps),
        description="GitHub folders of skills searched (OWNER/REPO/PATH).",
    )
    marketplaces: list[str] = Field(
        default_factory=lambda: list(DEFAULTS.marketplaces),
        description="GitHub repositories with a .claude-plugin/marketplace.json.",
    )
    trusted: list[str] = Field(
        default_factory=lambda: list(DEFAULTS.trusted),
        description="Repositories whose skills count as trusted.",
    )
    max_skill_bytes: int = Field(
        default=DEFAULTS.max_skill_bytes,
        ge=_LIMITS["max_skill_bytes"][0],
        le=_LIMITS["max_skill_bytes"][1],
        description="Most bytes one skill may hold.",
    )
    max_file_bytes: int = Field(
        default=DEFAULTS.max_file_bytes,
        ge=_LIMITS["max_file_bytes"][0],
        le=_LIMITS["max_file_bytes"][1],
        description="Most bytes one file of a skill may hold.",
    )
    max_files: int = Field(
        default=DEFAULTS.max_files,
        ge=_LIMITS["max_files"][0],
        le=_LIMITS["max_files"][1],
        description="Most files one skill may hold.",
    )
    cache_hours: float = Field(
        default=DEFAULTS.cache_hours,
        ge=_LIMITS["cache_hours"][0],
        le=_LIMITS["cache_hours"][1],
        description="How long a search result is fresh (older ones serve when offline).",
    )
    timeout_seconds: float = Field(
        default=DEFAULTS.timeout_seconds,
        ge=_LIMITS["timeout_seconds"][0],
        le=_LIMITS["timeout_seconds"][1],
        description="Timeout of each request to a hub.",
    )
    well_known: list[str] = Field(
        default_factory=list, description="Sites whose /.well-known skills index is searched."
    )
    allow_private_hosts: list[str] = Field(
        default_factory=list, description="Private hosts the SSRF guard lets through."
    )
