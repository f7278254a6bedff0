"""Platform SDKs that own an event loop (lark-oapi's long connection, dingtalk-stream,
qq-botpy) run it in a thread of their own; stopping one means cancelling every task on
that loop, however the library catches a cancellation."""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["cancel_all"]


def cancel_all(loop: asyncio.AbstractEventLoop, rounds: int = 5, wait: float = 1.0) -> None:
    """Cancel every task of ``loop`` (which must not be running) and run the loop until they
    end; a library that catches one cancellation and carries on (a reconnect, a sleep) is
    cancelled again, up to ``rounds`` times, each waiting at most ``wait`` seconds."""
    for _ in range(rounds):
        tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
        if not tasks:
            return
        for task in tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.wait(tasks, timeout=wait))
