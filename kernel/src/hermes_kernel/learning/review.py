"""Background reviews: after the reply is delivered, a side session looks back at the
conversation and may keep what is worth keeping. What to look for, with which tools and when
is each review's own (plugins yield a :class:`~hermes_sdk.ReviewSpec`); this module only
decides when one is due and runs them, one at a time.

A review is its own session (source "review", a child of the reviewed one, same person and
working folder) with a short budget and only the tools its spec names: it can learn, never
act on the world. The user's session is untouched, and a review that fails is logged; it
never surfaces as an error of the turn it reviews.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hermes_kernel.engine.control import TurnControl
from hermes_kernel.engine.run import TurnResult
from hermes_kernel.engine.turn import TurnEngine
from hermes_kernel.learning.triggers import LearningSettings, review_reason
from hermes_kernel.store.messages import Message
from hermes_kernel.store.sessions import REVIEW_SOURCE, Session
from hermes_kernel.store.state import StateStore
from hermes_sdk import ReviewSpec, ToolSpec

__all__ = ["REVIEW_QUEUE", "Reviews", "render_transcript"]

log = logging.getLogger("hermes.learning")

REVIEW_ITERATIONS = 12
TRANSCRIPT_CHARS = 24_000
RESULT_CHARS = 1_500
DRAIN_SECONDS = 120.0
REVIEW_QUEUE = 8
"""Reviews that wait while one runs (a busy front-end triggers many); past this many, the
oldest waiting one is dropped. One per session and review: a newer trigger replaces it."""


@dataclass(frozen=True)
class _Waiting:
    session: Session
    spec: ReviewSpec
    reason: str
    tools: Mapping[str, ToolSpec]


def render_transcript(messages: list[Message], limit: int = TRANSCRIPT_CHARS) -> str:
    """The messages as plain text for a reviewer, tool results cut short, newest kept."""
    lines: list[str] = []
    for message in messages:
        content = (message.content or "").strip()
        if message.role == "tool":
            if len(content) > RESULT_CHARS:
                content = content[:RESULT_CHARS] + f" [… {len(content) - RESULT_CHARS} more]"
            lines.append(f"TOOL RESULT ({message.tool_name}): {content}")
            continue
        if content:
            lines.append(f"{message.role.upper()}: {content}")
        for call in message.tool_calls or []:
            arguments = str(call.get("arguments", ""))[:RESULT_CHARS]
            lines.append(f"TOOL CALL {call.get('name')}: {arguments}")
    text = "\n".join(lines)
    if len(text) > limit:
        text = "[… earlier part left out]\n" + text[-limit:]
    return text


def _last_user_turns(messages: list[Message], turns: int) -> list[Message]:
    starts = [i for i, message in enumerate(messages) if message.role == "user"]
    if not starts:
        return messages
    return messages[starts[-min(turns, len(starts))] :]


class Reviews:
    """Schedules reviews on the running event loop; one at a time per process, so a burst of
    turns does not become a burst of model calls. A trigger while one runs waits its turn
    (up to :data:`REVIEW_QUEUE` of them), so that with many people talking every person's
    periodic review still happens."""

    def __init__(
        self,
        store: StateStore,
        make_engine: Callable[[Mapping[str, ToolSpec]], TurnEngine],
        tools: Mapping[str, ToolSpec],
        settings: LearningSettings,
        on_done: Callable[[str], None] | None = None,
        *,
        specs: Sequence[ReviewSpec] = (),
    ) -> None:
        self.store = store
        self.make_engine = make_engine
        self.tools = tools
        """The agent's tools, read when a review is due (tool sources add theirs late)."""
        self.settings = settings
        self.on_done = on_done
        self.specs = tuple(specs)
        self.task: asyncio.Task[None] | None = None
        self._waiting: deque[_Waiting] = deque()

    def review_tools(self, spec: ReviewSpec) -> dict[str, ToolSpec]:
        """The installed tools ``spec`` may use; empty when none of them keeps anything."""
        chosen = {
            name: tool
            for name, tool in self.tools.items()
            if name in spec.tools or (spec.read_only_tools and tool.parallel_safe)
        }
        return chosen if spec.keeps_with & chosen.keys() else {}

    def _due(self, session: Session, user_text: str, result: TurnResult) -> list[_Waiting]:
        """The reviews this turn triggers, with the tools each may use: the lesson reviews
        if it taught something (and one of them can run), else the periodic ones if due."""
        lesson = review_reason(result, user_text, self.settings)
        if lesson is not None:
            due = self._runnable(session, "lesson", lesson)
            if due:
                return due
        if any(spec.trigger == "periodic" for spec in self.specs) and self._nudge_due(
            session, result
        ):
            return self._runnable(
                session, "periodic", f"every {self.settings.nudge_every_turns} user turns"
            )
        return []

    def _runnable(self, session: Session, trigger: str, reason: str) -> list[_Waiting]:
        due = []
        for spec in self.specs:
            if spec.trigger == trigger and (tools := self.review_tools(spec)):
                due.append(_Waiting(session, spec, reason, tools))
        return due

    def after_turn(self, session: Session, user_text: str, result: TurnResult) -> str | None:
        """Start the reviews this turn deserves; returns why, or None."""
        if session.source == REVIEW_SOURCE or not self.specs:
            return None
        due = self._due(session, user_text, result)
        for review in due:
            if self.task is None or self.task.done():
                self.task = asyncio.ensure_future(self._work(review))
            else:
                self._wait(review)
        return due[0].reason if due else None

    def _wait(self, review: _Waiting) -> None:
        key = (review.session.id, review.spec.name)
        for index, waiting in enumerate(self._waiting):
            if (waiting.session.id, waiting.spec.name) == key:
                self._waiting[index] = review  # its place in line; the newer trigger's view
                return
        self._waiting.append(review)
        if len(self._waiting) > REVIEW_QUEUE:
            dropped = self._waiting.popleft()
            log.info("review of %s dropped: %d others wait", dropped.session.id, REVIEW_QUEUE)

    async def _work(self, review: _Waiting) -> None:
        while True:
            await self._run(review.session, review.spec, review.reason, review.tools)
            if not self._waiting:
                return
            review = self._waiting.popleft()

    def _nudge_due(self, session: Session, result: TurnResult) -> bool:
        every = self.settings.nudge_every_turns
        if every <= 0 or result.status != "done":
            return False
        count = self.store.db.query_value(
            "SELECT count(*) FROM messages WHERE session_id = ? AND role = 'user'", (session.id,)
        )
        return bool(count) and int(count) % every == 0

    async def _run(
        self, session: Session, spec: ReviewSpec, reason: str, tools: Mapping[str, ToolSpec]
    ) -> None:
        try:
            messages = await asyncio.to_thread(self.store.messages.of_session, session.id)
            if spec.trigger == "lesson":
                shown, turns = _last_user_turns(messages, 1), "the turn"
            else:
                shown = _last_user_turns(messages, self.settings.nudge_every_turns)
                turns = "the recent turns"
            engine = self.make_engine(tools)
            child = await asyncio.to_thread(
                engine.start_session,
                REVIEW_SOURCE,
                Path(session.cwd) if session.cwd else None,
                user_scope=session.user_scope,
                parent_session_id=session.id,
                instructions=spec.instructions,
            )
            request = (
                f"Review {turns} below (reviewed because {reason}).\n\n{render_transcript(shown)}"
            )
            result = await engine.run_turn(child.id, request, TurnControl())
            await asyncio.to_thread(engine.end_session, child.id, "review_done")
            summary = (result.text or result.error or result.status).strip().splitlines()
            line = summary[-1] if summary else result.status
            log.info("review %s of %s (%s): %s", spec.name, session.id, reason, line)
            if self.on_done is not None and line.strip().upper() != "NOTHING":
                self.on_done(f"learned in the background: {line}")
        except Exception as exc:  # noqa: BLE001 - a review must never fail the chat
            log.warning("background review %s of %s failed: %s", spec.name, session.id, exc)

    async def drain(self, timeout: float = DRAIN_SECONDS) -> None:
        """Wait for a running review (at exit), cancelling it past ``timeout``; the ones
        still waiting are dropped."""
        if self._waiting:
            log.info("%d waiting background reviews dropped at exit", len(self._waiting))
            self._waiting.clear()
        task = self.task
        if task is None or task.done():
            return
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if not done:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            log.warning("a background review was cut off at exit after %.0f s", timeout)
