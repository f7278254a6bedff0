"""Keeping one part of a long-running process running (a chat platform, a hosted service):
each attempt is awaited, a failure is reported and retried with backoff, so one broken
plugin never stops the others (or the process)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["HEALTHY_SECONDS", "LOG", "Supervised", "cancel_all", "one_line", "supervise"]

LOG = logging.getLogger("hermes.supervision")
"""Where supervision reports when its caller names no logger of its own."""

HEALTHY_SECONDS = 300.0
"""A part that ran this long before failing starts again from the shortest backoff."""


@dataclass
class Supervised:
    name: str
    state: str = "starting"  # starting | running | failed | not configured
    error: str = ""
    restarts: int = 0
    retry_at: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "error": self.error,
            "restarts": self.restarts,
            "retry_at": self.retry_at,
        }


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


async def supervise(
    what: str,
    state: Supervised,
    attempt: Callable[[], Awaitable[str]],
    *,
    backoff: float,
    backoff_max: float,
    not_configured: tuple[type[BaseException], ...] = (),
    log: logging.Logger = LOG,
) -> None:
    """Run ``attempt`` again and again. It returns why it ended (its failure, in one line);
    raising one of ``not_configured`` ends supervision, since retrying cannot help until
    the user changes something. Each start and failure is reported on ``log`` (the
    process's own, so its log file says which process it was)."""
    delay = backoff
    while True:
        state.state, state.retry_at = "starting", None
        started = time.monotonic()
        if state.restarts:
            log.info("%s: connecting again (restart %d)", what, state.restarts)
        else:
            log.info("%s: connecting", what)
        try:
            error = await attempt()
        except not_configured as exc:
            state.state, state.error = "not configured", one_line(exc)
            log.error("%s is not configured: %s", what, state.error)
            return
        if time.monotonic() - started > HEALTHY_SECONDS:
            delay = backoff
        state.state, state.error = "failed", error
        state.restarts += 1
        state.retry_at = time.time() + delay
        log.error("%s failed: %s; restarting in %.0f s", what, error, delay)
        await asyncio.sleep(delay)
        delay = min(delay * 2, backoff_max)


async def cancel_all(tasks: list[asyncio.Task[None]]) -> None:
    """Cancel the supervising tasks and wait for them to end; the list is emptied."""
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    tasks.clear()
