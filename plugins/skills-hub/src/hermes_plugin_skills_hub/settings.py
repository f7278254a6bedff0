"""The ``skills_hub:`` section of config.yaml: where the hubs are, what is fetched from
them and how much. Read without pydantic (the model in :mod:`section_model` checks the same
limits for ``hermes config validate``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["DEFAULTS", "SECTION", "HubSettings", "hub_settings"]

SECTION = "skills_hub"
DEFAULT_TAPS = (
    "openai/skills/skills/.curated",
    "anthropics/skills/skills",
    "huggingface/skills/skills",
)
DEFAULT_MARKETPLACES = ("anthropics/skills",)


@dataclass(frozen=True)
class HubSettings:
    github_api: str = "https://api.github.com"
    github_raw: str = "https://raw.githubusercontent.com"
    clawhub_api: str = "https://clawhub.ai/api/v1"
    skills_sh: str = "https://skills.sh"
    taps: tuple[str, ...] = DEFAULT_TAPS
    """GitHub folders of skills searched besides the taps added with ``hermes skills tap``
    (OWNER/REPO/PATH)."""
    marketplaces: tuple[str, ...] = DEFAULT_MARKETPLACES
    """GitHub repositories holding ``.claude-plugin/marketplace.json``."""
    trusted: tuple[str, ...] = ("openai/skills", "anthropics/skills", "huggingface/skills")
    """Repositories whose skills are ``trusted`` rather than ``community``."""
    max_skill_bytes: int = 1_000_000
    max_file_bytes: int = 256_000
    max_files: int = 50
    cache_hours: float = 1.0
    timeout_seconds: float = 20.0
    well_known: tuple[str, ...] = ()
    """Sites whose well-known skills index is searched (any other: give its URL)."""
    allow_private_hosts: tuple[str, ...] = ()
    """Hosts the SSRF guard lets through although they are private (a hub on your LAN)."""


DEFAULTS = HubSettings()
_LISTS = {"taps", "marketplaces", "trusted", "well_known", "allow_private_hosts"}
_URLS = {"github_api", "github_raw", "clawhub_api", "skills_sh"}
_LIMITS: dict[str, tuple[float, float]] = {
    "max_skill_bytes": (1_000, 50_000_000),
    "max_file_bytes": (1_000, 50_000_000),
    "max_files": (1, 10_000),
    "cache_hours": (0, 24 * 365),
    "timeout_seconds": (1, 600),
}


def hub_settings(config: Mapping[str, Any]) -> HubSettings:
    """The section of ``config`` (all of config.yaml); ValueError, one line, for a value
    that cannot be used."""
    section = config.get(SECTION) or {}
    if not isinstance(section, Mapping):
        raise ValueError(f"{SECTION}: must be a mapping of settings, got {section!r}")
    values: dict[str, Any] = {}
    for spec in fields(HubSettings):
        if spec.name not in section:
            continue
        value = section[spec.name]
        where = f"{SECTION}.{spec.name}"
        if spec.name in _LISTS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{where}: must be a list of text, got {value!r}")
            value = tuple(value)
        elif spec.name in _URLS:
            if not isinstance(value, str) or not value.startswith(("http://", "https://")):
                raise ValueError(f"{where}: must be an http(s) URL, got {value!r}")
            value = value.rstrip("/")
        else:
            low, high = _LIMITS[spec.name]
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not low <= value <= high
            ):
                raise ValueError(
                    f"{where}: must be a number from {low:g} to {high:g}, got {value!r}"
                )
        values[spec.name] = value
    return HubSettings(**values)
