"""The board tools' names, descriptions and parameters: plain data, so that registering
the tools (every chat that has them) imports nothing else of the plugin."""

from __future__ import annotations

from typing import Any

__all__ = ["TOOL_SCHEMAS"]

TASK_ID = {"type": "string", "description": "The task's id (t_...)."}


def _task_and_text(field: str) -> dict[str, Any]:
    """Arguments of a task's id and one required text ``field``."""
    return {
        "type": "object",
        "properties": {"task_id": TASK_ID, field: {"type": "string"}},
        "required": ["task_id", field],
    }


TOOL_SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    "kanban_show": (
        "A task of the team's board: its body, what it waits for, comments, attachments and "
        "earlier attempts.",
        {"type": "object", "properties": {"task_id": TASK_ID}, "required": ["task_id"]},
    ),
    "kanban_list": (
        "Tasks of the board by priority: id, title, status, assignee.",
        {
            "type": "object",
            "properties": {
                "status": {
                    "type": "string",
                    "enum": ["triage", "todo", "ready", "running", "blocked", "done", "archived"],
                },
                "assignee": {"type": "string"},
                "board": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 200},
            },
        },
    ),
    "kanban_create": (
        "Add a task to the board for a worker (or the named profile) to do; parents are "
        "tasks it waits for.",
        {
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 1},
                "body": {"type": "string"},
                "assignee": {"type": "string"},
                "priority": {"type": "integer"},
                "parents": {"type": "array", "items": {"type": "string"}},
                "board": {"type": "string"},
            },
            "required": ["title"],
        },
    ),
    "kanban_comment": (
        "Comment on a task (what you found, a question for whoever works on it).",
        _task_and_text("body"),
    ),
    "kanban_complete": (
        "Mark a task done with a summary of what was done (its result).",
        _task_and_text("summary"),
    ),
    "kanban_block": (
        "Park a task that cannot go on until someone acts, saying why.",
        _task_and_text("reason"),
    ),
    "kanban_unblock": (
        "Put a blocked task back in line.",
        {"type": "object", "properties": {"task_id": TASK_ID}, "required": ["task_id"]},
    ),
    "kanban_link": (
        "Make child_id wait until parent_id is done.",
        {
            "type": "object",
            "properties": {"parent_id": TASK_ID, "child_id": TASK_ID},
            "required": ["parent_id", "child_id"],
        },
    ),
}
