"""The board's tables, in the home's state store (state.db, or the shared PostgreSQL a team's
homes all point at), declared once for every engine.

A task's ``status`` is one of :data:`STATUSES`: ``todo`` waits for the tasks it depends on,
``ready`` waits for a worker, ``running`` has one (the lease ``kanban-task:ID`` of
:mod:`hermes_commons.leases` says which process, and whether it still lives), ``blocked``
waits for someone, ``done`` and ``archived`` are over. ``triage``, ``scheduled`` and
``review`` come from hermes-agent's boards: kept as they were, never dispatched.
"""

from __future__ import annotations

from hermes_commons.leases import LEASES
from hermes_sdk.storage import StoreSchema
from hermes_sdk.tables import Column, ColumnType, Index, Table

__all__ = ["SCHEMA", "STATUSES"]

STATUSES = (
    "triage",
    "todo",
    "scheduled",
    "ready",
    "running",
    "blocked",
    "review",
    "done",
    "archived",
)

_TEXT, _REAL, _INT = ColumnType.TEXT, ColumnType.REAL, ColumnType.INTEGER
_STATUS_CHECK = "status IN (" + ", ".join(f"'{s}'" for s in STATUSES) + ")"

SCHEMA = StoreSchema(
    name="kanban",
    uses=(LEASES,),  # a running task's worker holds a lease, taken with the task's row
    declared=(
        (  # version 1
            Table(
                "kanban_boards",
                (
                    Column("slug", _TEXT, primary_key=True),
                    Column("name", _TEXT, required=True),
                    Column("description", _TEXT),
                    Column("created_at", _REAL, required=True),
                    Column("archived", _INT, required=True, default=0),
                ),
            ),
            Table(
                "kanban_tasks",
                (
                    Column("id", _TEXT, primary_key=True),
                    Column("board", _TEXT, required=True),
                    Column("title", _TEXT, required=True),
                    Column("body", _TEXT),
                    Column("status", _TEXT, required=True, check=_STATUS_CHECK),
                    Column("assignee", _TEXT),
                    Column("priority", _INT, required=True, default=0),
                    Column("created_by", _TEXT),
                    Column("created_at", _REAL, required=True),
                    Column("updated_at", _REAL, required=True),
                    Column("started_at", _REAL),
                    Column("completed_at", _REAL),
                    Column("due_at", _REAL),
                    Column("result", _TEXT),
                    Column("block_reason", _TEXT),
                    Column("current_run", _INT),
                    Column("failures", _INT, required=True, default=0),
                    Column("last_profile", _TEXT),
                ),
            ),
            Index("kanban_tasks_by_status", "kanban_tasks", ("board", "status", "priority")),
            Index("kanban_tasks_by_assignee", "kanban_tasks", ("assignee", "status")),
            Table(
                "kanban_links",
                (
                    Column("parent_id", _TEXT, required=True),
                    Column("child_id", _TEXT, required=True),
                ),
                primary_key=("parent_id", "child_id"),
            ),
            Index("kanban_links_by_child", "kanban_links", ("child_id",)),
            Table(
                "kanban_comments",
                (
                    Column("id", ColumnType.ID),
                    Column("task_id", _TEXT, required=True),
                    Column("author", _TEXT, required=True),
                    Column("body", _TEXT, required=True),
                    Column("created_at", _REAL, required=True),
                ),
            ),
            Index("kanban_comments_by_task", "kanban_comments", ("task_id", "id")),
            Table(
                "kanban_attachments",
                (
                    Column("id", ColumnType.ID),
                    Column("task_id", _TEXT, required=True),
                    Column("filename", _TEXT, required=True),
                    Column("path", _TEXT, required=True),
                    Column("size", _INT, required=True, default=0),
                    Column("added_by", _TEXT),
                    Column("created_at", _REAL, required=True),
                ),
            ),
            Index("kanban_attachments_by_task", "kanban_attachments", ("task_id",)),
            Table(
                "kanban_runs",
                (
                    Column("id", ColumnType.ID),
                    Column("task_id", _TEXT, required=True),
                    Column("profile", _TEXT),
                    Column("status", _TEXT, required=True),
                    Column("holder", _TEXT),
                    Column("session_id", _TEXT),
                    Column("started_at", _REAL, required=True),
                    Column("heartbeat_at", _REAL),
                    Column("ended_at", _REAL),
                    Column("outcome", _TEXT),
                    Column("summary", _TEXT),
                    Column("error", _TEXT),
                ),
            ),
            Index("kanban_runs_by_task", "kanban_runs", ("task_id", "id")),
            Table(
                "kanban_events",
                (
                    Column("id", ColumnType.ID),
                    Column("task_id", _TEXT, required=True),
                    Column("run_id", _INT),
                    Column("kind", _TEXT, required=True),
                    Column("payload", _TEXT),
                    Column("created_at", _REAL, required=True),
                ),
            ),
            Index("kanban_events_by_task", "kanban_events", ("task_id", "id")),
            Table(
                "kanban_subscriptions",
                (
                    Column("task_id", _TEXT, required=True),
                    Column("platform", _TEXT, required=True),
                    Column("chat_id", _TEXT, required=True),
                    Column("cursor", _INT, required=True, default=0),
                    Column("created_at", _REAL, required=True),
                ),
                primary_key=("task_id", "platform", "chat_id"),
            ),
        ),
    ),
)
