"""The ``skills:`` section of config.yaml, which this plugin owns (``hermes_config_sections``):
whether the agent's skill changes wait for approval, how much of the system prompt the skills
index may take, and more folders of skills to read.

Read on every new session, so read without pydantic (importing it would double a one-shot
chat's start-up): :func:`skills_settings` takes the values as they are, with the checks of
the section's model (:mod:`section_model`, which ``hermes config validate`` and ``hermes
doctor`` run). Keys it does not know are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULTS", "SECTION", "CuratorSettings", "SkillsSettings", "skills_settings"]

SECTION = "skills"
INDEX = (500, 100_000)
"""The least and the most characters the skills index may take."""


@dataclass(frozen=True)
class CuratorSettings:
    enabled: bool = True
    archive_after_days: int = 90
    interval_hours: int = 24


@dataclass(frozen=True)
class SkillsSettings:
    write_approval: bool = False
    index_chars: int = 6000
    external_dirs: tuple[str, ...] = ()
    curator: CuratorSettings = CuratorSettings()


DEFAULTS = SkillsSettings()


def skills_settings(config: Mapping[str, Any]) -> SkillsSettings:
    """The ``skills:`` section of ``config`` (all of config.yaml); ValueError, one line, for
    a value this plugin cannot use."""
    section = config.get(SECTION) or {}
    if not isinstance(section, Mapping):
        raise ValueError(f"{SECTION}: must be a mapping of settings, got {section!r}")
    approval = section.get("write_approval", DEFAULTS.write_approval)
    if not isinstance(approval, bool):
        raise ValueError(f"{SECTION}.write_approval: must be true or false, got {approval!r}")
    index = section.get("index_chars", DEFAULTS.index_chars)
    if isinstance(index, bool) or not isinstance(index, int) or not INDEX[0] <= index <= INDEX[1]:
        raise ValueError(
            f"{SECTION}.index_chars: must be a whole number of characters from {INDEX[0]} to "
            f"{INDEX[1]}, got {index!r} (see: hermes config validate)"
        )
    folders = section.get("external_dirs") or []
    if not isinstance(folders, list) or not all(isinstance(f, str) for f in folders):
        raise ValueError(f"{SECTION}.external_dirs: must be a list of folders, got {folders!r}")
    return SkillsSettings(approval, index, tuple(folders), _curator(section.get("curator")))


def _curator(section: Any) -> CuratorSettings:
    if section is None:
        return CuratorSettings()
    if not isinstance(section, Mapping):
        raise ValueError(f"{SECTION}.curator: must be a mapping of settings, got {section!r}")
    defaults = CuratorSettings()
    enabled = section.get("enabled", defaults.enabled)
    if not isinstance(enabled, bool):
        raise ValueError(f"{SECTION}.curator.enabled: must be true or false, got {enabled!r}")
    numbers = {}
    for key in ("archive_after_days", "interval_hours"):
        value = section.get(key, getattr(defaults, key))
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(
                f"{SECTION}.curator.{key}: must be a whole number from 1, got {value!r}"
            )
        numbers[key] = value
    return CuratorSettings(enabled, **numbers)
