"""Context engines: what a long session's compacted view says about its older messages.

The kernel decides *when* to compact (past ``compression.threshold`` of the model's window,
on a context-overflow error, on ``/compact``) and *where*: it splits the conversation into a
``head`` that a summary replaces and a ``tail`` kept word for word, never between a tool call
and its result and never inside a round that is still running. It also keeps, beside the
summary, a ledger of every side-effecting tool call with the head of its output, so that no
engine can make the model forget what it already did. The engine decides *what* the summary
says: ``ContextEngineSpec.factory(context)`` gets a :class:`ContextEngineContext` and
returns a :class:`ContextEngine`, whose ``compact`` turns a :class:`CompactionRequest` into
a :class:`Compaction`.

Nothing is lost either way: the full transcript stays in state.db (searchable, exported
whole); only the view sent to the model is compacted. An engine that raises, or returns an
empty summary, is replaced for that compaction by :func:`plain_summary`, which needs no
model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from hermes_sdk.models import ChatMessage
from hermes_sdk.tool_calls import lenient_arguments

__all__ = [
    "Compaction",
    "CompactionRequest",
    "ContextEngine",
    "ContextEngineContext",
    "Summarizer",
    "SummaryUnavailable",
    "WindowReporter",
    "plain_summary",
    "transcript_text",
]

Summarizer = Callable[[str, str, int], Awaitable[str]]
"""``await summarize(instructions, text, max_tokens)``: one completion by the auxiliary model
(``auxiliary:`` in config, else the session's own). The kernel retries a failed call once;
then, and while failures cool down (60 s, 300 s, 900 s), it raises
:class:`SummaryUnavailable`."""


class SummaryUnavailable(Exception):
    """No model summary can be had now; the message says why, in one line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextEngineContext:
    """What a context engine's factory gets."""

    home: str
    config: Mapping[str, Any] = field(default_factory=dict)
    """The ``compression:`` section of config.yaml, as written."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionRequest:
    """One compaction to write a summary for."""

    session_id: str
    reason: str
    """``threshold``, ``overflow``, ``manual`` (``/compact``) or ``gateway`` (its safety net)."""
    head: Sequence[ChatMessage]
    """The messages the summary replaces, oldest first, without the system prompt and
    without an earlier summary (that is ``previous_summary``)."""
    tail: Sequence[ChatMessage]
    """What stays after the summary, word for word (for context: do not repeat it)."""
    previous_summary: str | None
    """The summary an earlier compaction wrote, which this one replaces too."""
    focus: str | None
    """What the user asked the summary to keep (``/compact FOCUS``): give it most of the
    budget."""
    summary_tokens: int
    """The summary's budget in tokens; a longer one may not shrink the context enough and
    is then not used."""
    input_tokens: int
    """The most a summary request should send (the model's window, less room to answer)."""
    read_only_tools: frozenset[str]
    """Tools without side effects; every other tool call may have changed the world."""
    summarize: Summarizer
    count_tokens: Callable[[str], int]
    """The kernel's token estimate for a text."""


@dataclass(frozen=True, slots=True)
class Compaction:
    summary: str
    by_model: bool = True
    """False when the summary was written without a model (:func:`plain_summary`)."""
    notice: str | None = None
    """One line for the user (why the model's summary could not be had, for example)."""


@runtime_checkable
class ContextEngine(Protocol):
    async def compact(self, request: CompactionRequest) -> Compaction: ...


@runtime_checkable
class WindowReporter(Protocol):
    """A model provider that knows its model's context window may say so; the kernel asks
    when config.yaml does not (``model.context_length``, ``providers.NAME.context_length``)."""

    async def context_window(self, model: str) -> int | None: ...


# --- writing a summary without a model -------------------------------------------------------

_PATH_KEYS = ("path", "file", "file_path", "filename", "target", "source", "destination", "cwd")
# An open item of a task list: "[ ] x" or "[>] x" (the todo tool), "- [ ] x", "TODO: x".
_TASK_LINE = re.compile(r"^\s*(?:[-*]\s*)?(?:\[[ >]\]|TODO\b)", re.IGNORECASE)


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _touched(arguments: Mapping[str, Any]) -> list[str]:
    return [
        value
        for key in _PATH_KEYS
        if isinstance(value := arguments.get(key), str) and value and len(value) < 300
    ]


def _call_label(name: str, arguments: Mapping[str, Any], width: int) -> str:
    shown = arguments.get("command") if isinstance(arguments.get("command"), str) else None
    text = shown if shown is not None else json.dumps(arguments, ensure_ascii=False)
    return f"{name}({_one_line(str(text), width)})"


class _Budget:
    """Lines up to a number of characters; what does not fit is counted, not dropped
    silently."""

    def __init__(self, chars: int) -> None:
        self.left = chars
        self.lines: list[str] = []
        self.left_out = 0

    def add(self, line: str, cut: bool = False) -> bool:
        """Add ``line`` if it fits; with ``cut``, as much of it as fits (at least 40
        characters), so that a part's newest item shows even when it is long."""
        if len(line) + 1 > self.left and cut and self.left > 41:
            line = line[: self.left - 2] + "…"
        if len(line) + 1 > self.left:
            self.left_out += 1
            return False
        self.lines.append(line)
        self.left -= len(line) + 1
        return True


def plain_summary(
    head: Sequence[ChatMessage],
    *,
    previous_summary: str | None = None,
    read_only_tools: frozenset[str] = frozenset(),
    budget_chars: int = 6000,
    focus: str | None = None,
) -> str:
    """A summary written without a model, in one pass: the user's requests, the decisions
    (the assistant's replies), the files touched, open tasks, and each tool call with the
    head of its output. Newest first within each part when the budget runs short, since
    the latest state matters most; what was left out is counted."""
    requests: list[str] = []
    decisions: list[str] = []
    files: dict[str, None] = {}
    tasks: list[str] = []  # from the latest message holding a task list: the current state
    calls: list[str] = []
    pending: dict[str, tuple[str, bool]] = {}
    for message in head:
        open_items = [
            _one_line(line, 200) for line in message.content.splitlines() if _TASK_LINE.match(line)
        ]
        if open_items or "[x]" in message.content:
            tasks = open_items
        if message.role == "user" and message.content.strip():
            requests.append(_one_line(message.content, 300))
        elif message.role == "assistant":
            if message.content.strip() and not message.tool_calls:
                decisions.append(_one_line(message.content, 300))
            for call in message.tool_calls:
                arguments = lenient_arguments(call.arguments)
                files.update(dict.fromkeys(_touched(arguments)))
                label = _call_label(call.name, arguments, 160)
                pending[call.id] = (label, call.name not in read_only_tools)
        elif message.role == "tool":
            label, changes = pending.pop(message.tool_call_id or "", (message.name or "?", True))
            output = _one_line(message.content, 240) or "(no output)"
            calls.append(f"{label}{' [changed things]' if changes else ''} -> {output}")
    parts: list[tuple[str, list[str]]] = [
        ("The user asked", requests),
        ("Replies and decisions", decisions),
        ("Files touched", list(files)),
        ("Open tasks", tasks),
        ("Tool calls and the head of their output", calls),
    ]
    budget = _Budget(budget_chars)
    budget.add("(Written without a model: the earlier conversation, condensed mechanically.)")
    if focus:
        budget.add(f"Focus asked for: {_one_line(focus, 300)}")
    if previous_summary:
        budget.add("Summary of what came before:")
        budget.add(_one_line(previous_summary, max(200, budget_chars // 4)))
    filled = [(title, lines) for title, lines in parts if lines]
    for position, (title, lines) in enumerate(filled):
        budget.add(f"{title}:")
        # What an earlier part left unused goes to the later ones.
        part = _Budget(max(120, budget.left // (len(filled) - position) - 1))
        for line in reversed(lines):  # newest first
            part.add(f"- {line}", cut=not part.lines)
        for line in reversed(part.lines):  # shown in order
            budget.add(line)
        if part.left_out:
            budget.add(f"- ({part.left_out} earlier left out)")
    if budget.left_out:
        budget.lines.append(f"({budget.left_out} more lines left out)")
    return "\n".join(budget.lines)


def transcript_text(
    head: Sequence[ChatMessage], budget_chars: int, output_chars: int = 1500
) -> str:
    """The head as plain text for a summarizing model: every user and assistant message,
    each tool result cut to its first ``output_chars``. Past ``budget_chars`` the middle
    goes (the start says what the session is about, the end what is happening now), with a
    line saying how much."""
    lines: list[str] = []
    for message in head:
        if message.role == "tool":
            content = message.content
            if len(content) > output_chars:
                content = content[:output_chars] + f" […{len(content) - output_chars} chars cut]"
            lines.append(f"[tool result: {message.name or '?'}]\n{content}")
            continue
        text = message.content
        for call in message.tool_calls:
            text += f"\n[calls {call.name}({_one_line(call.arguments, 600)})]"
        lines.append(f"[{message.role}]\n{text.strip()}")
    total = sum(len(line) + 2 for line in lines)
    if total <= budget_chars:
        return "\n\n".join(lines)
    keep_start, keep_end = budget_chars // 4, budget_chars - budget_chars // 4
    start: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) > keep_start:
            break
        start.append(line)
        used += len(line) + 2
    end: list[str] = []
    used = 0
    for line in reversed(lines[len(start) :]):
        if used + len(line) > keep_end:
            break
        end.append(line)
        used += len(line) + 2
    cut = len(lines) - len(start) - len(end)
    middle = [f"[… {cut} messages from the middle left out of this summary request …]"]
    return "\n\n".join([*start, *middle, *reversed(end)])
