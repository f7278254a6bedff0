"""The full-screen interface: the stored sessions on the left, the conversation in the
middle, the status line and the input box below, the keys in the footer.

The input box stays usable while a reply streams: a message sent then waits for the turn
(``/steer`` reaches the running turn at once, ``/stop`` or Escape stops it). Everything is
done through the runtime contract: the ``/NAME`` commands are the runtime's, run once for
every front-end; this front-end only shows them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Input, Label, ListItem, ListView, Static

from hermes_commons.text import Totals, one_line
from hermes_plugin_tui.dialogs import QuestionDialog
from hermes_plugin_tui.widgets import Conversation, ToolCall
from hermes_sdk.events import CommandContext
from hermes_sdk.following import TurnWatcher, follow_turn
from hermes_sdk.runtime import (
    STEER_PREFIX,
    ModelInfo,
    Question,
    Runtime,
    RuntimeTurn,
    SessionBusy,
    SessionMessage,
    SessionNotFound,
    SessionOptions,
    SessionSummary,
    ToolFinished,
    ToolStarted,
    TurnEnded,
    is_report,
)
from hermes_sdk.slash import opens_session

__all__ = ["HermesTui", "TuiOptions", "run_tui"]

log = logging.getLogger("hermes")

SOURCE = "tui"
"""The source the TUI's sessions are listed under."""
SIDEBAR_MIN_WIDTH = 100
"""Narrower than this (80x24), the session list starts hidden (Ctrl+B shows it)."""
LISTED_SESSIONS = 40


@dataclass(frozen=True)
class TuiOptions:
    resume: str | None = None
    provider: str | None = None
    model: str | None = None
    light: bool = False


class HermesTui(App[int]):
    """Run it with a runtime opened on the same event loop (``run_async``)."""

    CSS_PATH = "tui.tcss"
    TITLE = "Hermes"
    BINDINGS: ClassVar[list[Binding | tuple[str, str] | tuple[str, str, str]]] = [
        Binding("ctrl+n", "new_session", "New"),
        Binding("ctrl+b", "toggle_sessions", "Sessions"),
        Binding("escape", "stop_turn", "Stop"),
        Binding("ctrl+o", "toggle_tools", "Tool calls"),
        Binding("ctrl+t", "toggle_theme", "Theme"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, runtime: Runtime, options: TuiOptions | None = None) -> None:
        super().__init__()
        self.runtime = runtime
        self.options = options or TuiOptions()
        self.info: ModelInfo = runtime.describe_model(self.options.provider, self.options.model)
        self.provider, self.model = self.options.provider, self.options.model
        self.session: SessionSummary | None = None
        self.turn: RuntimeTurn | None = None
        self.queued: list[str] = []
        self.reports: list[str] = []
        """Reports of background work waiting for the running turn (a stop keeps them)."""
        self.stop_asked = False
        """Esc before the turn had started (its references were being read)."""
        self.busy = False
        """A turn is starting or running (set before its references are read and its
        session opened, so a second Enter meanwhile waits its turn)."""
        self.listing = asyncio.Lock()
        """One redraw of the session list at a time."""
        self.asking: QuestionDialog | None = None
        self.context: str | None = None
        """How full the model's context window is, as the status line shows it."""
        self.conversation = Conversation()
        self.status_line = Static("", id="status", markup=False)
        self.theme = "textual-light" if self.options.light else "textual-dark"
        self.home_loop: asyncio.AbstractEventLoop | None = None
        self.later: set[asyncio.Task[None]] = set()
        """Lines from background work being shown."""

    # --- layout -------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield Label("Sessions", classes="sidebar-title")
                yield ListView(id="sessions")
            with Vertical(id="main"):
                yield self.conversation
                yield self.status_line
                yield Input(placeholder="Write to Hermes · /help for commands", id="prompt")
        yield Footer()

    async def on_mount(self) -> None:
        self.home_loop = asyncio.get_running_loop()
        self.query_one("#sidebar").display = self.size.width >= SIDEBAR_MIN_WIDTH
        self.query_one("#prompt", Input).focus()
        notice = self.info.notice
        await self.conversation.notice(
            f"Hermes · {self.info.provider} / {self.info.model} · Enter sends · "
            "Escape stops a turn · /help lists the commands"
        )
        if notice:
            await self.conversation.notice(notice, "warning")
        for warning in self.runtime.warnings():
            await self.conversation.notice(f"warning: {warning}", "warning")
        self.runtime.watch_background(self._from_elsewhere)
        if self.options.resume:
            try:
                found = await self.runtime.find_session(self.options.resume)
            except SessionNotFound as exc:
                await self.conversation.notice(str(exc), "error")
            else:
                await self.switch_to(found.session_id)
        await self.refresh_sessions()
        self.show_status()

    def _from_elsewhere(self, line: str) -> None:
        """A line from background work (from any thread): shown in the conversation."""
        loop = self.home_loop
        if loop is None or loop.is_closed():
            return

        def show() -> None:
            task = asyncio.ensure_future(self.conversation.notice(line))
            self.later.add(task)
            task.add_done_callback(self.later.discard)

        loop.call_soon_threadsafe(show)

    # --- the status line and the session list -------------------------------------------

    def show_status(self) -> None:
        session = self.session
        parts = ["working… (Esc stops)" if self.busy else "ready"]
        parts.append(f"{self.info.provider} / {self.info.model}")
        if session is None:
            parts.append("new session")
        else:
            if self.context is not None:
                parts.append(self.context)
            parts.append(f"{session.input_tokens:,} in · {session.output_tokens:,} out")
            parts.append(f"cost {Totals.of(session).cost_text()}")
            parts.append(session.title or session.session_id)
        self.status_line.update(" · ".join(parts))

    async def measure_context(self) -> None:
        used = await self.runtime.context_use(self.session.session_id) if self.session else None
        if used is None:
            self.context = None
            return
        tokens, window = used
        self.context = f"context {tokens / max(window, 1):.0%} of {window // 1000}k"

    async def refresh_sessions(self) -> None:
        async with self.listing:
            await self._list_sessions()

    async def _list_sessions(self) -> None:
        listing = self.query_one("#sessions", ListView)
        recent = await self.runtime.sessions(limit=LISTED_SESSIONS)
        openings = await self.runtime.openings([s.session_id for s in recent])
        current = self.session.session_id if self.session else None
        await listing.clear()
        items = []
        for summary in recent:
            about = summary.title or one_line(openings.get(summary.session_id, "(empty)"), 40)
            mark = "● " if summary.session_id == current else ""
            items.append(ListItem(Label(f"{mark}{about}"), id=f"s-{summary.session_id}"))
        await listing.extend(items)

    async def on_list_view_selected(self, event: ListView.Selected) -> None:
        item_id = event.item.id or ""
        if item_id.startswith("s-"):
            await self.switch_to(item_id[2:])
            self.query_one("#prompt", Input).focus()

    # --- sessions -----------------------------------------------------------------------

    async def switch_to(self, session_id: str) -> None:
        """Show a stored session and go on in it."""
        if self.busy:
            await self.conversation.notice("a turn is running: wait for it, or Esc stops it")
            return
        try:
            resumed = await self.runtime.resume_session(session_id)
        except SessionNotFound as exc:
            await self.conversation.notice(str(exc), "error")
            return
        self.session = resumed
        if resumed.provider and resumed.model:
            self.info = ModelInfo(provider=resumed.provider, model=resumed.model)
        await self.conversation.clear()
        await self.conversation.notice(
            f"session {resumed.session_id}: {resumed.title or '(untitled)'} "
            f"({resumed.message_count} messages)"
        )
        await self.show_messages(await self.runtime.messages(resumed.session_id))
        await self.measure_context()
        self.conversation.scroll_end(animate=False)
        await self.refresh_sessions()
        self.show_status()

    async def show_messages(self, messages: Sequence[SessionMessage]) -> None:
        calls: dict[str, ToolCall] = {}
        for message in messages:
            content = message.content or ""
            if message.role == "user":
                if content.startswith(STEER_PREFIX):
                    await self.conversation.notice(f"steered: {content[len(STEER_PREFIX) :]}")
                else:
                    await self.conversation.user(content)
            elif message.role == "assistant":
                await self.conversation.reply(content)
                for call in message.tool_calls:
                    started = ToolStarted(
                        call_id=str(call.get("id")),
                        tool=str(call.get("name")),
                        arguments=_arguments(call.get("arguments")),
                    )
                    widget = calls[started.call_id] = ToolCall(started)
                    await self.conversation.add(widget)
            elif message.role == "tool" and message.tool_call_id in calls:
                widget = calls.pop(message.tool_call_id)
                widget.finished(
                    ToolFinished(
                        call_id=widget.call.call_id,
                        tool=widget.call.tool,
                        ok=message.disposition in (None, "ok"),
                        content=content,
                        arguments=widget.call.arguments,
                    )
                )

    async def ensure_session(self) -> str:
        if self.session is None:
            self.session = await self.runtime.open_session(
                SessionOptions(
                    source=SOURCE, cwd=os.getcwd(), provider=self.provider, model=self.model
                )
            )
            await self.refresh_sessions()
        return self.session.session_id

    # --- input --------------------------------------------------------------------------

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "prompt":
            return
        text = event.value
        event.input.value = ""
        if not text.strip():
            return
        if text.startswith("/"):
            await self.command(text.strip())
            return
        await self.send(text)

    async def send(self, text: str) -> None:
        await self.conversation.user(text)
        if self.busy:
            self.queued.append(text)
            await self.conversation.notice("queued: it goes once this turn ends")
            return
        self.start(text)

    def _reporter(self, session_id: str) -> Callable[[str], None]:
        """``later`` for a turn of ``session_id``: a report of work a tool left running (a
        background subagent's) is sent as that session's next message, at once if no turn
        runs; in another session it is only pointed out."""

        def report(text: str) -> None:
            if self.session is None or self.session.session_id != session_id:
                self.notify(f"background work of session {session_id} finished: /resume it")
                return
            if self.busy:
                self.reports.append(text)
                return
            self.start(text)

        return report

    def _next(self) -> None:
        if self.reports:
            self.start(self.reports.pop(0))
        elif self.queued:
            self.start(self.queued.pop(0))

    def start(self, text: str) -> None:
        self.busy, self.stop_asked = True, False
        self.run_worker(self._turn(text), group="turn")

    async def _turn(self, text: str) -> None:
        conversation = self.conversation
        try:
            if "@" in text and not is_report(text):
                text = await self._with_references(text)
            session_id = await self.ensure_session()
            if self.stop_asked:  # Esc while the references were read: nothing starts
                await conversation.notice("(stopped)")
                await self._ended_early()
                return
            turn = self.runtime.start_turn(
                session_id, text, answers_questions=True, later=self._reporter(session_id)
            )
        except (ValueError, SessionBusy, SessionNotFound) as exc:
            await conversation.notice(str(exc), "error")
            await self._ended_early()
            return
        except Exception as exc:
            log.debug("the turn could not start", exc_info=True)
            await conversation.notice(f"{type(exc).__name__}: {exc}", "error")
            await self._ended_early()
            return
        self.turn = turn
        self.show_status()
        watcher = TurnWatcher(
            on_text=conversation.stream,
            on_restart=conversation.restart,
            on_notice=conversation.notice,
            on_interim=conversation.finish,
            on_tool_started=conversation.tool_started,
            on_tool_finished=conversation.tool_finished,
            on_question=self.ask,
        )
        ended: TurnEnded | None = None
        try:
            ended = await follow_turn(turn, watcher, stop_if_left=True)
        finally:
            self.turn = None
            if self.asking is not None:  # the turn answered it no on its way out
                self.asking.action_decline()
            await self._ended(ended)

    async def _ended_early(self) -> None:
        self.busy = False
        self.show_status()
        self._next()

    async def _ended(self, ended: TurnEnded | None) -> None:
        try:
            await self._show_end(ended)
        finally:  # whatever the drawing did, the next message can go
            self.busy = False
            self.show_status()
        self._next()

    async def _show_end(self, ended: TurnEnded | None) -> None:
        conversation = self.conversation
        if ended is None or ended.status in ("stopped", "interrupted"):
            await conversation.finish()
            await conversation.notice("(stopped)")
        elif ended.status == "done":
            await conversation.finish(ended.reply)
        else:
            await conversation.finish()
            await conversation.notice(ended.error or ended.status, "error")
        if self.session is not None:
            try:
                self.session = await self.runtime.find_session(self.session.session_id)
            except SessionNotFound:
                self.session = None
        await self.refresh_sessions()  # its title or opening, now that it has one
        await self.measure_context()

    async def _with_references(self, text: str) -> str:
        from pathlib import Path

        from hermes_commons.references import home_guard, resolve

        runtime = self.runtime
        resolved = await resolve(text, Path.cwd(), **home_guard(runtime.home, runtime.config))
        for problem, line in resolved.said():
            await self.conversation.notice(line, "warning" if problem else "notice")
        return resolved.text

    def ask(self, question: Question) -> None:
        dialog = QuestionDialog(question)

        def answered(value: str | None) -> None:
            if self.asking is dialog:
                self.asking = None
            if value is None:
                question.decline()
            elif not question.answer(value):
                question.answer_text(value)

        self.asking = dialog
        self.push_screen(dialog, answered)

    # --- commands -----------------------------------------------------------------------

    async def command(self, line: str) -> None:
        name, _, args = line[1:].partition(" ")
        name = name.lower()
        await self.conversation.user(line)
        if name in ("quit", "exit"):
            await self.action_quit()
            return
        if name == "stop" and self.turn is not None:
            self.queued.clear()
        if opens_session(name, args):
            await self.ensure_session()
        session_id = self.session.session_id if self.session else None
        try:
            reply = await self.runtime.run_slash(
                name,
                args.strip(),
                session_id,
                route=None if session_id else (self.provider, self.model),
                notify=self._from_elsewhere,
            )
        except (LookupError, PermissionError, SessionBusy, SessionNotFound, ValueError) as exc:
            await self.conversation.notice(str(exc).strip("'\""), "error")
            return
        except Exception as exc:
            log.debug("/%s failed", name, exc_info=True)
            await self.conversation.notice(f"/{name}: {type(exc).__name__}: {exc}", "error")
            return
        if reply.text:
            await self.conversation.notice(reply.text, "command")
        if reply.new_session:
            self.session, self.context = None, None
            await self.conversation.clear()
            await self.refresh_sessions()
        if reply.provider is not None and reply.model is not None:
            self.provider, self.model = reply.provider, reply.model
            self.info = ModelInfo(provider=reply.provider, model=reply.model)
        if reply.session_id is not None:
            await self.switch_to(reply.session_id)
        elif reply.reload and self.session is not None:
            await self.switch_to(self.session.session_id)
        if reply.send is not None:
            await self.send(reply.send)
        self.show_status()

    # --- keys ---------------------------------------------------------------------------

    async def action_new_session(self) -> None:
        if self.busy:
            await self.conversation.notice("a turn is running: wait for it, or Esc stops it")
            return
        if self.session is not None:
            await self.runtime.end_session(self.session.session_id, "new_session")
        self.session, self.context = None, None
        await self.conversation.clear()
        await self.conversation.notice("new session: your next message starts it")
        await self.refresh_sessions()
        self.show_status()

    def action_toggle_sessions(self) -> None:
        sidebar = self.query_one("#sidebar")
        sidebar.display = not sidebar.display
        if sidebar.display:
            self.query_one("#sessions", ListView).focus()

    def action_stop_turn(self) -> None:
        if self.busy:
            self.queued.clear()
            self.stop_asked = True
        if self.turn is not None:
            self.turn.stop()

    def action_toggle_tools(self) -> None:
        calls = list(self.query(ToolCall))
        opening = any(call.collapsed for call in calls)
        for call in calls:
            call.collapsed = not opening

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    async def action_quit(self) -> None:
        if self.turn is not None:
            self.turn.stop()
        if self.session is not None:
            with contextlib.suppress(SessionNotFound):  # deleted meanwhile
                await self.runtime.end_session(self.session.session_id, "tui_exit")
        self.exit(0)


def _arguments(raw: object) -> dict[str, object]:
    import json

    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


async def run_tui(context: CommandContext, options: TuiOptions) -> int:
    assert context.open_runtime is not None  # checked by the command
    async with context.open_runtime() as runtime:
        try:
            app = HermesTui(runtime, options)
        except ValueError as exc:  # the model asked for cannot be used
            print(f"hermes: error: {exc}", file=sys.stderr)
            return 1
        code = await app.run_async()
        return int(code or 0)
