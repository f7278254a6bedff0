"""What the interactive chat shows. Finished output (a reply rendered as Markdown, a tool's
result line, notices) is printed above the prompt and scrolls with the terminal; what is
still happening (the reply as it streams, each running tool with a spinner and a timer) is
a live area redrawn just above the input line, so the screen never looks frozen and the
user can keep typing."""

from __future__ import annotations

import io
import shutil
import sys
import time
from dataclasses import dataclass, field

from rich.console import Console, RenderableType
from rich.markdown import Markdown
from rich.text import Text

from hermes_commons.text import argument_preview, one_line, printable, result_preview, seconds
from hermes_sdk.runtime import ToolFinished, ToolProgress, ToolStarted

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
PROMPT_MARK = "\u203a"  # a single right-pointing angle quote: the prompt, and the user's lines
LIVE_TEXT_LINES = 8
"""Lines of a streaming reply kept in view; the whole reply is printed when it ends."""


@dataclass
class _Running:
    call: ToolStarted
    started: float = field(default_factory=time.monotonic)
    progress: str = ""
    """The last line the call reported (an MCP server's progress)."""


class ChatView:
    def __init__(self) -> None:
        self.streaming: list[str] = []
        self.running: dict[str, _Running] = {}
        self.turn_started: float | None = None
        self.status = ""
        self.flushed = ""
        """The text last printed before a tool round (not to be printed twice)."""
        self.verbose = False

    # --- printing above the prompt --------------------------------------------------------

    @staticmethod
    def width() -> int:
        return max(20, shutil.get_terminal_size((100, 30)).columns - 1)

    def render(self, renderable: RenderableType) -> str:
        buffer = io.StringIO()
        console = Console(
            file=buffer, force_terminal=True, width=self.width(), highlight=False, soft_wrap=False
        )
        console.print(renderable)
        return buffer.getvalue()

    def write(self, text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    def print(self, renderable: RenderableType) -> None:
        self.write(self.render(renderable))

    def info(self, text: str) -> None:
        self.print(Text(printable(text), style="dim"))

    def warn(self, text: str) -> None:
        self.print(Text(printable(text), style="yellow"))

    def error(self, text: str) -> None:
        self.print(Text(f"error: {printable(text)}", style="bold red"))

    def user(self, text: str) -> None:
        self.print(Text(f"{PROMPT_MARK} {printable(text)}", style="bold cyan"))

    def reply(self, text: str, interrupted: bool = False) -> None:
        if text.strip():
            self.print(Markdown(printable(text), code_theme="monokai"))
        if interrupted:
            kept = "the text so far is kept" if text.strip() else "nothing was written yet"
            self.info(f"(interrupted; {kept})")

    # --- a turn as it happens -------------------------------------------------------------

    def start_turn(self) -> None:
        self.turn_started = time.monotonic()
        self.flushed = ""
        self.streaming.clear()
        self.status = "thinking"

    def end_turn(self) -> None:
        self.turn_started = None
        self.streaming.clear()
        self.running.clear()
        self.status = ""

    def stream(self, text: str) -> None:
        self.streaming.append(text)
        self.status = "writing"

    def flush_streamed(self) -> None:
        """Text the model wrote before calling tools: print it, the tools come next."""
        text = "".join(self.streaming)
        self.streaming.clear()
        self.flushed = text
        self.reply(text)

    def discard_streamed(self) -> None:
        self.streaming.clear()

    def tool_started(self, call: ToolStarted) -> None:
        if self.streaming:
            self.flush_streamed()
        self.running[call.call_id] = _Running(call)
        self.status = "running tools"

    def tool_progress(self, event: ToolProgress) -> None:
        running = self.running.get(event.call_id)
        if running is not None:
            running.progress = printable(event.text)

    def tool_finished(self, result: ToolFinished) -> None:
        self.running.pop(result.call_id, None)
        mark, style = ("✓", "green") if result.ok else ("✗", "red")
        line = Text()
        line.append(f"  {mark} ", style=style)
        line.append(result.tool, style="bold")
        preview = argument_preview(result.arguments, 50)
        if preview:
            line.append(f"  {preview}")
        line.append(f"  {seconds(result.duration_s)}", style="dim")
        self.print(line)
        content = printable(result.content) if self.verbose else result_preview(result.content, 100)
        self.print(Text(f"    {content}", style="dim" if result.ok else "red"))
        if not self.running:
            self.status = "thinking"

    # --- the live area --------------------------------------------------------------------

    def live(self) -> str:
        """The lines drawn above the input while a turn runs (ANSI text), or ''."""
        if self.turn_started is None:
            return ""
        now = time.monotonic()
        frame = SPINNER[int(now * 10) % len(SPINNER)]
        width = self.width()
        lines: list[str] = []
        if self.streaming:
            text = "".join(self.streaming)
            tail = text.splitlines()[-LIVE_TEXT_LINES:] if text else []
            lines += [one_line(line, width) if line.strip() else "" for line in tail]
        for running in self.running.values():
            preview = argument_preview(running.call.arguments, 50)
            elapsed = seconds(now - running.started)
            lines.append(f"\x1b[33m  {frame}\x1b[0m \x1b[1m{running.call.tool}\x1b[0m  {preview}")
            lines[-1] += f"  \x1b[2m{elapsed}\x1b[0m"
            if running.progress:
                lines[-1] += f"  \x1b[36m{running.progress[:60]}\x1b[0m"
        if not self.running:
            elapsed = seconds(now - self.turn_started)
            lines.append(f"\x1b[2m{frame} {self.status}… {elapsed} · Ctrl+C to stop\x1b[0m")
        return "\n".join(lines) + "\n"
