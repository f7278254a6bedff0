"""One route's conversation as the stages share it: its queue, and the turn it runs."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field

from hermes_plugin_gateway.ledger import InboxItem
from hermes_sdk.platform import ChatRef
from hermes_sdk.runtime import RuntimeTurn

__all__ = ["Conversation"]


@dataclass
class Conversation:
    """One route's queue and, while it runs, its turn (dispatch fills the queue; the turn
    runner sets ``turn``; ``/stop`` empties the queue and stops the turn)."""

    key: str
    chat: ChatRef
    queue: deque[InboxItem] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None
    turn: RuntimeTurn | None = None
    stopped_by_user: bool = False
    dropped: set[int] = field(default_factory=set)
    """Messages /stop dropped after they were taken off the queue."""
    current: int | None = None
