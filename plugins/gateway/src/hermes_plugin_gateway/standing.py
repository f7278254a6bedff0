"""Where this gateway stands among the workers serving its store, as its pulse and the
platforms' lease last said (:mod:`.workers` keeps it; dispatch and intake read it)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from hermes_plugin_gateway.platforms import Platforms

__all__ = ["Standing"]


@dataclass
class Standing:
    platforms: Platforms
    leading: bool = False
    """Whether this worker holds the platforms (connects them, sends the replies)."""
    peers: int = 0
    """Other live workers on the store (0: this gateway serves it alone)."""
    decided: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once this worker knows whether it holds the platforms."""

    def platforms_taken(self) -> list[str] | None:
        """Whose messages this worker takes: holding the platforms, the connected ones'
        only (a turn resumed there can stream and ask); else any platform's (None)."""
        if not self.leading:
            return None
        return [name for name in self.platforms.states if self.platforms.adapter(name)]
