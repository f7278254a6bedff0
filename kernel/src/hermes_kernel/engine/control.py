"""Interrupting a turn from outside: a soft interrupt (new input arrived: finish the current
step, then stop) or a hard stop (/stop, Ctrl+C: cancel the model request and stop tools
within about a second)."""

from __future__ import annotations

import asyncio


class TurnControl:
    """Shared by the turn and whoever may interrupt it. Thread-safe through the loop."""

    def __init__(self) -> None:
        self.soft = asyncio.Event()
        self.hard = asyncio.Event()

    def interrupt(self) -> None:
        self.soft.set()

    def stop(self) -> None:
        self.soft.set()
        self.hard.set()

    @property
    def stopped(self) -> bool:
        return self.hard.is_set()

    async def sleep(self, seconds: float) -> bool:
        """Sleep, waking early on a hard stop; True if stopped."""
        try:
            await asyncio.wait_for(self.hard.wait(), timeout=seconds)
        except TimeoutError:
            return False
        return True
