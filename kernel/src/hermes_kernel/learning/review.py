"""Background reviews: after the reply is delivered, a side session looks back at a turn and
may keep what is worth keeping: a new skill or a patch to one, or a memory entry.

A review is its own session (source "review", a child of the reviewed one, same person and
working folder) with a short budget and only the tools that write memory and skills or read:
it can learn, never act on the world. The user's session is untouched, and a review that fails
is logged; it never surfaces as an error of the turn it reviews.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from hermes_kernel.engine.control import TurnControl
from hermes_kernel.engine.run import TurnResult
from hermes_kernel.engine.turn import TurnEngine
from hermes_kernel.learning.triggers import LearningSettings, review_reason
from hermes_kernel.store.messages import Message
from hermes_kernel.store.sessions import REVIEW_SOURCE, Session
from hermes_kernel.store.state import StateStore
from hermes_sdk import ToolSpec

__all__ = ["MEMORY_NUDGE", "SKILL_REVIEW", "Reviews", "render_transcript"]

log = logging.getLogger("hermes.learning")

SKILL_REVIEW = """\
# Background review

You are looking back, in the background, at a turn this agent just finished; the user does not
see this conversation. Decide whether it taught something worth keeping for next time:
- a reusable method (steps, commands, pitfalls) for a kind of task that will come again: check
  skills_list first; improve a matching skill with skill_manage action=patch, or create one with
  skill_manage action=create (SKILL.md with name and description frontmatter, then the steps);
- durable facts about the user or their environment: the memory tool.
Most turns deserve nothing. Never save secrets, one-off details or what the transcript already
says plainly. Finish with one line: what you saved, or NOTHING."""

MEMORY_NUDGE = """\
# Memory check

You are looking back, in the background, at the recent part of a conversation; the user does
not see this. Is there anything that deserves to go into memory: the user's preferences, facts
about them or their environment, lessons that will matter in later sessions? Use the memory
tool for each; do not repeat what memory already holds. Never save secrets. Finish with one
line: what you saved, or NOTHING."""

SKILL_TOOLS = frozenset({"memory", "skills_list", "skill_view", "skill_manage", "session_search"})
MEMORY_TOOLS = frozenset({"memory", "session_search"})
REVIEW_ITERATIONS = 12
TRANSCRIPT_CHARS = 24_000
RESULT_CHARS = 1_500
DRAIN_SECONDS = 120.0
REVIEW_QUEUE = 8
"""Reviews that wait while one runs (a busy gateway triggers many); past this many, the
oldest waiting one is dropped. One per session and kind: a newer trigger replaces it."""


@dataclass(frozen=True)
class _Waiting:
    session: Session
    kind: str  # "skill" or "memory"
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
    (up to :data:`REVIEW_QUEUE` of them), so that at a busy gateway every person's memory
    check still happens."""

    def __init__(
        self,
        store: StateStore,
        make_engine: Callable[[Mapping[str, ToolSpec]], TurnEngine],
        tools: Mapping[str, ToolSpec],
        settings: LearningSettings,
        on_done: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.make_engine = make_engine
        self.tools = tools
        self.settings = settings
        self.on_done = on_done
        self.task: asyncio.Task[None] | None = None
        self._waiting: deque[_Waiting] = deque()

    def review_tools(self, names: frozenset[str], read_only: bool) -> dict[str, ToolSpec]:
        return {
            name: spec
            for name, spec in self.tools.items()
            if name in names or (read_only and spec.parallel_safe)
        }

    def after_turn(self, session: Session, user_text: str, result: TurnResult) -> str | None:
        """Start a review if this turn deserves one; returns why, or None."""
        if session.source == REVIEW_SOURCE:
            return None
        reason = review_reason(result, user_text, self.settings)
        tools: dict[str, ToolSpec] = {}
        if reason is not None:
            kind, tools = "skill", self.review_tools(SKILL_TOOLS, read_only=True)
        elif self._nudge_due(session, result):
            reason = f"every {self.settings.nudge_every_turns} user turns"
            kind, tools = "memory", self.review_tools(MEMORY_TOOLS, read_only=False)
        if reason is None or not ({"memory", "skill_manage"} & set(tools)):
            return None
        review = _Waiting(session, kind, reason, tools)
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._work(review))
        else:
            self._wait(review)
        return reason

    def _wait(self, review: _Waiting) -> None:
        for index, waiting in enumerate(self._waiting):
            if (waiting.session.id, waiting.kind) == (review.session.id, review.kind):
                self._waiting[index] = review  # its place in line; the newer trigger's view
                return
        self._waiting.append(review)
        if len(self._waiting) > REVIEW_QUEUE:
            dropped = self._waiting.popleft()
            log.info("review of %s dropped: %d others wait", dropped.session.id, REVIEW_QUEUE)

    async def _work(self, review: _Waiting) -> None:
        while True:
            await self._run(review.session, review.kind, review.reason, review.tools)
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
        self, session: Session, kind: str, reason: str, tools: Mapping[str, ToolSpec]
    ) -> None:
        try:
            messages = await asyncio.to_thread(self.store.messages.of_session, session.id)
            if kind == "skill":
                shown = _last_user_turns(messages, 1)
                instructions, turns = SKILL_REVIEW, "the turn"
            else:
                shown = _last_user_turns(messages, self.settings.nudge_every_turns)
                instructions, turns = MEMORY_NUDGE, "the recent turns"
            engine = self.make_engine(tools)
            child = await asyncio.to_thread(
                engine.start_session,
                REVIEW_SOURCE,
                Path(session.cwd) if session.cwd else None,
                user_scope=session.user_scope,
                parent_session_id=session.id,
                instructions=instructions,
            )
            request = (
                f"Review {turns} below (reviewed because {reason}).\n\n{render_transcript(shown)}"
            )
            result = await engine.run_turn(child.id, request, TurnControl())
            await asyncio.to_thread(engine.end_session, child.id, "review_done")
            summary = (result.text or result.error or result.status).strip().splitlines()
            line = summary[-1] if summary else result.status
            log.info("review of %s (%s): %s", session.id, reason, line)
            if self.on_done is not None and line.strip().upper() != "NOTHING":
                self.on_done(f"learned in the background: {line}")
        except Exception as exc:  # noqa: BLE001 - a review must never fail the chat
            log.warning("background review of %s failed: %s", session.id, exc)

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
