"""A config.yaml written by hermes-agent, met by accident: recognised by keys only it writes,
and answered with one line that says how to bring it over, never a traceback."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_kernel.config.errors import ConfigError
from hermes_kernel.store.foreign import foreign_home_fix, foreign_home_line, foreign_home_problem

_MARKER_KEYS: tuple[tuple[str, ...], ...] = (
    ("_config_version",),
    ("custom_providers",),
    ("fallback_model",),
    ("command_allowlist",),
    ("platform_toolsets",),
    ("smart_model_routing",),
    ("terminal", "backend"),
    ("terminal", "docker_image"),
    ("terminal", "ssh_host"),
    ("memory", "memory_enabled"),
    ("memory", "memory_char_limit"),
    ("memory", "user_char_limit"),
    ("agent", "max_turns"),
)
"""Keys only hermes-agent's config.yaml has (ours spells these settings differently)."""


def hermes_agent_keys(data: Mapping[str, Any]) -> list[str]:
    """The keys of ``data`` (a parsed config.yaml) that only hermes-agent writes; empty
    unless they make it clear (its version key, or two of them: one could be a guess)."""
    found = []
    for path in _MARKER_KEYS:
        node: Any = data
        for part in path:
            node = node.get(part) if isinstance(node, Mapping) else None
            if node is None:
                break
        else:
            found.append(".".join(path))
    if isinstance(data.get("model"), str):
        found.append("model (a plain string)")
    return found if "_config_version" in found or len(found) >= 2 else []


class ForeignHomeError(ConfigError):
    """config.yaml is hermes-agent's: one line, with :func:`foreign_home_fix` as the fix."""

    def __init__(self, home: Path, evidence: str) -> None:
        super().__init__([foreign_home_line(home, evidence)])
        self.problem = foreign_home_problem(home, evidence)
        self.fix = foreign_home_fix(home)
