"""One connection to a configured MCP server, timed, and the tools it offers: ``hermes mcp
test`` and the dashboard's MCP page ask through here."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_plugin_mcp.settings import ServerSettings

if TYPE_CHECKING:
    from hermes_plugin_mcp.offers import OfferedTool

__all__ = ["probe"]


async def probe(
    name: str, settings: ServerSettings, secrets: Mapping[str, str], home: str, cwd: str
) -> tuple[float, list[OfferedTool]]:
    """Connect, list the tools, close: the seconds it took and the tools. Raises
    ConnectError (one line) when the server does not start or answer."""
    from hermes_plugin_mcp.connection import ServerConnection
    from hermes_plugin_mcp.offers import OfferMemory

    connection = ServerConnection(
        name, settings, secrets, cwd, Path(home) / "logs", memory=OfferMemory.in_home(home)
    )
    started = time.monotonic()
    try:
        await connection.connect()
        assert connection.offer is not None  # connected: listed
        return time.monotonic() - started, list(connection.offer.tools)
    finally:
        await connection.aclose()
