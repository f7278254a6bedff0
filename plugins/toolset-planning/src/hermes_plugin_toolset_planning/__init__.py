"""Hermes toolsets ``todo`` and ``clarify``: a task list the model keeps for itself, and a
way to ask the user when it cannot decide alone."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

from hermes_sdk import ToolsetSpec, ToolSpec, hookimpl
from hermes_sdk.tooling import ToolContext

STATUSES = ("pending", "in_progress", "completed", "cancelled")
_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}
_lists: dict[str, list[dict[str, str]]] = {}
_lock = threading.Lock()


def _render(items: list[dict[str, str]]) -> str:
    if not items:
        return "the todo list is empty"
    done = sum(item["status"] == "completed" for item in items)
    lines = [f"{done}/{len(items)} done"]
    lines += [f"{_MARKS[item['status']]} {item['id']}. {item['content']}" for item in items]
    return "\n".join(lines)


def todo(context: ToolContext, todos: Sequence[Any] | None = None, merge: bool = False) -> str:
    """Without ``todos``: the list. With it: replace the list, or with ``merge`` update
    items by id and add new ones."""
    with _lock:
        current = _lists.setdefault(context.session_id, [])
        if todos is None:
            return _render(current)
        updated = {item["id"]: dict(item) for item in current} if merge else {}
        for number, raw in enumerate(todos, 1):
            if not isinstance(raw, dict):
                raise ValueError("each todo is an object: {id, content, status}")
            item_id = str(raw.get("id") or (len(updated) + 1 if merge else number))
            previous = updated.get(item_id, {})
            status = str(raw.get("status") or previous.get("status") or "pending")
            if status not in STATUSES:
                raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
            content = str(raw.get("content") or previous.get("content") or "").strip()
            if not content:
                raise ValueError(f"todo {item_id} has no content")
            updated[item_id] = {"id": item_id, "content": content, "status": status}
        _lists[context.session_id] = list(updated.values())
        return _render(_lists[context.session_id])


def clarify(question: str, context: ToolContext, choices: Sequence[str] | None = None) -> str:
    answer = context.ask_user(question, list(choices or []))
    if answer is None:
        return (
            "nobody can answer here (no interactive user, or no answer in time): make the "
            "most reasonable assumption, say which one, and go on"
        )
    return f"the user answered: {answer}"


@hookimpl
def hermes_toolsets() -> Iterator[ToolsetSpec]:
    yield ToolsetSpec(name="todo", description="a task list for multi-step work")
    yield ToolsetSpec(name="clarify", description="ask the user a question")


@hookimpl
def hermes_tools() -> Iterator[ToolSpec]:
    yield ToolSpec(
        name="todo",
        toolset="todo",
        takes_context=True,
        description="Keep a task list for work of three steps or more. Call with no "
        "arguments to read it; pass todos to replace it (or merge=true to update by id).",
        parameters={
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "content": {"type": "string"},
                            "status": {"type": "string", "enum": list(STATUSES)},
                        },
                    },
                },
                "merge": {"type": "boolean"},
            },
        },
        handler=todo,
    )
    yield ToolSpec(
        name="clarify",
        toolset="clarify",
        takes_context=True,
        description="Ask the user a question when a choice is theirs to make (give choices "
        "when there are a few); returns their answer.",
        parameters={
            "type": "object",
            "properties": {
                "question": {"type": "string"},
                "choices": {"type": "array", "items": {"type": "string"}, "maxItems": 6},
            },
            "required": ["question"],
        },
        handler=clarify,
    )
