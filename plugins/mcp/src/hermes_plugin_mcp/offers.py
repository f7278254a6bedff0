"""What a server offers (its tools, and whether it has resources and prompts), remembered from
its last connect in ``HERMES_HOME/cache/mcp-offers.json``.

A chat whose model never calls a server's tools then never starts that server: its tools are
listed from memory and it starts on the first call, which also refreshes the memory. An entry
is keyed by the server's settings, so a changed entry in ``mcp_servers:`` (or a plugin update
that changes the format) means a real connect at the next start; so does a damaged file, and a
remembered server that then failed to start (its entry is forgotten, and the next start says
so up front)."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_commons.files import write_cache_json
from hermes_plugin_mcp.settings import ServerSettings

__all__ = ["Offer", "OfferMemory", "OfferedTool"]

log = logging.getLogger("hermes.mcp")

FORMAT = 1
"""Bumped when an entry's shape changes: older entries are then misses."""


@dataclass(frozen=True)
class OfferedTool:
    name: str
    description: str
    parameters: dict[str, Any]
    """Its input schema, always an object schema."""
    read_only: bool
    """The server said so (``readOnlyHint``): such calls may run side by side."""


@dataclass(frozen=True)
class Offer:
    tools: tuple[OfferedTool, ...]
    resources: bool
    prompts: bool

    @classmethod
    def of(cls, listed: list[Any], capabilities: Any) -> Offer:
        """From the MCP SDK's listed tools and the server's capabilities."""
        tools = []
        for tool in listed:
            hints = tool.annotations
            tools.append(
                OfferedTool(
                    name=tool.name,
                    description=tool.description or "",
                    parameters=_object_schema(tool.input_schema),
                    read_only=bool(hints is not None and hints.read_only_hint),
                )
            )
        return cls(
            tools=tuple(tools),
            resources=capabilities is not None and capabilities.resources is not None,
            prompts=capabilities is not None and capabilities.prompts is not None,
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "tools": [
                {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "read_only": tool.read_only,
                }
                for tool in self.tools
            ],
            "resources": self.resources,
            "prompts": self.prompts,
        }

    @classmethod
    def from_json(cls, raw: Any) -> Offer | None:
        """None for anything but what :meth:`as_json` wrote."""
        try:
            tools = tuple(
                OfferedTool(
                    name=_text(tool["name"]),
                    description=_text(tool["description"]),
                    parameters=_object_schema(tool["parameters"]),
                    read_only=tool["read_only"] is True,
                )
                for tool in raw["tools"]
            )
            return cls(
                tools=tools, resources=raw["resources"] is True, prompts=raw["prompts"] is True
            )
        except (KeyError, TypeError, ValueError):
            return None


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("not a string")
    return value


def _object_schema(raw: Any) -> dict[str, Any]:
    schema = dict(raw) if isinstance(raw, Mapping) else {}
    if schema.get("type") != "object":
        schema = {"type": "object", "properties": schema.get("properties") or {}}
    return schema


def settings_key(settings: ServerSettings) -> str:
    """The settings an offer was listed under (``${VAR}`` as written: no secret's value)."""
    text = json.dumps([FORMAT, settings.model_dump(mode="json")], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class OfferMemory:
    """The remembered offers of every server, in one small JSON file (a cache: best effort,
    never an error)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def in_home(cls, home: str | Path) -> OfferMemory:
        return cls(Path(home) / "cache" / "mcp-offers.json")

    def _entries(self) -> dict[str, Any]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return raw if isinstance(raw, dict) else {}

    def recall(self, name: str, settings: ServerSettings) -> Offer | None:
        entry = self._entries().get(name)
        if not isinstance(entry, dict) or entry.get("key") != settings_key(settings):
            return None
        return Offer.from_json(entry.get("offer"))

    def remember(self, name: str, settings: ServerSettings, offer: Offer) -> None:
        entries = self._entries()
        entries[name] = {"key": settings_key(settings), "offer": offer.as_json()}
        if not write_cache_json(self.path, entries):
            log.debug("MCP server %s: its tools could not be remembered", name)

    def forget(self, name: str) -> None:
        entries = self._entries()
        if entries.pop(name, None) is not None:
            write_cache_json(self.path, entries)
