"""What a script may call and its limits, without pydantic: the description the model reads
is written when every session starts, so it reads the ``code:`` section leniently from
here (the section is validated, with one-line errors, when a script runs and in ``hermes
doctor``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULTS", "DEFAULT_TOOLS", "NEVER", "Shown", "allowed_tools", "shown_settings"]

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

DEFAULTS: dict[str, Any] = {
    "timeout_seconds": 300.0,
    "max_tool_calls": 50,
    "max_output_chars": 50_000,
    "memory_mb": 1024,
}


def allowed_tools(tools: Iterable[str], offered: Mapping[str, Any]) -> list[str]:
    """The tools of ``offered`` a script may call (``tools`` as ``code.tools`` lists them;
    ``*`` for every one), sorted."""
    listed = set(tools)
    wanted = set(offered) if "*" in listed else listed
    return sorted(name for name in wanted - NEVER if name in offered)


@dataclass(frozen=True)
class Shown:
    """The section as the description shows it."""

    tools: tuple[str, ...]
    timeout_seconds: float
    max_tool_calls: int
    max_output_chars: int
    memory_mb: int


def shown_settings(config: Mapping[str, Any]) -> Shown:
    """The ``code:`` section read leniently: a value of the wrong kind shows its default."""
    section = config.get("code") if hasattr(config, "get") else None
    values = section if isinstance(section, Mapping) else {}
    tools = values.get("tools")
    listed = (
        tuple(str(name) for name in tools) if isinstance(tools, list | tuple) else DEFAULT_TOOLS
    )

    def number(key: str) -> Any:
        value = values.get(key)
        ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
        return value if ok else DEFAULTS[key]

    return Shown(
        tools=listed,
        timeout_seconds=float(number("timeout_seconds")),
        max_tool_calls=int(number("max_tool_calls")),
        max_output_chars=int(number("max_output_chars")),
        memory_mb=int(number("memory_mb")),
    )
