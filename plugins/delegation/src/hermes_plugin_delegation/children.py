"""A delegated child: its session opened (linked to its parent, its tools narrowed), its
turn started and followed to its end, stopped when asked or when it stalls.

Each child is a session of source ``delegate`` opened on the agent's runtime with
``parent_session_id`` set, so it is stored, listed and searchable like any other, and its
usage is its own. Its first user message is the goal (with the context given). It has the
parent's tools minus those that need someone there or act for the user elsewhere
(``clarify``, ``memory``, ``send_message``, ``cronjob``) and, at the depth limit, the
delegation tools themselves. Nobody approves its dangerous commands: they are denied, and
its summary says so. A child that reports no progress (no event: text, a tool starting or
ending) for ``stale_after_seconds`` is stopped and reported as timed out.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Any

from hermes_plugin_delegation.settings import DelegationConfig
from hermes_sdk.runtime import Runtime, RuntimeTurn, SessionOptions, TurnEnded
from hermes_sdk.tooling import ToolContext

__all__ = [
    "BACKGROUND",
    "EXCLUDED_TOOLS",
    "SOURCE",
    "Child",
    "depth_of",
    "follow_child",
    "open_child",
]

EXCLUDED_TOOLS = ("clarify", "memory", "send_message", "cronjob")
SOURCE = "delegate"
BACKGROUND = "delegated in the background: "
"""How a background child's session title begins (one left by a process that ended is
listed as lost)."""
POLL_SECONDS = 0.2

_depth: dict[str, int] = {}
"""Session id -> how deep in delegation it is (its parent's + 1), for this process."""


@dataclass
class Child:
    goal: str
    status: str = "failed"
    summary: str = ""
    error: str | None = None
    session_id: str | None = None
    tool_calls: int = 0

    def as_json(self, limit: int) -> dict[str, Any]:
        summary = self.summary
        if len(summary) > limit:
            summary = summary[:limit] + f" […{len(self.summary) - limit:,} more characters]"
        found: dict[str, Any] = {"goal": self.goal, "status": self.status, "summary": summary}
        if self.error:
            found["error"] = self.error
        found["session_id"] = self.session_id
        found["tool_calls"] = self.tool_calls
        return found


def _first_message(task: dict[str, Any]) -> str:
    goal = str(task.get("goal") or "").strip()
    context = str(task.get("context") or "").strip()
    text = goal if not context else f"{goal}\n\nContext:\n{context}"
    return (
        f"{text}\n\n(You are working on a task delegated by another agent: nobody can "
        "answer questions or approve commands. When done, reply with a short summary of what "
        "you did and found.)"
    )


async def _watch(turn: RuntimeTurn, cancel: Any, stale_after: float) -> tuple[TurnEnded, str]:
    """The child's end, and ``""``, ``"interrupted"`` or ``"timed out"`` if it was stopped."""
    last = time.monotonic()
    stopped = ""
    ended: TurnEnded | None = None

    async def events() -> None:
        nonlocal last, ended
        async for event in turn:
            last = time.monotonic()
            if isinstance(event, TurnEnded):
                ended = event

    reading = asyncio.ensure_future(events())
    try:
        while not reading.done():
            await asyncio.wait({reading}, timeout=POLL_SECONDS)
            if reading.done() or stopped:
                continue
            if cancel.is_set():
                stopped = "interrupted"
                turn.stop()
            elif time.monotonic() - last > stale_after:
                stopped = "timed out"
                turn.stop()
    except asyncio.CancelledError:
        turn.stop()  # the parent's turn was stopped: so is this child
        raise
    finally:
        if not reading.done():
            reading.cancel()
    final = ended if ended is not None else await turn.result()
    return final, stopped


async def open_child(
    runtime: Runtime,
    settings: DelegationConfig,
    context: ToolContext,
    task: dict[str, Any],
    depth: int,
    *,
    background: bool = False,
) -> tuple[Child, RuntimeTurn | None]:
    """The child's session opened and its turn started; no turn (and ``error`` said) when
    the session cannot be opened. A background child's title says so (:data:`BACKGROUND`)."""
    child = Child(goal=str(task.get("goal") or ""))
    excluded = list(EXCLUDED_TOOLS)
    if depth >= settings.max_depth:
        excluded += ["delegate_task", "delegate_list", "delegate_steer", "delegate_stop"]
    toolsets = task.get("toolsets")
    try:
        opened = await runtime.open_session(
            SessionOptions(
                source=SOURCE,
                parent_session_id=context.session_id or None,
                user_scope=context.user_scope,
                cwd=context.cwd,
                toolsets=tuple(toolsets) if toolsets else None,
                exclude_tools=tuple(excluded),
                provider=settings.provider,
                model=settings.model,
                max_iterations=settings.max_iterations,
                background_review=False,
                title=f"{BACKGROUND if background else 'delegated: '}"
                f"{' '.join(child.goal.split())[:60]}",
            )
        )
    except ValueError as exc:  # a toolset or model that cannot be used
        child.error = str(exc)
        return child, None
    child.session_id = opened.session_id
    _depth[opened.session_id] = depth
    try:
        return child, runtime.start_turn(opened.session_id, _first_message(task))
    except Exception as exc:  # noqa: BLE001 - any refusal to start is the child's error
        with contextlib.suppress(Exception):
            await runtime.end_session(opened.session_id, "delegated")
        child.error = f"it could not start: {exc}"
        return child, None


async def follow_child(
    runtime: Runtime,
    settings: DelegationConfig,
    child: Child,
    turn: RuntimeTurn,
    cancel: Any,
) -> Child:
    """Wait for the child's turn to end (stopped on ``cancel`` or when it stalls), end its
    session, and fill in how it went."""
    assert child.session_id is not None
    try:
        ended, stopped = await _watch(turn, cancel, settings.stale_after_seconds)
    finally:
        with contextlib.suppress(Exception):
            await asyncio.shield(runtime.end_session(child.session_id, "delegated"))
    child.summary = ended.reply.strip()
    child.tool_calls = ended.tool_calls
    if stopped:
        child.status = stopped
        if stopped == "timed out":
            child.error = f"no progress for {settings.stale_after_seconds:g} s"
    elif ended.ok:
        child.status = "completed"
    else:
        child.error = ended.error or f"it ended {ended.status}"
    return child


def depth_of(session_id: str) -> int:
    """How deep in delegation a session is (0: nobody delegated it), in this process."""
    return _depth.get(session_id, 0)
