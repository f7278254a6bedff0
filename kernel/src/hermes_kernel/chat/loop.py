"""Running a chat's event loop so that leaving never hangs.

A tool that ignores a stop (a handler blocked in a thread) keeps its worker thread busy;
asyncio.run, and the interpreter at exit, would wait for it however long it takes. The chat
runs blocking work on its own named pool instead, and when such a thread is still running
at the end, the process leaves without it: its call is already recorded as effect unknown.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any

THREAD_PREFIX = "hermes-chat-worker"


def run_chat(main: Coroutine[Any, Any, int]) -> int:
    loop = asyncio.new_event_loop()
    executor = ThreadPoolExecutor(thread_name_prefix=THREAD_PREFIX)
    loop.set_default_executor(executor)
    try:
        return loop.run_until_complete(main)
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        executor.shutdown(wait=False, cancel_futures=True)


def stray_workers() -> list[threading.Thread]:
    return [
        thread
        for thread in threading.enumerate()
        if thread.name.startswith(THREAD_PREFIX) and thread.is_alive()
    ]


def leave_now_if_stuck(code: int, cleanup: Callable[[], None]) -> None:
    """If a tool thread is still running, clean up and exit at once with ``code``."""
    if not stray_workers():
        return
    with contextlib.suppress(Exception):
        cleanup()
    print("hermes: a tool was still running; left without waiting for it", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
