"""Tool and toolset names for a server's tools: ``mcp_<server>_<tool>``, in the characters
and length model APIs accept (64), unique even when two long names share a start."""

from __future__ import annotations

import hashlib
import re

__all__ = ["tool_name", "toolset_name"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_UNSAFE_TOOLSET = re.compile(r"[^a-z0-9_-]+")


def tool_name(server: str, tool: str) -> str:
    name = _UNSAFE.sub("_", f"mcp_{server}_{tool}")
    if len(name) <= 64:
        return name
    digest = hashlib.sha1(f"{server}/{tool}".encode()).hexdigest()[:8]
    return f"{name[:55]}_{digest}"


def toolset_name(server: str) -> str:
    """``mcp-<server>``: the toolset that holds a server's tools (``--toolsets mcp-time``)."""
    return ("mcp-" + _UNSAFE_TOOLSET.sub("_", server.lower()))[:64]
