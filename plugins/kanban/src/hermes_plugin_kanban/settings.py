"""The ``kanban:`` section of config.yaml."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from hermes_commons.sections import section_settings

__all__ = ["KanbanConfig", "settings_from"]


class KanbanConfig(BaseModel):
    """The task board: who works on it, and how a worker's death is noticed."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(
        default=True,
        description="The gateway runs the dispatcher: it hands ready tasks to idle workers "
        "and tells subscribed chats what changed.",
    )
    workers: list[str] | None = Field(
        default=None,
        description="Profiles that take tasks nobody is assigned to; unset: every profile "
        "of this home (profiles/NAME), else this home itself.",
    )
    per_worker: int = Field(default=1, ge=1, le=16, description="Tasks one profile runs at once.")
    tick_seconds: float = Field(default=5.0, gt=0, le=3600)
    lease_seconds: float = Field(
        default=60.0,
        ge=1,
        le=3600,
        description="A worker renews its task's lease four times in this; a lease not renewed "
        "this long (or a worker process that ended on this host) gives the task back.",
    )
    start_seconds: float = Field(
        default=60.0, gt=0, le=3600, description="How long a started worker may take to begin."
    )
    max_run_seconds: float = Field(
        default=4 * 3600,
        gt=0,
        le=7 * 86400,
        description="A worker still at its task after this long is stopped: a failed attempt.",
    )
    failure_limit: int = Field(
        default=3,
        ge=1,
        le=100,
        description="Failed or lost runs in a row after which a task is blocked (gave up).",
    )
    board_home: str | None = Field(
        default=None,
        description="The home whose store holds the board and whose profiles work on it; "
        "unset: this home, or for a profile the home it belongs to (so all profiles share "
        "one board).",
    )


def settings_from(section: Mapping[str, Any] | None) -> KanbanConfig:
    return section_settings("kanban", KanbanConfig, section)
