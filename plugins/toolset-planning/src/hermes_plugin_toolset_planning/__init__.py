"""Hermes toolsets ``todo`` and ``clarify``: a task list the model keeps for itself, and a
way to ask the user when it cannot decide alone.

A session's list is a small JSON file, ``HERMES_HOME/todo/<session id>.json``: it survives a
restart of Hermes (a gateway conversation goes on where it was), and a process that runs
for months keeps none of them in memory.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text
from hermes_sdk import ToolsetSpec, ToolSpec, hookimpl
from hermes_sdk.tooling import ToolContext

STATUSES = ("pending", "in_progress", "completed", "cancelled")
_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}
_SESSION_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_lock = threading.Lock()


def _file(context: ToolContext) -> Path:
    if not _SESSION_ID.fullmatch(context.session_id) or context.session_id.startswith("."):
        raise ValueError(f"no todo list for session {context.session_id!r}")
    return Path(context.home) / "todo" / f"{context.session_id}.json"


def _load(path: Path) -> tuple[list[dict[str, str]], str]:
    """The saved list, and a note if it could not be read (the file is kept aside)."""
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(items, list) and all(_valid(item) for item in items):
            return items, ""
    except FileNotFoundError:
        return [], ""
    except (OSError, ValueError):
        pass
    aside = path.with_suffix(".damaged")
    os.replace(path, aside)
    return [], f"(the saved list could not be read; it was moved to {aside})\n"


def _valid(item: object) -> bool:
    return (
        isinstance(item, dict)
        and all(isinstance(item.get(key), str) for key in ("id", "content", "status"))
        and item["status"] in STATUSES
    )


def _save(path: Path, items: list[dict[str, str]]) -> None:
    """Whole or not at all, and on disk before the tool says it is saved."""
    atomic_write_text(path, json.dumps(items, ensure_ascii=False))


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
    path = _file(context)
    with _lock:
        current, note = _load(path)
        if todos is None:
            return note + _render(current)
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
        items = list(updated.values())
        _save(path, items)
        return note + _render(items)


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
