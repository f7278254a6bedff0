"""The ``delegation:`` section of config.yaml."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from hermes_commons.sections import section_settings

__all__ = ["DelegationConfig", "settings_from"]


class DelegationConfig(BaseModel):
    """Subagents: how many, how deep, on which model, for how long."""

    model_config = ConfigDict(extra="forbid")

    max_concurrent_children: int = Field(default=3, ge=1, le=32)
    max_depth: int = Field(default=1, ge=1, le=5, description="1: children cannot delegate.")
    provider: str | None = Field(
        default=None, description="Children's provider; unset: the parent's."
    )
    model: str | None = Field(default=None, description="Children's model; unset: the parent's.")
    max_iterations: int = Field(default=50, ge=1, le=1000, description="Model calls per child.")
    max_summary_chars: int = Field(default=4000, ge=200, le=100_000)
    stale_after_seconds: float = Field(
        default=300, gt=0, le=86400, description="A child with no progress this long is stopped."
    )


def settings_from(section: Mapping[str, Any] | None) -> DelegationConfig:
    return section_settings("delegation", DelegationConfig, section)
