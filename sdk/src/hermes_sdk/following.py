"""Following a turn: one fold of a :class:`~hermes_sdk.runtime.RuntimeTurn`'s events into what
a front-end shows, so each front-end only says how to show each thing.

    ended = await follow_turn(turn, TurnWatcher(on_text=print_text, on_question=ask))

A reply the model was cut off in is asked for again: the text streamed so far is void. A
front-end that can take it back (a terminal, an edited message) passes ``on_restart``; one
that cannot (an HTTP stream, an editor's session) gets :data:`CUT_OFF` as text instead.
A question nobody handles is declined (unanswered means no). Every callback may be a plain
function or a coroutine function.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hermes_sdk.runtime import (
    InterimReply,
    Notice,
    Question,
    RuntimeTurn,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnEnded,
    TurnEvent,
)

__all__ = ["CUT_OFF", "TurnWatcher", "follow_turn", "tool_event_json", "trouble"]

CUT_OFF = "\n\n[the model's reply was cut off; it starts again]\n\n"
"""What a front-end that cannot take streamed text back shows when the reply starts again."""

_T = TypeVar("_T")
Callback = Callable[[_T], Awaitable[None] | None]


@dataclass
class TurnWatcher:
    """What a front-end does with each kind of event; each is optional."""

    on_text: Callback[str] | None = None
    on_restart: Callable[[], Awaitable[None] | None] | None = None
    """The text streamed so far is void: a reply cut off is asked for again. Unset: the
    front-end is given :data:`CUT_OFF` as text."""
    on_notice: Callback[str] | None = None
    on_chat_notice: Callback[str] | None = None
    """A notice the user must hear wherever they are (``Notice.chat``): a front-end that
    shows no notices (a chat app) sends these. Given beside ``on_notice``."""
    on_interim: Callback[str] | None = None
    """A whole reply the turn goes on from (:class:`~hermes_sdk.runtime.InterimReply`).
    Unset: ``on_text`` gets a blank line instead, so the replies stay apart."""
    on_tool_started: Callback[ToolStarted] | None = None
    on_tool_progress: Callback[ToolProgress] | None = None
    on_tool_finished: Callback[ToolFinished] | None = None
    on_question: Callback[Question] | None = None
    """Unset: every question is declined (nobody here can answer)."""
    on_end: Callback[TurnEnded] | None = None
    tool_calls: list[ToolFinished] = field(default_factory=list)
    """The turn's finished tool calls, in order (filled as they come)."""


async def follow_turn(
    turn: RuntimeTurn, watcher: TurnWatcher, *, stop_if_left: bool = False
) -> TurnEnded:
    """Hand each of ``turn``'s events to ``watcher`` until it ends; returns how it ended.
    ``stop_if_left``: if following ends early (the caller was cancelled, a callback raised:
    the client went away), the turn is stopped rather than left running for nobody."""
    try:
        async for event in turn:
            await _hand(event, watcher)
            if isinstance(event, TurnEnded):
                return event
    finally:
        if stop_if_left and not turn.done:
            turn.stop()
    ended = await turn.result()
    await _call(watcher.on_end, ended)
    return ended


def trouble(ended: TurnEnded) -> str | None:
    """One line for a turn that did not end as asked (an error, a budget, a lost model),
    None for one that did or that the user stopped."""
    if ended.status in {"done", "stopped", "interrupted"}:
        return None
    return f"⚠️ {ended.error or ended.status}"


def tool_event_json(
    event: ToolStarted | ToolProgress | ToolFinished,
    *,
    argument_chars: int | None = None,
    content_chars: int | None = None,
) -> dict[str, Any]:
    """A tool event as JSON for a client (a page's script, an API's caller): its type, call
    id, tool and parent call. ``argument_chars`` cuts long string arguments; a finished
    call's result is included only with ``content_chars``, cut there."""
    if isinstance(event, ToolProgress):
        return {"type": "tool_progress", "call_id": event.call_id, "text": event.text}
    shown: dict[str, Any] = {
        "type": "tool_started" if isinstance(event, ToolStarted) else "tool_finished",
        "call_id": event.call_id,
        "tool": event.tool,
        "parent": event.parent_call_id,
    }
    if isinstance(event, ToolStarted):
        shown["arguments"] = {
            name: _cut(value, argument_chars) if isinstance(value, str) else value
            for name, value in dict(event.arguments).items()
        }
        return shown
    shown.update(ok=event.ok, duration_s=round(event.duration_s, 3))
    if content_chars is not None:
        shown["content"] = _cut(event.content, content_chars)
    return shown


def _cut(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n… {len(text) - limit:,} more characters not shown"


async def _hand(event: TurnEvent, watcher: TurnWatcher) -> None:
    if isinstance(event, TextDelta):
        if event.restarted and watcher.on_restart is not None:
            await _call(watcher.on_restart)
        elif event.restarted:
            await _call(watcher.on_text, CUT_OFF)
        if event.text:
            await _call(watcher.on_text, event.text)
    elif isinstance(event, Notice):
        await _call(watcher.on_notice, event.text)
        if event.chat:
            await _call(watcher.on_chat_notice, event.text)
    elif isinstance(event, InterimReply):
        if watcher.on_interim is not None:
            await _call(watcher.on_interim, event.text)
        else:
            await _call(watcher.on_text, "\n\n")
    elif isinstance(event, ToolStarted):
        await _call(watcher.on_tool_started, event)
    elif isinstance(event, ToolProgress):
        await _call(watcher.on_tool_progress, event)
    elif isinstance(event, ToolFinished):
        watcher.tool_calls.append(event)
        await _call(watcher.on_tool_finished, event)
    elif isinstance(event, Question):
        if watcher.on_question is None:
            event.decline()
        await _call(watcher.on_question, event)
    elif isinstance(event, TurnEnded):
        await _call(watcher.on_end, event)


async def _call(callback: Callable[..., Any] | None, *arguments: Any) -> None:
    """Call an optional callback, awaiting it if it is a coroutine function."""
    if callback is None:
        return
    result = callback(*arguments)
    if inspect.isawaitable(result):
        await result
