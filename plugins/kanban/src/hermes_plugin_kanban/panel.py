"""The Board page of the dashboard: the board's tasks by status (a section per column, the
way a kanban board reads), each with its history folded under it and buttons for what can
be done to it now, and a form to add one."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from typing import Any

from hermes_commons.text import one_line
from hermes_plugin_kanban.board import DEFAULT_BOARD, Board, KanbanError, Task
from hermes_plugin_kanban.settings import KanbanConfig, settings_from
from hermes_plugin_kanban.where import open_board
from hermes_sdk.dashboard import (
    Button,
    Field,
    Form,
    Outcome,
    PanelContext,
    PanelError,
    PanelView,
    Row,
    Section,
    Table,
    Text,
)

__all__ = ["BoardPanel"]

COLUMNS = ("ready", "running", "blocked", "todo", "triage", "review", "scheduled", "done")
SHOWN_DONE = 20
"""The done column shows the latest this many."""
PER_COLUMN = 200
"""The most tasks a column shows (by priority, then age)."""


def _age(at: float | None) -> str:
    if at is None:
        return "-"
    seconds = max(0, time.time() - at)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"


class BoardPanel:
    def __init__(self, context: PanelContext) -> None:
        self.context = context
        self._board: Board | None = None
        self._lock = threading.Lock()
        """One view or action at a time on the page's own connection (opened once: opening
        a store costs more than reading a board)."""

    def _settings(self) -> KanbanConfig:
        try:
            return settings_from(self.context.config.get("kanban"))
        except ValueError as exc:
            raise PanelError(f"config.yaml: {exc}") from None

    def _on_board(self, work: Any) -> Any:
        with self._lock:
            if self._board is None:
                self._board = open_board(self.context.home, self._settings())[0]
            return work(self._board)

    async def view(self, query: Mapping[str, str]) -> PanelView:
        name = query.get("board") or DEFAULT_BOARD
        tasks, history = await asyncio.to_thread(self._on_board, lambda b: self._read(b, name))
        add = Section(
            title="Add a task",
            blocks=(
                Form(
                    action="create",
                    submit="Add",
                    fields=(
                        Field(name="title", label="Title", required=True),
                        Field(name="body", label="What to do", kind="textarea"),
                        Field(name="assignee", label="Profile (empty: any worker)"),
                        Field(name="priority", label="Priority", kind="number", value="0"),
                        Field(name="board", label="", kind="hidden", value=name),
                    ),
                ),
            ),
        )
        sections: list[Section] = []
        for status in COLUMNS:
            found = [task for task in tasks if task.status == status]
            if not found and status not in ("ready", "running", "blocked", "done"):
                continue
            sections.append(
                Section(
                    title=f"{name}: {status} ({len(found)})",
                    blocks=(
                        Table(
                            columns=("task", "title", "who", "priority", "since"),
                            rows=tuple(
                                self._row(task, history.get(task.id, ""), name) for task in found
                            ),
                            empty=f"nothing {status}",
                        ),
                    ),
                )
            )
        if not tasks:
            sections.append(
                Section(
                    title="",
                    blocks=(
                        Text(text="no tasks yet: add one above, or hermes kanban create TITLE"),
                    ),
                )
            )
        return PanelView(sections=(*sections, add))

    @staticmethod
    def _read(board: Board, name: str) -> tuple[list[Task], dict[str, str]]:
        tasks = [
            task
            for status in COLUMNS
            if status != "done"
            for task in board.tasks(name, status=status, limit=PER_COLUMN)
        ]
        tasks += board.recently_done(name, SHOWN_DONE)
        ids = [task.id for task in tasks]
        runs, comments = board.runs_of(ids), board.comments_of(ids)  # two queries, not 2n
        history = {}
        for task in tasks:
            lines = [task.body.strip()] if task.body else []
            if task.block_reason:
                lines.append(f"blocked: {task.block_reason}")
            if task.result:
                lines.append(f"result: {task.result}")
            for run in runs[task.id]:
                said = one_line(run.error or run.summary or "", 100)
                lines.append(
                    f"run {run.id}: {run.profile or '?'} {run.outcome or run.status} {said}"
                )
            for author, body, _ in comments[task.id][-5:]:
                lines.append(f"{author}: {one_line(body, 160)}")
            history[task.id] = "\n".join(lines)
        return tasks, history

    @staticmethod
    def _row(task: Task, detail: str, board: str) -> Row:
        values = {"id": task.id, "board": board}
        buttons = []
        if task.status in ("ready", "todo", "triage", "review", "scheduled"):
            buttons.append(Button(action="block", label="Block", values=values))
        if task.status in ("blocked", "triage", "scheduled"):
            buttons.append(Button(action="unblock", label="Unblock", values=values))
        if task.status == "running":
            buttons.append(
                Button(
                    action="reclaim",
                    label="Take back",
                    values=values,
                    confirm="Take the task back from its worker? It goes to another.",
                    danger=True,
                )
            )
        if task.status not in ("done", "running"):
            buttons.append(Button(action="complete", label="Done", values=values))
        if task.status != "running":
            buttons.append(Button(action="archive", label="Archive", values=values, danger=True))
        level = {"blocked": "warn", "done": "ok"}.get(task.status)
        since = task.completed_at if task.status == "done" else task.updated_at
        return Row(
            cells=(
                task.id,
                task.title,
                task.assignee or task.last_profile or "(anyone)",
                str(task.priority),
                _age(since),
            ),
            buttons=tuple(buttons),
            detail=detail,
            level=level,  # type: ignore[arg-type]
        )

    async def act(self, action: str, values: Mapping[str, str]) -> Outcome:
        task_id = values.get("id", "")

        def do(board: Board) -> str:
            if action == "create":
                try:
                    priority = int(values.get("priority") or 0)
                except ValueError:
                    raise PanelError("priority: a whole number") from None
                task = board.create(
                    values.get("title", ""),
                    board=values.get("board") or DEFAULT_BOARD,
                    body=values.get("body") or None,
                    assignee=(values.get("assignee") or "").strip() or None,
                    priority=priority,
                    created_by="dashboard",
                )
                return f"added {task.id} ({task.status})"
            if action == "block":
                board.block(task_id, "blocked from the dashboard", "dashboard")
                return f"{task_id} is blocked"
            if action == "unblock":
                return f"{task_id} is {board.unblock(task_id, 'dashboard').status}"
            if action == "complete":
                board.complete(task_id, None, by="dashboard")
                return f"{task_id} is done"
            if action == "archive":
                board.archive(task_id)
                return f"{task_id} is archived"
            if action == "reclaim":
                board.reclaim(task_id, "taken back from the dashboard")
                return f"{task_id} is ready again"
            raise PanelError(f"no action {action!r} on this page: reload it")

        try:
            line = await asyncio.to_thread(self._on_board, do)
        except KanbanError as exc:
            raise PanelError(str(exc)) from None
        board = values.get("board")
        return Outcome(message=line, query={"board": board} if board else None)
