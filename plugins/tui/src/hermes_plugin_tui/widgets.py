"""What the conversation is drawn with: the user's lines, replies (streamed as plain text,
then rendered as Markdown), tool calls folded into one line each (Enter or a click opens
the result), notices, and the status line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Collapsible, Markdown, Static

from hermes_commons.text import argument_preview, printable, seconds
from hermes_sdk.runtime import ToolFinished, ToolStarted

__all__ = ["Conversation", "Reply", "ToolCall"]

RESULT_CHARS = 20_000
"""A tool result is shown up to here when opened (the model read it whole)."""


class ToolCall(Collapsible):
    """One tool call: a line with its name, arguments and outcome; opened, its result."""

    def __init__(self, call: ToolStarted) -> None:
        self.call = call
        self.result = Static("running…", classes="tool-result", markup=False)
        super().__init__(
            self.result, title=_title("…", call.tool, call.arguments, None), collapsed=True
        )
        self.add_class("tool")

    def finished(self, result: ToolFinished) -> None:
        mark = "✓" if result.ok else "✗"
        self.title = _title(mark, result.tool, result.arguments, result.duration_s)
        self.set_class(not result.ok, "failed")
        content = printable(result.content)
        if len(content) > RESULT_CHARS:
            content = content[:RESULT_CHARS] + f"\n… {len(content) - RESULT_CHARS:,} more"
        self.result.update(Text(content or "(no output)"))


def _title(mark: str, tool: str, arguments: Mapping[str, Any], took: float | None) -> str:
    preview = argument_preview(arguments, 60)
    timing = f"  {seconds(took)}" if took is not None else ""
    return f"{mark} {tool}  {preview}{timing}".rstrip()


class Reply(Static):
    """A reply as it streams: plain text, redrawn as it grows; :meth:`Conversation.finish`
    puts the rendered Markdown in its place."""

    def __init__(self) -> None:
        super().__init__("", classes="reply streaming", markup=False)
        self.text = ""

    def feed(self, delta: str) -> None:
        self.text += delta
        self.update(Text(self.text))

    def restart(self) -> None:
        self.text = ""
        self.update("")


class Conversation(VerticalScroll):
    """The conversation, oldest at the top; it follows the end while the user is there."""

    def __init__(self) -> None:
        super().__init__(id="conversation")
        self.streaming: Reply | None = None
        self.calls: dict[str, ToolCall] = {}

    async def add(self, widget: Static | Markdown | Collapsible) -> None:
        follow = self.max_scroll_y - self.scroll_y < 3
        await self.mount(widget)
        if follow:
            self.scroll_end(animate=False)

    async def user(self, text: str) -> None:
        mark = "\u203a"  # the chat's prompt mark: a single right-pointing angle quote
        await self.add(Static(Text(f"{mark} {printable(text)}"), classes="user", markup=False))

    async def notice(self, text: str, kind: str = "notice") -> None:
        await self.add(Static(Text(printable(text)), classes=kind, markup=False))

    async def reply(self, text: str) -> None:
        if text.strip():
            await self.add(Markdown(printable(text), classes="reply"))

    async def stream(self, delta: str) -> None:
        if self.streaming is None:
            self.streaming = Reply()
            await self.add(self.streaming)
        self.streaming.feed(delta)
        if self.max_scroll_y - self.scroll_y < 6:
            self.scroll_end(animate=False)

    def restart(self) -> None:
        if self.streaming is not None:
            self.streaming.restart()

    async def finish(self, text: str | None = None) -> None:
        """The streamed reply is over: drawn again as Markdown (``text``: the reply as the
        runtime has it, else what streamed)."""
        streaming, self.streaming = self.streaming, None
        shown = text if text is not None else (streaming.text if streaming else "")
        if streaming is None:
            await self.reply(shown)
            return
        if shown.strip():  # in the streamed text's place: lines added meanwhile stay below
            await self.mount(Markdown(printable(shown), classes="reply"), before=streaming)
        await streaming.remove()

    async def tool_started(self, call: ToolStarted) -> None:
        if self.streaming is not None and self.streaming.text.strip():
            await self.finish()  # what the model said before calling tools stays above them
        widget = self.calls[call.call_id] = ToolCall(call)
        await self.add(widget)

    def tool_finished(self, result: ToolFinished) -> None:
        widget = self.calls.pop(result.call_id, None)
        if widget is not None:
            widget.finished(result)

    async def clear(self) -> None:
        self.streaming = None
        self.calls.clear()
        await self.remove_children()
