"""The ``code:`` section, validated: which tools a script may call, and the limits a script
runs under (the defaults are in :mod:`~hermes_plugin_toolset_code.defaults`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hermes_commons.sections import section_settings
from hermes_plugin_toolset_code.defaults import DEFAULT_TOOLS, DEFAULTS, NEVER, allowed_tools

__all__ = ["DEFAULT_TOOLS", "NEVER", "CodeSettings", "allowed_tools", "settings_from"]


class CodeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tools: tuple[str, ...] = Field(
        default=DEFAULT_TOOLS,
        description="The tools a script may call (those the session offers); '*' for all. "
        f"Never: {', '.join(sorted(NEVER))}.",
    )
    timeout_seconds: float = Field(
        default=DEFAULTS["timeout_seconds"],
        gt=0,
        le=3600,
        description="A script's wall time at most; then it is killed.",
    )
    max_tool_calls: int = Field(
        default=DEFAULTS["max_tool_calls"],
        ge=1,
        le=10_000,
        description="Tool calls one script may make.",
    )
    max_output_chars: int = Field(
        default=DEFAULTS["max_output_chars"],
        ge=1000,
        le=1_000_000,
        description="The script's stdout kept for the model; the rest is cut, and the result "
        "says so.",
    )
    memory_mb: int = Field(
        default=DEFAULTS["memory_mb"],
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
    if section is not None and not isinstance(section, Mapping):
        raise ValueError(
            f"code: must be a section of settings (timeout_seconds: ...), not {section!r}"
        )
    return section_settings("code", CodeSettings, section)
