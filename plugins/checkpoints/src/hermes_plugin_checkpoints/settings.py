"""The ``checkpoints:`` section of config.yaml, and the bounds a snapshot obeys. Every
caller gets the config from the kernel (the observer from ``SessionInfo.config``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from hermes_commons.sections import section_settings
from hermes_plugin_checkpoints.shadow import Bounds

__all__ = ["Bounds", "CheckpointSettings", "bounds_from"]

log = logging.getLogger("hermes.checkpoints")


class CheckpointSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(
        default=True, description="false: no snapshots are taken; restoring still works."
    )
    max_count: int = Field(
        default=50,
        ge=1,
        le=1000,
        description="Checkpoints kept per working folder; the oldest are dropped (and their "
        "files' old versions deleted) past it.",
    )
    max_mb: float = Field(
        default=200.0,
        gt=0,
        description="A working folder larger than this (its files git would keep: ignored "
        "ones do not count) is not snapshotted; one log line says so.",
    )
    max_files: int = Field(
        default=20_000,
        ge=1,
        description="A working folder with more files than this is not snapshotted either.",
    )
    timeout_seconds: float = Field(
        default=3.0,
        gt=0,
        le=60,
        description="A snapshot taking longer is abandoned (the tool runs anyway). Keep it "
        "below plugins.hook_timeout_seconds (5 s by default).",
    )
    exclude: list[str] = Field(
        default_factory=list,
        description="More .gitignore patterns left out of snapshots (build/, *.log), beside "
        "the folder's own .gitignore files.",
    )


def bounds_from(config: Mapping[str, Any] | None) -> Bounds:
    """The bounds config.yaml (as loaded) sets. ValueError, one line per problem, when the
    section is wrong."""
    section = config.get("checkpoints") if isinstance(config, Mapping) else None
    settings = section_settings("checkpoints", CheckpointSettings, section)
    return Bounds(
        enabled=settings.enabled,
        max_count=settings.max_count,
        max_bytes=int(settings.max_mb * 1024 * 1024),
        max_files=settings.max_files,
        timeout_seconds=settings.timeout_seconds,
        exclude=tuple(settings.exclude),
    )
