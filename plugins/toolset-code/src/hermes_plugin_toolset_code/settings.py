"""The ``code:`` section: which tools a script may call, and the limits a script runs under."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hermes_sdk.sections import section_settings

__all__ = ["DEFAULT_TOOLS", "NEVER", "CodeSettings", "allowed_tools", "settings_from"]

DEFAULT_TOOLS = (
    "terminal",
    "process",
    "read_file",
    "write_file",
    "patch",
    "search_files",
    "web_search",
    "web_extract",
    "session_search",
    "skills_list",
    "skill_view",
)
"""What a script may call unless ``code.tools`` says otherwise (those installed)."""

NEVER = frozenset(
    {
        "execute_code",  # a script that starts scripts
        "delegate_task",  # agents of their own, in a loop nobody reads
        "clarify",  # questions to the user belong to the model, not a loop
        "send_message",  # messages to people
        "memory",  # long-lived writes the model should decide one by one
        "skill_manage",
        "cronjob",  # work that outlives the turn
    }
)
"""Tools a script never calls, whatever ``code.tools`` says: they talk to people, keep
something for later, or start more agents, which one model decision each should do."""


class CodeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tools: tuple[str, ...] = Field(
        default=DEFAULT_TOOLS,
        description="The tools a script may call (those the session offers); '*' for all. "
        f"Never: {', '.join(sorted(NEVER))}.",
    )
    timeout_seconds: float = Field(
        default=300.0, gt=0, le=3600, description="A script's wall time at most; then it is killed."
    )
    max_tool_calls: int = Field(
        default=50, ge=1, le=10_000, description="Tool calls one script may make."
    )
    max_output_chars: int = Field(
        default=50_000,
        ge=1000,
        le=1_000_000,
        description="The script's stdout kept for the model; the rest is cut, and the result "
        "says so.",
    )
    memory_mb: int = Field(
        default=1024,
        ge=0,
        description="The script's address space at most (RLIMIT_AS), in MiB; 0: no bound.",
    )
    python: str = Field(
        default="python3",
        min_length=1,
        description="The interpreter, in the session's terminal backend (on its PATH).",
    )

    @field_validator("tools")
    @classmethod
    def _never_listed(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        listed = sorted(NEVER.intersection(value))
        if listed:
            raise ValueError(
                f"{', '.join(listed)} can never be called from a script; remove "
                f"{'it' if len(listed) == 1 else 'them'} from code.tools"
            )
        return value


def settings_from(config: Mapping[str, Any]) -> CodeSettings:
    section = config.get("code") if hasattr(config, "get") else None
    return section_settings("code", CodeSettings, section)


def allowed_tools(settings: CodeSettings, offered: Mapping[str, Any]) -> list[str]:
    """The tools of ``offered`` a script may call, sorted."""
    wanted = set(offered) if "*" in settings.tools else set(settings.tools)
    return sorted(name for name in wanted - NEVER if name in offered)
