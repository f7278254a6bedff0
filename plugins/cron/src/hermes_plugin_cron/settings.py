"""The ``cron:`` section of config.yaml."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hermes_commons.sections import section_settings

__all__ = ["CatchUp", "CronConfig", "settings_from"]

CatchUp = Literal["latest", "all", "none"]


class CronConfig(BaseModel):
    """Scheduled jobs: how the scheduler runs them and where results go."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, description="Run the scheduler in the gateway.")
    max_parallel: int = Field(
        default=4, ge=1, le=64, description="Jobs that may run at the same time."
    )
    catch_up: CatchUp = Field(
        default="latest",
        description="Instants missed while the scheduler was down: run the newest once "
        "(latest), every one (all), or none; the others are recorded missed.",
    )
    grace_seconds: float = Field(
        default=120,
        ge=0,
        le=86400,
        description="A due instant seen later than this counts as missed (catch_up applies).",
    )
    tick_seconds: float = Field(
        default=5, gt=0, le=300, description="How often the scheduler looks for due jobs."
    )
    timezone: str | None = Field(
        default=None, description="Time zone of cron expressions; unset: this machine's."
    )
    home_chats: dict[str, str] = Field(
        default_factory=dict,
        description="Per platform, the chat that --deliver PLATFORM sends to (telegram: '42').",
    )
    notify_failures: bool = Field(
        default=True, description="Deliver a short notice of a failed run, like a result."
    )


def settings_from(section: Mapping[str, Any] | None) -> CronConfig:
    """The section validated; ValueError with one line per problem otherwise."""
    return section_settings("cron", CronConfig, section)
