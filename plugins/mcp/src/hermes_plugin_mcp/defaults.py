"""Defaults of an ``mcp_servers`` entry that code outside the section model also needs (the
status lines read entries that may not validate): declared once, here, as plain values."""

from __future__ import annotations

from typing import Final

ENABLED: Final = True
"""``enabled``: a configured server is started."""
TRANSPORT: Final = "streamable_http"
"""``transport``: how a server given by ``url`` is spoken to."""
