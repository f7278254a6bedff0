"""Interrupting a turn from outside: a soft interrupt (new input arrived: finish the current
step, then stop) or a hard stop (/stop, Ctrl+C: cancel the model request and stop tools
within about a second)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from hermes_sdk.media import Attachment

T = TypeVar("T")


class Stopped(Exception):
    """The turn was stopped (hard) while it waited for something."""


class TurnControl:
    """Shared by the turn and whoever may interrupt it. Call its methods on the turn's event
    loop; from another thread (a signal handler, a UI thread) use
    ``loop.call_soon_threadsafe(control.stop)``."""

    def __init__(self) -> None:
        self.soft = asyncio.Event()
        self.hard = asyncio.Event()
        self.cancel = threading.Event()
        """Set on a hard stop, for tools running in worker threads (ToolContext.cancel)."""
        self._signal: asyncio.Future[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        """The turn's event loop once it runs: tools in worker threads reach the model
        client through it (a model aside)."""
        self.reasoning_effort: str | None = None
        """The session's own reasoning effort (``/reasoning``), before config.yaml's."""
        self.steers: list[str] = []
        """Notes the user added while the turn runs (``/steer``): they join the conversation
        before the next model call."""
        self.overlay: str | None = None
        """The session's personality (``/personality``): this turn's context, not the
        frozen system prompt."""
        self.outbound: list[Attachment] = []
        """Files the turn's tools sent to the user (ToolContext.send_file), in order: they
        go out with the reply."""
        self.later: Callable[[str], None] | None = None
        """The front-end's taker of reports of work left running (ToolContext.later)."""

    def interrupt(self) -> None:
        self.soft.set()

    def stop(self) -> None:
        self.soft.set()
        self.hard.set()
        self.cancel.set()
        if self._signal is not None and not self._signal.done():
            self._signal.set_result(None)

    def stop_signal(self) -> asyncio.Future[None]:
        """A future done on a hard stop: one per turn, so waiting on it next to a request or
        a tool costs no extra task each time."""
        loop = asyncio.get_running_loop()
        if self._signal is None or self._signal.get_loop() is not loop:
            self._signal = loop.create_future()
            if self.hard.is_set():
                self._signal.set_result(None)
        return self._signal

    @property
    def stopped(self) -> bool:
        return self.hard.is_set()

    async def race(self, work: Coroutine[Any, Any, T]) -> T:
        """``work``'s result; on a hard stop meanwhile it is cancelled and Stopped raised."""
        task = asyncio.ensure_future(work)
        racing: set[asyncio.Future[Any]] = {task, self.stop_signal()}
        try:
            await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait({task})
        if task.cancelled():
            raise Stopped
        return task.result()

    async def sleep(self, seconds: float) -> bool:
        """Sleep, waking early on a hard stop; True if stopped."""
        try:
            await asyncio.wait_for(self.hard.wait(), timeout=seconds)
        except TimeoutError:
            return False
        return True


class LinkedCancel(threading.Event):
    """A cancel event of its own that also reads as set once ``parent`` is: a call made
    inside a tool (set when the calling tool gives up on it) within its turn (set when the
    user stops)."""

    def __init__(self, parent: threading.Event) -> None:
        super().__init__()
        self.parent = parent

    def is_set(self) -> bool:
        return super().is_set() or self.parent.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.is_set():
            left = 0.05 if deadline is None else min(0.05, deadline - time.monotonic())
            if left <= 0:
                return self.is_set()
            super().wait(left)
        return True
