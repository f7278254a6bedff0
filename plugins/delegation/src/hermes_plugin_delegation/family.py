"""Background children: started by ``delegate_task``, listed, steered and stopped by their
parent, and reported to it when a batch is done.

A batch's children run while the parent's conversation goes on. Each has a handle (``d1``,
``d2`` ... per parent session) by which ``delegate_list``, ``delegate_steer``,
``delegate_stop`` and ``/agents`` reach it, only from its parent's session. When every child
of a batch has ended, one report (their statuses and summaries) goes to the parent's
front-end through ``ToolContext.tell_later``: it is sent as the session's next message, so
the parent hears it at once if idle, else after its running turn. A child that fails or dies
is in the report with why; a child left running by a process that ended is listed as lost
(its session was never ended).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from hermes_plugin_delegation.children import BACKGROUND, Child, follow_child, open_child
from hermes_plugin_delegation.settings import DelegationConfig
from hermes_sdk.runtime import REPORT_PREFIX, Runtime, RuntimeTurn
from hermes_sdk.tooling import ToolContext

__all__ = ["Running", "family_of", "start_batch", "steer", "stop"]

log = logging.getLogger("hermes.delegation")


@dataclass
class Running:
    """A background child, from its start until its parent's process ends."""

    handle: str
    child: Child
    started_at: float = field(default_factory=time.time)
    turn: RuntimeTurn | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    ended_at: float | None = None
    steered: int = 0

    @property
    def state(self) -> str:
        if self.ended_at is None:
            return "waiting" if self.turn is None else "running"
        return self.child.status

    def line(self, limit: int = 160) -> str:
        goal = " ".join(self.child.goal.split())
        goal = goal if len(goal) <= 60 else goal[:59] + "…"
        took = (self.ended_at or time.time()) - self.started_at
        said = f"{self.handle} [{self.state}, {took:.0f} s] {goal}"
        if self.ended_at is not None:
            summary = " ".join((self.child.error or self.child.summary).split())
            if summary:
                said += f": {summary[:limit]}{'…' if len(summary) > limit else ''}"
        return said


_families: dict[str, dict[str, Running]] = {}
"""Parent session id -> its background children by handle, for this process."""
_numbers: dict[str, itertools.count[int]] = {}
_tasks: set[asyncio.Task[None]] = set()


def family_of(parent_id: str) -> dict[str, Running]:
    """The parent's background children started in this process, by handle."""
    return _families.get(parent_id, {})


KEPT_SECONDS = 3600.0
"""How long an ended child stays listed (its report was sent when its batch ended)."""
KEPT_ENDED = 50
"""The most ended children listed per conversation."""


def _forget_old(family: dict[str, Running]) -> None:
    """Drop children that ended long ago, and the oldest ended beyond :data:`KEPT_ENDED`,
    so a conversation that delegates all day does not hold every summary forever."""
    now = time.time()
    ended = [r for r in family.values() if r.ended_at is not None]
    old = {r.handle for r in ended if now - (r.ended_at or now) > KEPT_SECONDS}
    old |= {r.handle for r in ended[: max(0, len(ended) - KEPT_ENDED)]}
    for handle in old:
        del family[handle]


def _handle(parent_id: str) -> str:
    return f"d{next(_numbers.setdefault(parent_id, itertools.count(1)))}"


async def start_batch(
    runtime: Runtime,
    settings: DelegationConfig,
    context: ToolContext,
    tasks: list[dict[str, Any]],
    depth: int,
) -> str:
    """Start ``tasks`` in the background and return their handles, as JSON, at once."""
    family = _families.setdefault(context.session_id, {})
    _forget_old(family)
    batch = [Running(_handle(context.session_id), Child(goal=str(t.get("goal")))) for t in tasks]
    for running in batch:
        family[running.handle] = running
    slots = asyncio.Semaphore(settings.max_concurrent_children)
    work = asyncio.ensure_future(
        _run_batch(runtime, settings, context, list(zip(batch, tasks, strict=True)), slots, depth)
    )
    _tasks.add(work)
    work.add_done_callback(_tasks.discard)
    await asyncio.sleep(0)  # let the children open their sessions before the parent goes on
    said = {
        "background": True,
        "children": [{"handle": r.handle, "goal": r.child.goal} for r in batch],
        "note": (
            "They work in the background; a report of how each ended arrives as a message "
            "when all are done. Go on with the conversation meanwhile. delegate_list shows "
            "them, delegate_steer tells one something, delegate_stop stops one."
        ),
    }
    return json.dumps(said, ensure_ascii=False, indent=1)


async def _run_batch(
    runtime: Runtime,
    settings: DelegationConfig,
    context: ToolContext,
    batch: list[tuple[Running, dict[str, Any]]],
    slots: asyncio.Semaphore,
    depth: int,
) -> None:
    await asyncio.gather(
        *(_run_one(runtime, settings, context, r, task, slots, depth) for r, task in batch)
    )
    report = batch_report([running for running, _ in batch], settings.max_summary_chars)
    try:
        context.tell_later(report)
    except Exception:  # noqa: BLE001 - the front-end is gone: the report stays in delegate_list
        log.warning("delegation: the report of %d children could not be told", len(batch))


async def _run_one(
    runtime: Runtime,
    settings: DelegationConfig,
    context: ToolContext,
    running: Running,
    task: dict[str, Any],
    slots: asyncio.Semaphore,
    depth: int,
) -> None:
    try:
        async with slots:
            if running.cancel.is_set():  # stopped while it waited for a slot
                running.child.status = "stopped"
                return
            child, turn = await open_child(runtime, settings, context, task, depth, background=True)
            running.child, running.turn = child, turn
            if turn is not None:
                await follow_child(runtime, settings, child, turn, running.cancel)
                if running.cancel.is_set():  # stopped by its parent, however it ended
                    child.status, child.error = "stopped", None
    except Exception as exc:  # the child died with this process's bug: said, never lost
        log.exception("delegation: background child %s failed", running.handle)
        running.child.status = "failed"
        running.child.error = f"it died: {type(exc).__name__}: {exc}"
    finally:
        running.ended_at = time.time()


def batch_report(batch: list[Running], limit: int) -> str:
    """The message the parent gets when a batch is done."""
    done = sum(1 for running in batch if running.child.status == "completed")
    lines = [
        f"{REPORT_PREFIX}Background subagents finished ({done} of {len(batch)} completed). "
        "Tell the user briefly what they found or did, and go on if there is more to do."
    ]
    for running in batch:
        child = running.child
        lines.append(f"\n{running.handle} ({child.status}): {child.goal}")
        if child.error:
            lines.append(f"error: {child.error}")
        summary = child.summary
        if len(summary) > limit:
            summary = summary[:limit] + f" […{len(child.summary) - limit:,} more characters]"
        if summary:
            lines.append(summary)
    return "\n".join(lines)


def steer(parent_id: str, handle: str, note: str) -> str:
    running = family_of(parent_id).get(handle)
    if running is None:
        return (
            f"error: no background subagent {handle!r} of this conversation ({_known(parent_id)})"
        )
    if running.ended_at is not None:
        return f"error: {handle} has ended ({running.child.status}); start another task instead"
    if running.turn is None or not running.turn.steer(note):
        return f"error: {handle} is not running yet; try again in a moment"
    running.steered += 1
    return f"{handle} will read it before its next step"


def stop(parent_id: str, handle: str) -> str:
    running = family_of(parent_id).get(handle)
    if running is None:
        return (
            f"error: no background subagent {handle!r} of this conversation ({_known(parent_id)})"
        )
    if running.ended_at is not None:
        return f"{handle} had already ended ({running.child.status})"
    running.cancel.set()
    if running.turn is not None:
        running.turn.stop()
    return f"{handle} is stopping; its report says what it did"


def _known(parent_id: str) -> str:
    handles = ", ".join(family_of(parent_id))
    return f"its subagents: {handles}" if handles else "it has none"


async def listing(runtime: Runtime | None, parent_id: str) -> list[str]:
    """One line per background child of the parent: those of this process, then any left
    running by a process that ended (lost: their sessions were never ended)."""
    family = family_of(parent_id)
    lines = [running.line() for running in family.values()]
    if runtime is None:
        return lines
    ours = {r.child.session_id for r in family.values() if r.child.session_id}
    try:
        children = await runtime.children(parent_id)
    except Exception:  # noqa: BLE001 - no history here: what this process knows is all there is
        return lines
    for child in children:
        title = child.title or ""
        if child.source != "delegate" or child.session_id in ours or child.ended_at is not None:
            continue
        if not title.startswith(BACKGROUND):  # a foreground child: its parent's turn waits
            continue
        title = title.removeprefix(BACKGROUND)
        lines.append(f"{child.session_id} [lost: the process that ran it ended] {title}")
    return lines
