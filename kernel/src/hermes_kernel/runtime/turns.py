"""One turn run for a front-end: its events in a queue, its questions, its stop.

The turn's own task writes events (from the event loop, or from a tool's worker thread);
the front-end reads them at its own pace. Questions block the asking tool's thread until
the front-end answers, the turn is stopped, or the question times out (no).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import secrets
import threading
from collections.abc import AsyncIterator, Callable, Sequence

from hermes_kernel.engine.control import TurnControl
from hermes_sdk.runtime import Question, QuestionChoice, RuntimeTurn, TurnEnded, TurnEvent

__all__ = ["DECLINED", "KernelTurn"]

DECLINED = ""
"""What :meth:`KernelTurn.ask` returns when the front-end declined to choose."""
POLL_SECONDS = 0.25
"""How often a waiting question looks for a stop, so /stop never waits out its timeout."""


class KernelTurn(RuntimeTurn):
    def __init__(
        self,
        session_id: str,
        *,
        loop: asyncio.AbstractEventLoop,
        answers_questions: bool,
        question_timeout: float,
    ) -> None:
        self.session_id = session_id
        self.control = TurnControl()
        self.answers_questions = answers_questions
        self.question_timeout = question_timeout
        self._loop = loop
        self._thread = threading.get_ident()
        self._events: asyncio.Queue[TurnEvent] = asyncio.Queue()
        self._ended: asyncio.Future[TurnEnded] = loop.create_future()
        self._open: set[concurrent.futures.Future[str | None]] = set()
        self._iterated = False
        self.task: asyncio.Task[None] | None = None
        self.closed = False
        """The turn is ending: it takes no more notes (``steer`` says so, and the note is
        sent as a message instead)."""

    # --- from the turn (loop or worker thread) ---------------------------------------------

    def emit(self, event: TurnEvent) -> None:
        if threading.get_ident() == self._thread:
            self._events.put_nowait(event)
            return
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody is reading
            self._loop.call_soon_threadsafe(self._events.put_nowait, event)

    def finish(self, ended: TurnEnded) -> None:
        """The last event (on the loop)."""
        self._decline_open()
        self._events.put_nowait(ended)
        if not self._ended.done():
            self._ended.set_result(ended)

    def ask(
        self,
        kind: str,
        text: str,
        choices: Sequence[QuestionChoice],
        command: str | None = None,
        *,
        free_text: bool = False,
    ) -> str | None:
        """Ask the front-end and wait (in a worker thread) for a choice's value:
        :data:`DECLINED` if it declined, None for no answer in time or a stop."""
        answer: concurrent.futures.Future[str | None] = concurrent.futures.Future()

        def reply(value: str | None) -> bool:
            try:
                answer.set_result(DECLINED if value is None else value)
            except concurrent.futures.InvalidStateError:
                return False  # answered, timed out or stopped already
            return True

        question = Question(
            question_id=secrets.token_hex(6),
            kind="approval" if kind == "approval" else "question",
            text=text,
            choices=tuple(choices),
            command=command,
            timeout_s=self.question_timeout,
            free_text=free_text,
            _reply=reply,
        )
        self._open.add(answer)
        try:
            if self.control.cancel.is_set():
                return None
            self.emit(question)
            waited = 0.0
            while waited < self.question_timeout:
                try:
                    return answer.result(POLL_SECONDS)
                except concurrent.futures.TimeoutError:
                    waited += POLL_SECONDS
                    if self.control.cancel.is_set():
                        return None
            return None
        finally:
            answer.cancel()  # closed: a late answer is refused
            self._open.discard(answer)

    # --- for the front-end ------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[TurnEvent]:
        if self._iterated:
            raise RuntimeError("a turn's events can be read once")
        self._iterated = True
        return self._read()

    async def _read(self) -> AsyncIterator[TurnEvent]:
        while True:
            event = await self._events.get()
            yield event
            if isinstance(event, TurnEnded):
                return

    async def result(self) -> TurnEnded:
        return await asyncio.shield(self._ended)

    def interrupt(self) -> None:
        self._on_loop(self.control.interrupt)

    def stop(self) -> None:
        self.control.cancel.set()  # at once, for tools and questions in worker threads
        self._decline_open()
        self._on_loop(self.control.stop)

    def steer(self, text: str) -> bool:
        if self.done or self.closed or not text.strip():
            return False
        self._on_loop(lambda: self.control.steers.append(text.strip()))
        return True

    @property
    def done(self) -> bool:
        return self._ended.done()

    def _on_loop(self, action: Callable[[], None]) -> None:
        if threading.get_ident() == self._thread:
            action()
            return
        with contextlib.suppress(RuntimeError):  # the loop closed: the turn is over
            self._loop.call_soon_threadsafe(action)

    def _decline_open(self) -> None:
        for answer in list(self._open):
            if not answer.done():
                with contextlib.suppress(concurrent.futures.InvalidStateError):
                    answer.set_result(None)
