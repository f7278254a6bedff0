"""The board tools' names, descriptions and parameters: plain data, so that registering
the tools (every chat that has them) imports nothing else of the plugin."""

from __future__ import annotations

from typing import Any

__all__ = ["TOOL_SCHEMAS"]

TASK_ID = {"type": "string", "description": "The task's id (t_...)."}

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
        {
            "type": "object",
            "properties": {"task_id": TASK_ID, "body": {"type": "string"}},
            "required": ["task_id", "body"],
        },
    ),
    "kanban_complete": (
        "Mark a task done with a summary of what was done (its result).",
        {
            "type": "object",
            "properties": {"task_id": TASK_ID, "summary": {"type": "string"}},
            "required": ["task_id", "summary"],
        },
    ),
    "kanban_block": (
        "Park a task that cannot go on until someone acts, saying why.",
        {
            "type": "object",
            "properties": {"task_id": TASK_ID, "reason": {"type": "string"}},
            "required": ["task_id", "reason"],
        },
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
