"""Tool sources: tools known only once something is reached (an MCP server's tools).

A registration hook must be cheap and must not do I/O, so a plugin whose tools come from
elsewhere yields a :class:`~hermes_sdk.specs.ToolSourceSpec` instead. Its factory gets a
:class:`ToolSourceContext` and returns a :class:`ToolSource`. Before a session's first
model call, the kernel awaits every source's :meth:`ToolSource.start` together (each
source keeps its own deadlines: a slow server must not be silently missing, nor hold the
agent forever), then gives the model :meth:`ToolSource.tools`. What failed is
:meth:`ToolSource.problems`: one line each, shown to the user. In a long-running process
(the gateway) a source is started once and shared by every session.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from hermes_sdk.specs import ToolSpec

__all__ = ["ToolSource", "ToolSourceContext"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSourceContext:
    """What a tool source's factory gets."""

    home: str
    cwd: str
    config: Mapping[str, Any] = field(default_factory=dict)
    """config.yaml as loaded (a source reads its own section)."""
    secrets: Mapping[str, str] = field(default_factory=dict)
    """The environment and .env merged, for ``${VAR}`` in the source's settings. Never pass
    them on wholesale (to a subprocess, a log, the model)."""


@runtime_checkable
class ToolSource(Protocol):
    async def start(self) -> None:
        """Connect. Called once, on the event loop the tools will run on; must return (or
        raise) within the source's own deadlines."""
        ...

    def tools(self) -> Sequence[ToolSpec]:
        """The tools available now; their handlers run on the loop ``start`` ran on."""
        ...

    def problems(self) -> Sequence[str]:
        """One line per part that failed (a server that did not start, and why)."""
        ...

    async def aclose(self) -> None:
        """Disconnect; every process the source started ends."""
        ...
