"""A worker: one process that works on one task as one profile (``hermes -p NAME kanban work
TASK --run N``, started by the dispatcher).

It takes the task's lease (the shared ownership primitive), renews it four times per
``kanban.lease_seconds`` while its turn runs, and settles the task when the turn ends: the
reply is the summary of a task its tools did not complete or block, a failed turn is a
failure (the task is ready again, or blocked once it failed ``failure_limit`` times). A
worker killed on the way leaves the lease to expire, or to be found dead at once on this
host, and the dispatcher gives the task to another worker. A worker whose lease was taken
from it (a frozen process, reclaimed meanwhile) stops its turn and settles nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from pathlib import Path

from hermes_commons.leases import this_process
from hermes_plugin_kanban.board import Board, KanbanError, Task
from hermes_plugin_kanban.settings import KanbanConfig
from hermes_sdk.runtime import Runtime, SessionOptions

__all__ = ["TASK_ENV", "brief", "work"]

TASK_ENV = "HERMES_KANBAN_TASK"
"""The task a worker process works on: its tools settle only this one."""
RUN_ENV = "HERMES_KANBAN_RUN"
STOP_SECONDS = 30.0
"""How long a worker past ``max_run_seconds`` waits for its turn to stop, then leaves."""
WORKER_EXCLUDED = ("clarify", "send_message", "cronjob")
"""Tools a worker goes without: nobody is there to answer, and it acts for the board, not
for a chat or a schedule."""

log = logging.getLogger("hermes.kanban")


def brief(board: Board, task: Task) -> str:
    """The worker's first message: the task, what it depends on, what was said about it,
    and how to report."""
    lines = [f"Work on task {task.id} of the team's board: {task.title}"]
    if task.body:
        lines += ["", task.body.strip()]
    for parent_id in board.parents(task.id):
        parent = board.task(parent_id)
        if parent.result:
            lines += ["", f"Result of {parent.id} ({parent.title}), which this depends on:"]
            lines.append(parent.result.strip()[:4000])
    comments = board.comments(task.id)[-20:]
    if comments:
        lines += ["", "Comments:"] + [f"- {author}: {body[:2000]}" for author, body, _ in comments]
    attachments = board.attachments(task.id)
    if attachments:
        lines += ["", "Attached files:"] + [f"- {name}: {path}" for _, name, path, _ in attachments]
    earlier = [run for run in board.runs(task.id) if run.ended_at is not None][-5:]
    if earlier:
        lines += ["", "Earlier attempts:"]
        lines += [
            f"- {run.profile or '?'}: {run.outcome}: {(run.error or run.summary or '')[:500]}"
            for run in earlier
        ]
    lines += [
        "",
        "Nobody is there to answer questions. When the work is done, reply with a short "
        "summary of what you did and found: it is recorded as the task's result. If you "
        "cannot go on (missing access, a decision only a person can make), call "
        f"kanban_block with task_id {task.id} and say why. Tasks for later or for others: "
        "kanban_create.",
    ]
    return "\n".join(lines)


async def work(
    open_runtime: Callable[[], AbstractAsyncContextManager[Runtime]],
    board: Board,
    settings: KanbanConfig,
    task_id: str,
    run_id: int,
    workspace: Path,
    toolsets: tuple[str, ...],
) -> str:
    """Work on the task in ``workspace`` (its folder of its own) and say what became of it
    (``done``, ``ready``, ``blocked`` ...)."""
    holder = this_process()
    store = board.store
    task = await store.run(board.task, task_id)
    workspace.mkdir(parents=True, exist_ok=True)
    async with open_runtime() as runtime:
        session = await runtime.open_session(
            SessionOptions(
                source="kanban",
                title=f"kanban {task.id}: {task.title[:60]}",
                cwd=str(workspace),
                toolsets=toolsets,
                exclude_tools=WORKER_EXCLUDED,
                background_review=False,
            )
        )
        ttl = settings.lease_seconds
        await store.run(board.take, task_id, run_id, holder, ttl, session.session_id)
        turn = runtime.start_turn(session.session_id, await asyncio.to_thread(brief, board, task))
        lost = asyncio.Event()

        async def beat() -> None:
            while True:
                await asyncio.sleep(ttl / 4)
                try:
                    held = await store.run(board.heartbeat, task_id, run_id, holder, ttl)
                except Exception as exc:  # noqa: BLE001 - a store that does not answer: try again
                    log.warning("kanban: heartbeat of %s failed: %s", task_id, exc)
                    continue
                if not held:  # taken back or settled: the work is no longer wanted here
                    lost.set()
                    turn.stop()
                    return

        beating = asyncio.ensure_future(beat())
        try:
            try:
                ended = await asyncio.wait_for(
                    asyncio.shield(turn.result()), settings.max_run_seconds
                )
            except TimeoutError:
                turn.stop()  # stops within about a second; a turn that does not is left
                stopped = await asyncio.wait_for(asyncio.shield(turn.result()), STOP_SECONDS)
                ended = replace(
                    stopped,
                    status="error",
                    error="still at it after kanban.max_run_seconds "
                    f"({settings.max_run_seconds:g} s)",
                )
        finally:
            beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beating
            with contextlib.suppress(Exception):
                await runtime.end_session(session.session_id, "kanban")
    if lost.is_set():  # taken back, or settled meanwhile: nothing more to settle
        task = await store.run(board.task, task_id)
        return f"no longer this worker's: {task.status}"
    try:
        return await store.run(
            board.finish,
            task_id,
            run_id,
            holder,
            ok=ended.ok and bool(ended.reply.strip()),
            summary=ended.reply.strip(),
            error=ended.error or (None if ended.ok else f"the turn ended {ended.status}"),
            failure_limit=settings.failure_limit,
        )
    except KanbanError as exc:
        return str(exc)
