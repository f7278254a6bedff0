"""Turns the browser is watching: each turn's events kept in order, so a page that opens
(or reconnects) mid-turn replays them from any point, and questions answered by id.

The runtime gives a turn's events once; a :class:`LiveTurn` reads them all as they come and
keeps them as JSON-ready dicts until the session's next turn, or a while after the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator
from typing import Any

from hermes_plugin_web_ui.render import markdown_html, media_url
from hermes_sdk.following import TurnWatcher, follow_turn, tool_event_json
from hermes_sdk.media import Attachment
from hermes_sdk.runtime import (
    InterimReply,
    Notice,
    Question,
    RuntimeTurn,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnEnded,
    TurnEvent,
)

__all__ = ["LiveTurn", "LiveTurns", "attachment_json", "event_json"]

MAX_RESULT_CHARS = 20_000
"""A tool result longer than this is cut in the page (the model read it whole)."""
KEEP_FINISHED_S = 15 * 60.0


def attachment_json(attachment: Attachment) -> dict[str, Any]:
    """A file of a message as the page shows it: a link (an image inline) to /media/."""
    return {
        "name": attachment.name,
        "kind": attachment.kind,
        "size": attachment.size,
        "url": media_url(attachment),
    }


def event_json(event: TurnEvent) -> dict[str, Any]:
    """One event as the page's script reads it."""
    if isinstance(event, TextDelta):
        return {"type": "text", "text": event.text, "restarted": event.restarted}
    if isinstance(event, Notice):
        return {"type": "notice", "text": event.text}
    if isinstance(event, InterimReply):  # a whole reply; the next one streams after it
        return {"type": "interim", "html": str(markdown_html(event.text)) if event.text else ""}
    if isinstance(event, ToolStarted | ToolProgress | ToolFinished):
        return tool_event_json(event, argument_chars=4000, content_chars=MAX_RESULT_CHARS)
    if isinstance(event, Question):
        return {
            "type": "question",
            "id": event.question_id,
            "kind": event.kind,
            "text": event.text,
            "command": event.command,
            "choices": [{"value": c.value, "label": c.label} for c in event.choices],
            "free_text": event.free_text,
            "timeout_s": event.timeout_s,
        }
    assert isinstance(event, TurnEnded)
    return {
        "type": "ended",
        "status": event.status,
        "error": event.error,
        "html": str(markdown_html(event.reply)) if event.reply else "",
        "tool_calls": event.tool_calls,
        "input_tokens": event.usage.input_tokens,
        "output_tokens": event.usage.output_tokens,
        "cost_usd": event.usage.estimated_cost_usd,
        "attachments": [attachment_json(item) for item in event.attachments],
    }


class LiveTurn:
    """One turn's events, in order, for any number of watchers."""

    def __init__(
        self,
        turn: RuntimeTurn,
        text: str,
        before_seq: int,
        attachments: tuple[Attachment, ...] = (),
        turn_id: int = 1,
    ) -> None:
        self.turn = turn
        self.turn_id = turn_id
        """Which of the session's turns in this UI: a page resuming its stream names it, so
        it never continues another turn's events."""
        self.session_id = turn.session_id
        self.before_seq = before_seq
        """Messages stored before this turn: a page shows those, then replays the turn."""
        self.events: list[dict[str, Any]] = [
            {"type": "user", "text": text, "attachments": [attachment_json(a) for a in attachments]}
        ]
        self.questions: dict[str, Question] = {}
        self.ended_at: float | None = None
        self._changed = asyncio.Condition()
        self._pump = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async def record(event: TurnEvent) -> None:
            await self._add(event_json(event))

        async def asked(question: Question) -> None:
            self.questions[question.question_id] = question
            await record(question)

        watcher = TurnWatcher(
            on_text=lambda text: record(TextDelta(text=text)),
            on_restart=lambda: record(TextDelta(text="", restarted=True)),  # the page redraws
            on_notice=lambda text: record(Notice(text=text)),
            on_interim=lambda text: record(InterimReply(text=text)),
            on_tool_started=record,
            on_tool_progress=record,
            on_tool_finished=record,
            on_question=asked,
            on_end=record,
        )
        try:
            await follow_turn(self.turn, watcher)
        except Exception as exc:  # noqa: BLE001 - the page must hear the end whatever happened
            await self._add({"type": "ended", "status": "error", "error": str(exc), "html": ""})
        finally:
            self.ended_at = time.monotonic()
            self.questions.clear()  # the runtime answered any still open "no"
            async with self._changed:
                self._changed.notify_all()

    async def _add(self, entry: dict[str, Any]) -> None:
        async with self._changed:
            self.events.append(entry)
            self._changed.notify_all()

    @property
    def done(self) -> bool:
        return self.ended_at is not None

    async def answer(self, question_id: str, value: str) -> bool:
        """Answer an open question. Raises ValueError if ``value`` is not an answer it
        takes; False if it closed meanwhile (timed out, or answered in another tab)."""
        question = self.questions.get(question_id)
        if question is None:
            return False
        if value not in {choice.value for choice in question.choices} and not question.free_text:
            raise ValueError(f"{value!r} is not one of the answers")
        answered = question.answer(value) or (question.free_text and question.answer_text(value))
        self.questions.pop(question_id, None)  # answered now, or closed before
        if answered:
            await self._add({"type": "answered", "id": question_id, "value": value})
        return answered

    async def follow(self, after: int) -> AsyncIterator[tuple[int, dict[str, Any]]]:
        """Every event with an index above ``after``, as it comes, until the turn ends.
        Yields nothing new for ``heartbeat`` waits: the caller sends a keep-alive then."""
        position = after + 1
        while True:
            async with self._changed:
                while position >= len(self.events) and not self.done:
                    with contextlib.suppress(TimeoutError):  # (wait_for can lose a cancel on 3.11)
                        async with asyncio.timeout(15.0):
                            await self._changed.wait()
                        continue
                    break  # a quiet quarter-minute: let the caller keep the line alive
                fresh = self.events[position:]
            if not fresh and self.done:
                return
            for entry in fresh:
                yield position, entry
                position += 1
            if not fresh:
                yield -1, {}


class LiveTurns:
    """The turns of this UI's sessions: one per session, the running or the last one."""

    def __init__(self) -> None:
        self._by_session: dict[str, LiveTurn] = {}
        self._numbers = itertools.count(1)

    def next_id(self) -> int:
        return next(self._numbers)

    def get(self, session_id: str) -> LiveTurn | None:
        return self._by_session.get(session_id)

    def add(self, live: LiveTurn) -> None:
        now = time.monotonic()
        for session_id, old in list(self._by_session.items()):
            if old.ended_at is not None and now - old.ended_at > KEEP_FINISHED_S:
                del self._by_session[session_id]
        self._by_session[live.session_id] = live

    def question(self, question_id: str) -> LiveTurn | None:
        for live in self._by_session.values():
            if question_id in live.questions:
                return live
        return None

    async def stop_all(self, wait_s: float = 10.0) -> None:
        """Stop every running turn, and wait (a while) for them to end."""
        running = [live for live in self._by_session.values() if not live.done]
        for live in running:
            live.turn.stop()
        if running:
            await asyncio.wait(
                [asyncio.ensure_future(live.turn.result()) for live in running], timeout=wait_s
            )
