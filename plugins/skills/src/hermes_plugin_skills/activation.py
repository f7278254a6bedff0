"""Where a skill applies, from its SKILL.md frontmatter, so the skills index of a session
lists only what can be used there:

- ``platforms``: operating systems (``macos``, ``linux``, ``windows``) and front-ends
  (``cli``, ``telegram``, ``discord``, ...); a skill naming any of a kind applies only where
  one of them matches (hermes-agent's ``platforms`` names operating systems only);
- ``requires_toolsets`` / ``requires_tools``: hidden unless the session has every one;
- ``fallback_for_toolsets`` / ``fallback_for_tools``: hidden when the session has any one
  (the skill says how to manage without it).

Each is read at the top level and under ``metadata.hermes`` (where hermes-agent writes the
toolset ones). A skill loaded by name (skill_view) is served wherever it applies or not.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from hermes_commons.skill_md import ACTIVATION_FIELDS, Skill, hermes_field

__all__ = ["Conditions", "applies", "conditions"]

OS_NAMES = {"macos": "darwin", "darwin": "darwin", "linux": "linux", "windows": "win32"}
OS_NAMES["win32"] = "win32"


@dataclass(frozen=True)
class Conditions:
    systems: frozenset[str] = frozenset()
    front_ends: frozenset[str] = frozenset()
    requires_toolsets: frozenset[str] = frozenset()
    fallback_for_toolsets: frozenset[str] = frozenset()
    requires_tools: frozenset[str] = frozenset()
    fallback_for_tools: frozenset[str] = frozenset()


def _names(value: Any, lower: bool = True) -> frozenset[str]:
    """The names a field lists (a list, or one comma- or space-separated string); tool
    names keep their case (an MCP server's tools are named as the server names them)."""
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    if not isinstance(value, list):
        return frozenset()
    names = (str(item).strip() for item in value if str(item).strip())
    return frozenset(name.lower() if lower else name for name in names)


_known: dict[int, tuple[Skill, Conditions]] = {}
"""Conditions by skill object: a skill unchanged on disk is the same object from one
session to the next (see ``load_skill``), and a gateway builds prompts all day."""


def conditions(skill: Skill) -> Conditions:
    known = _known.get(id(skill))
    if known is not None and known[0] is skill:
        return known[1]
    found = _read(skill)
    if len(_known) > 10_000:  # skills edited many times over a long run
        _known.clear()
    _known[id(skill)] = (skill, found)
    return found


def _read(skill: Skill) -> Conditions:
    values = {
        key: _names(hermes_field(skill.frontmatter, key), lower=not key.endswith("_tools"))
        for key in ACTIVATION_FIELDS
    }
    platforms = values.pop("platforms")
    return Conditions(
        systems=frozenset(OS_NAMES[name] for name in platforms if name in OS_NAMES),
        front_ends=frozenset(name for name in platforms if name not in OS_NAMES),
        **values,
    )


def applies(
    skill: Skill,
    source: str,
    toolsets: frozenset[str] | None,
    tools: frozenset[str] | None,
) -> bool:
    """Whether ``skill`` belongs in the index of a session from ``source`` with these
    toolsets and tools (None: not known, so every one counts as there)."""
    found = conditions(skill)
    if found.systems and sys.platform not in found.systems:
        return False
    if found.front_ends and source.lower() not in found.front_ends:
        return False
    if toolsets is not None:
        if not found.requires_toolsets <= toolsets:
            return False
        if found.fallback_for_toolsets & toolsets:
            return False
    if tools is not None:
        if not found.requires_tools <= tools:
            return False
        if found.fallback_for_tools & tools:
            return False
    return True
