"""The agent's board tools. In a worker (``HERMES_KANBAN_TASK`` set) the tools that settle a
task settle only the worker's own, and only while its run is the task's."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any, TypeVar

from hermes_plugin_kanban.board import DEFAULT_BOARD, Board, KanbanError
from hermes_plugin_kanban.settings import settings_from
from hermes_plugin_kanban.where import open_board
from hermes_plugin_kanban.worker import RUN_ENV, TASK_ENV
from hermes_sdk.storage import StoreError
from hermes_sdk.tooling import ToolContext

__all__ = ["TOOLS"]

T = TypeVar("T")


def _who(context: ToolContext) -> str:
    return os.environ.get("HERMES_PROFILE") or (
        "agent" if context.user_scope is None else context.user_scope
    )


async def _on_board(context: ToolContext, action: Callable[[Board], T]) -> T | str:
    def run() -> T:
        board, store = open_board(context.home, settings_from(context.section("kanban")))
        try:
            return action(board)
        finally:
            store.close()

    try:
        return await asyncio.to_thread(run)
    except (KanbanError, StoreError, ValueError) as exc:
        return f"error: {exc}"


def _own(task_id: str) -> str | None:
    """Why a worker may not settle ``task_id`` (another task than its own), or None."""
    mine = os.environ.get(TASK_ENV)
    if mine and task_id != mine:
        return f"error: you work on {mine}; settle only that task (comment on others instead)"
    return None


def _run_id() -> int | None:
    value = os.environ.get(RUN_ENV)
    return int(value) if value and value.isdigit() else None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, default=str)


async def kanban_show(task_id: str, context: ToolContext) -> str:
    def read(board: Board) -> str:
        task = board.task(task_id)
        return _json(
            {
                "task": task.as_dict(),
                "waits_for": board.parents(task_id),
                "then": board.children(task_id),
                "comments": [{"author": a, "body": b} for a, b, _ in board.comments(task_id)],
                "attachments": [
                    {"name": n, "path": p} for _, n, p, _ in board.attachments(task_id)
                ],
                "runs": [
                    {
                        "profile": r.profile,
                        "outcome": r.outcome or r.status,
                        "summary": r.summary,
                        "error": r.error,
                    }
                    for r in board.runs(task_id)
                ],
            }
        )

    return str(await _on_board(context, read))


async def kanban_list(
    context: ToolContext,
    status: str | None = None,
    assignee: str | None = None,
    board: str = DEFAULT_BOARD,
    limit: int = 50,
) -> str:
    def read(found: Board) -> str:
        tasks = found.tasks(board, status=status, assignee=assignee, limit=min(max(limit, 1), 200))
        return _json(
            [
                {
                    "id": t.id,
                    "title": t.title,
                    "status": t.status,
                    "assignee": t.assignee,
                    "priority": t.priority,
                }
                for t in tasks
            ]
        )

    return str(await _on_board(context, read))


async def kanban_create(
    title: str,
    context: ToolContext,
    body: str | None = None,
    assignee: str | None = None,
    priority: int = 0,
    parents: list[str] | None = None,
    board: str = DEFAULT_BOARD,
) -> str:
    def make(found: Board) -> str:
        task = found.create(
            title,
            board=board,
            body=body,
            assignee=assignee,
            priority=priority,
            parents=parents or (),
            created_by=_who(context),
        )
        return _json({"ok": True, "task_id": task.id, "status": task.status})

    return str(await _on_board(context, make))


async def kanban_comment(task_id: str, body: str, context: ToolContext) -> str:
    def say(board: Board) -> str:
        board.comment(task_id, _who(context), body)
        return _json({"ok": True, "task_id": task_id})

    return str(await _on_board(context, say))


async def kanban_complete(task_id: str, summary: str, context: ToolContext) -> str:
    refused = _own(task_id)
    if refused:
        return refused

    def done(board: Board) -> str:
        board.complete(task_id, summary, by=_who(context), run_id=_run_id())
        return _json({"ok": True, "task_id": task_id, "status": "done"})

    return str(await _on_board(context, done))


async def kanban_block(task_id: str, reason: str, context: ToolContext) -> str:
    refused = _own(task_id)
    if refused:
        return refused

    def park(board: Board) -> str:
        task = board.block(task_id, reason, _who(context), run_id=_run_id())
        return _json({"ok": True, "task_id": task.id, "status": task.status})

    return str(await _on_board(context, park))


async def kanban_unblock(task_id: str, context: ToolContext) -> str:
    if os.environ.get(TASK_ENV):
        return (
            "error: a worker cannot unblock tasks; comment, and a person or the orchestrator will"
        )

    def free(board: Board) -> str:
        task = board.unblock(task_id, _who(context))
        return _json({"ok": True, "task_id": task.id, "status": task.status})

    return str(await _on_board(context, free))


async def kanban_link(parent_id: str, child_id: str, context: ToolContext) -> str:
    def join(board: Board) -> str:
        board.link(parent_id, child_id)
        return _json({"ok": True, "parent_id": parent_id, "child_id": child_id})

    return str(await _on_board(context, join))


TOOLS: dict[str, Callable[..., Any]] = {
    "kanban_show": kanban_show,
    "kanban_list": kanban_list,
    "kanban_create": kanban_create,
    "kanban_comment": kanban_comment,
    "kanban_complete": kanban_complete,
    "kanban_block": kanban_block,
    "kanban_unblock": kanban_unblock,
    "kanban_link": kanban_link,
}
"""Each board tool's handler, by name (their schemas are in :mod:`tool_schemas`)."""
