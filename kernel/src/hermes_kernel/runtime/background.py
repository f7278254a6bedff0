"""Background turns (``/background TEXT``): a task run in a session of its own, opened for
the session it was asked from (its parent), while the conversation goes on. Nobody watches
it, so its questions are answered no (a dangerous command is denied unless the approvals
mode lets it run); its outcome is told in one line through the asking front-end's
``notify``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from hermes_commons.text import one_line
from hermes_sdk.runtime import RuntimeTurn, SessionOptions, SessionSummary

__all__ = ["Background"]

log = logging.getLogger("hermes")

SOURCE = "background"
"""The source background sessions are listed under."""
SHOWN_CHARS = 300


class BackgroundHost(Protocol):
    """What a background task needs of the runtime: to open its session like its parent
    (the same engine: no more tools), run and end it, and know whether a user went on in
    it meanwhile."""

    async def open_like(self, original_id: str, options: SessionOptions) -> SessionSummary: ...

    def start_turn(self, session_id: str, text: str) -> RuntimeTurn: ...

    async def end_session(self, session_id: str, reason: str = "ended") -> None: ...

    def taken_up(self, session_id: str) -> bool: ...


class Background:
    """The background tasks a runtime runs, kept until they end (a task nobody holds may be
    collected while it runs)."""

    def __init__(self, host: BackgroundHost) -> None:
        self.host = host
        self.tasks: set[asyncio.Task[None]] = set()

    async def start(
        self,
        text: str,
        parent: SessionSummary,
        notify: Callable[[str], None],
        *,
        user_scope: str | None,
    ) -> SessionSummary:
        """Open the task's session on its parent's engine (the parent's tools, never more)
        and start its turn; ``notify`` hears how it ended."""
        options = SessionOptions(
            source=SOURCE,
            user_scope=user_scope,
            cwd=parent.cwd,
            provider=parent.provider,
            model=parent.model,
            parent_session_id=parent.session_id,
            title=f"background: {one_line(text, 60)}",
        )
        session = await self.host.open_like(parent.session_id, options)
        turn = self.host.start_turn(session.session_id, text)
        task = asyncio.ensure_future(self._tell(turn, notify))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return session

    async def _tell(self, turn: RuntimeTurn, notify: Callable[[str], None]) -> None:
        session_id = turn.session_id
        result = await turn.result()
        try:  # what its tools held (a container, a connection) is freed now
            if not self.host.taken_up(session_id):  # unless the user went on in it
                await self.host.end_session(session_id, "background_done")
        except Exception:  # deleted meanwhile: the line below still says how it went
            log.debug("background: could not end %s", session_id, exc_info=True)
        if result.ok:
            line = f"background task {session_id} done: {one_line(result.reply, SHOWN_CHARS)}"
        else:
            why = result.error or result.status
            line = f"background task {session_id} ended ({result.status}): {one_line(why, 200)}"
        try:
            notify(f"{line} (/resume {session_id} to go on there)")
        except Exception:  # a front-end gone meanwhile: the session keeps the outcome
            log.debug("background: could not tell how %s ended", session_id, exc_info=True)
