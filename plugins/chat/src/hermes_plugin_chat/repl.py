"""The interactive chat: a prompt that stays usable while the agent works.

Keys: Enter sends (a line ending in ``\\`` or Alt+Enter adds a new line); a long paste is
collapsed to one placeholder and sent whole. Ctrl+C clears a draft, else stops the running
turn (the text so far is kept); twice within two seconds it exits, as Ctrl+D does on an
empty prompt. A message typed while a turn runs is queued: the turn stops after its
current step and the message goes next. Leaving stops a running turn first, so the session
is always left consistent.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import ANSI, AnyFormattedText
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.patch_stdout import patch_stdout

from hermes_commons.leaving import Leaving, run_until_done
from hermes_commons.text import Totals
from hermes_plugin_chat.commands import BUILTINS, split_command
from hermes_plugin_chat.questions import answer_from_line, decision, hint, question_text
from hermes_plugin_chat.session import ChatOptions, ChatSession, TurnWatcher
from hermes_plugin_chat.slash import SlashCommands
from hermes_plugin_chat.view import PROMPT_MARK, ChatView
from hermes_sdk.events import CommandContext
from hermes_sdk.media import Attachment
from hermes_sdk.runtime import (
    REPORT_PREFIX,
    Question,
    Runtime,
    SessionBusy,
    SessionNotFound,
    TurnEnded,
    is_report,
)

log = logging.getLogger("hermes")

EXIT_WINDOW_SECONDS = 2.0
PASTE_LINES = 6
PASTE_CHARS = 800
STOP_WAIT_SECONDS = 10.0


class ChatCompleter(Completer):
    """Slash commands at the start of the line; @-references (``@diff``, ``@staged``,
    ``@git:``, paths) in any word that starts with ``@``; file paths in any word that looks
    like one."""

    def __init__(self, commands: dict[str, str]) -> None:
        self.commands = commands
        self.paths = PathCompleter(expanduser=True)

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text:
            for name, help_text in sorted(self.commands.items()):
                if name.startswith(text[1:]):
                    yield Completion(f"/{name}", -len(text), display_meta=help_text)
            return
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            yield from self._references(word[1:], event)
        elif word and ("/" in word or word.startswith(("~", "."))):
            yield from self.paths.get_completions(Document(word, len(word)), event)

    def _references(self, typed: str, event: CompleteEvent) -> Iterable[Completion]:
        from hermes_commons.references import KEYWORDS

        for keyword in KEYWORDS:
            if keyword.startswith(typed) and keyword != typed:
                yield Completion(keyword, -len(typed), display_meta="@-reference")
        yield from self.paths.get_completions(Document(typed, len(typed)), event)


class _ExpandingHistory(FileHistory):
    """The history file keeps what was sent: pasted text, not its placeholder."""

    def __init__(self, filename: str, expand: Callable[[str], str]) -> None:
        super().__init__(filename)
        self.expand = expand

    def store_string(self, string: str) -> None:
        super().store_string(self.expand(string))


class Questions:
    """Questions of the running turn (approvals, a tool's question), answered at the chat's
    own prompt: the question is shown above it, and the next line the user enters answers
    it instead of being sent. Ctrl+C (stopping the turn) or the time running out answers no:
    for an approval, deny."""

    def __init__(self, view: ChatView) -> None:
        self.view = view
        self.pending: Question | None = None
        self.label = ""
        self.redraw: Callable[[], None] = lambda: None
        self._expiry: asyncio.TimerHandle | None = None

    def show(self, question: Question) -> None:
        """A question arrived (on the loop): show it and wait for the next line."""
        self.close()
        self.pending = question
        self.label = "approve" if question.kind == "approval" else "answer"
        self.view.warn(question_text(question))
        self.view.info(f"{hint(question)} (no answer in {question.timeout_s:.0f} s counts as no)")
        self._expiry = asyncio.get_running_loop().call_later(question.timeout_s, self._expired)
        self.redraw()

    def _expired(self) -> None:
        if self.pending is not None:
            self.view.warn("no answer in time")
            self.close()

    def close(self) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        self.pending, self.label = None, ""
        self.redraw()

    def answer(self, line: str | None) -> bool:
        """Answer the pending question with ``line`` (None: no); False if none is pending."""
        question = self.pending
        if question is None:
            return False
        self.close()
        if line is None:
            question.decline()
        elif not answer_from_line(question, line):
            self.view.warn("that question was closed already (stopped or timed out)")
            return True
        self.view.info(decision(question, line))  # the decision, in place of the answer
        return True


class Repl:
    def __init__(
        self, runtime: Runtime, chat: ChatSession, view: ChatView, questions: Questions
    ) -> None:
        self.runtime = runtime
        self.chat = chat
        self.view = view
        self.questions = questions
        questions.redraw = self.redraw
        self.turn: asyncio.Task[None] | None = None
        self.queued: list[str] = []
        self.reports: list[str] = []
        """Reports of background work, waiting for the running turn to end (never dropped
        by a stop, as typed messages are)."""
        self.attached: list[Attachment] = list(chat.options.attachments)
        """Files for the next message (``--image``, ``/image``, ``/file``)."""
        self.last_ctrl_c = 0.0
        self.pastes: dict[str, str] = {}
        self.commands = dict(runtime.slash_commands())
        """The runtime's commands (built-in and the plugins'), by name."""
        self.slash = SlashCommands(self)
        names = {command.name: command.help for command in BUILTINS}
        names.update({name: spec.description for name, spec in self.commands.items()})
        self.prompt: PromptSession[str] = PromptSession(
            message=self.message,
            history=_ExpandingHistory(
                os.path.join(runtime.home, "chat_history"), self.expand_pastes
            ),
            completer=ChatCompleter(names),
            complete_while_typing=True,
            key_bindings=self.keys(),
            bottom_toolbar=self.toolbar,
            refresh_interval=0.1,
            erase_when_done=True,
            enable_history_search=True,
        )
        self.prompt.app.min_redraw_interval = 0.03

    # --- what is drawn ----------------------------------------------------------------------

    def message(self) -> AnyFormattedText:
        if self.questions.pending is not None:
            return ANSI(
                self.view.live() + f"\x1b[1;33m{self.questions.label} {PROMPT_MARK}\x1b[0m "
            )
        return ANSI(self.view.live() + f"\x1b[1;36m{PROMPT_MARK}\x1b[0m ")

    def toolbar(self) -> AnyFormattedText:
        provider, model = self.chat.route
        session = self.chat.session
        where = session.session_id if session else "new session"
        parts = [f" {provider} / {model}", where, f"cost {Totals.of(session).cost_text()}"]
        if self.chat.yolo:
            parts.append("YOLO")
        if self.turn is not None:
            parts.append("Ctrl+C stops")
        else:
            parts.append("/help · Ctrl+D quits")
        return " · ".join(parts)

    def redraw(self) -> None:
        self.prompt.app.invalidate()

    # --- keys -------------------------------------------------------------------------------

    def keys(self) -> KeyBindings:
        keys = KeyBindings()

        @keys.add("c-c")
        def _ctrl_c(event: KeyPressEvent) -> None:
            buffer = event.app.current_buffer
            if buffer.text:
                buffer.reset()
                return
            now = time.monotonic()
            if now - self.last_ctrl_c < EXIT_WINDOW_SECONDS:
                event.app.exit(exception=EOFError())
                return
            self.last_ctrl_c = now
            if self.turn is not None:
                self.queued.clear()
                self.questions.answer(None)
                self.chat.stop()
                self.view.info("stopping… (Ctrl+C again to exit)")
            else:
                self.view.info("(Ctrl+C again to exit, or Ctrl+D)")

        @keys.add("c-d")
        def _ctrl_d(event: KeyPressEvent) -> None:
            buffer = event.app.current_buffer
            if buffer.text:
                buffer.delete()
            else:
                event.app.exit(exception=EOFError())

        @keys.add("escape", "enter")
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        @keys.add("enter")
        def _enter(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            if buffer.document.text_before_cursor.endswith("\\"):
                buffer.delete_before_cursor(1)
                buffer.insert_text("\n")
            else:
                buffer.validate_and_handle()

        @keys.add(Keys.BracketedPaste)
        def _paste(event: KeyPressEvent) -> None:
            data = event.data.replace("\r\n", "\n").replace("\r", "\n")
            lines = len(data.splitlines()) or 1  # ten lines with a final newline are ten
            if lines >= PASTE_LINES or len(data) >= PASTE_CHARS:
                label = f"[pasted text #{len(self.pastes) + 1}: {lines} lines, {len(data)} chars]"
                self.pastes[label] = data
                data = label
            event.current_buffer.insert_text(data)

        return keys

    def expand_pastes(self, text: str) -> str:
        for label, pasted in self.pastes.items():
            text = text.replace(label, pasted)
        return text

    # --- the loop ---------------------------------------------------------------------------

    def banner(self) -> None:
        from hermes_sdk import __version__

        provider, model = self.chat.route
        self.view.info(
            f"Hermes {__version__} · {provider} / {model} · /help for commands · Ctrl+D quits"
        )
        if self.chat.info.notice:
            self.view.warn(self.chat.info.notice)
        for warning in [*self.runtime.warnings(), *self.chat.warnings]:
            self.view.warn(f"warning: {warning}")

    def _terminated(self) -> None:
        """SIGTERM: stop the turn (it is saved) and leave as if Ctrl+D was pressed.
        (Ctrl+C is a key here, the prompt's own; a signal's SIGINT stays the prompt's too.)"""
        self.chat.stop()
        self.runtime.stop_hooks()
        if self.prompt.app.is_running:
            self.prompt.app.exit(exception=EOFError())

    async def run(self) -> int:
        leaving = Leaving(self._terminated, signals=(signal.SIGTERM,))
        leaving.install(asyncio.get_running_loop())
        try:
            await self._serve()
        finally:
            leaving.remove()
        return leaving.code or 0

    async def _serve(self) -> None:
        with patch_stdout(raw=True):
            self.banner()
            if self.chat.session is not None:
                await self.slash.show_resumed(self.chat.session)
            while True:
                try:
                    line = await self.prompt.prompt_async()
                except EOFError:
                    break
                except KeyboardInterrupt:  # only if our Ctrl+C binding was bypassed
                    continue
                text = self.expand_pastes(line)
                if self.questions.answer(text):  # it says the decision, not the letter typed
                    continue
                if not text.strip():
                    continue
                if text.startswith("/"):
                    if not await self.command(text.strip()):
                        break
                    continue
                self.send(text, shown=line)  # a paste is echoed as its placeholder
            await self.shutdown()

    async def command(self, line: str) -> bool:
        """Run a slash command; False means leave."""
        name, args = split_command(line)
        self.view.user(line)
        try:
            return await self.slash.run(name, args)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # a (plugin) command's failure is shown; the chat goes on
            log.debug("slash command /%s failed", name, exc_info=True)
            self.view.error(f"/{name}: {type(exc).__name__}: {exc}")
            return True

    def send(self, text: str, shown: str | None = None) -> None:
        self.view.user(shown if shown is not None else text)
        if self.turn is not None:
            self.queued.append(text)
            self.chat.interrupt()
            self.view.info("queued: it goes next, once the current step ends (Ctrl+C stops now)")
            return
        self.start(text)

    def queue(self, text: str) -> None:
        """Send ``text`` once the running turn ends, without interrupting it (``/queue``,
        ``/goal``); at once if nothing runs."""
        if self.turn is not None:
            self.queued.append(text)
            return
        self.view.user(text)
        self.start(text)

    def start(self, text: str) -> None:
        self.view.start_turn()
        self.turn = asyncio.ensure_future(self._turn(text))

    def watcher(self) -> TurnWatcher:
        view = self.view

        def on_text(chunk: str) -> None:
            view.stream(chunk)
            self.redraw()

        def on_notice(notice: str) -> None:
            view.discard_streamed()  # a retry or cut-off: the text so far is not the reply
            view.warn(notice)

        def on_interim(reply: str) -> None:
            view.discard_streamed()  # shown whole, as Markdown: the next reply streams after
            view.reply(reply)

        return TurnWatcher(
            on_text=on_text,
            on_restart=view.discard_streamed,
            on_notice=on_notice,
            on_interim=on_interim,
            on_tool_started=view.tool_started,
            on_tool_progress=view.tool_progress,
            on_tool_finished=view.tool_finished,
            on_question=self.questions.show,
        )

    async def _turn(self, text: str) -> None:
        view = self.view
        try:
            report = is_report(text)
            attached: tuple[Attachment, ...] = ()
            if not report:  # a report takes none of the files attached for the next message
                attached, self.attached = tuple(self.attached), []
            if "@" in text and not report:
                from hermes_plugin_chat.attach import attach_references

                text = await attach_references(
                    self.runtime.home, self.runtime.config, text, self.view.info, self.view.warn
                )
            ended = await self.chat.run_turn(
                text, self.watcher(), attended=True, attachments=attached, later=self._reporter
            )
        except (ValueError, SessionBusy, SessionNotFound) as exc:  # one line to act on
            view.end_turn()
            view.error(str(exc))
        except Exception as exc:  # keep the chat alive; the session is consistent
            log.debug("turn failed", exc_info=True)
            view.end_turn()
            view.error(f"{type(exc).__name__}: {exc}")
        else:
            view.end_turn()
            self.show_end(ended)
        finally:
            self.questions.close()
            self.turn = None
            self.redraw()
        if self.reports:
            self.start(self.reports.pop(0))
        elif self.queued:
            self.start(self.queued.pop(0))

    def _reporter(self, session_id: str) -> Callable[[str], None]:
        """``later`` for a turn of ``session_id``: its reports go to that session only."""

        def report(text: str) -> None:
            current = self.chat.session
            if current is None or current.session_id != session_id:
                self.view.info(
                    f"background work of session {session_id} finished: /resume {session_id} "
                    "and delegate_list show what it found"
                )
                return
            if self.turn is not None:
                self.reports.append(text)
                return
            self.view.info(text.removeprefix(REPORT_PREFIX).splitlines()[0])
            self.start(text)

        return report

    def show_end(self, ended: TurnEnded) -> None:
        view = self.view
        if ended.status == "done":
            view.reply(ended.reply)
        elif ended.status == "stopped":
            shown = ended.reply if ended.reply != view.flushed else ""
            view.reply(shown, interrupted=True)
        elif ended.status == "interrupted":
            view.info("(stopped after this step for your next message)")
        elif ended.error:
            (view.warn if ended.status in ("budget", "loop") else view.error)(ended.error)
        for item in ended.attachments:
            view.info(f"sent {item.label()} ({item.mime}): {item.path}")

    async def stop_turn(self) -> None:
        """Stop the running turn and wait until it has saved what it must."""
        turn = self.turn
        if turn is None:
            return
        self.queued.clear()
        self.questions.answer(None)
        self.chat.stop()
        try:
            await asyncio.wait_for(asyncio.shield(turn), STOP_WAIT_SECONDS)
        except TimeoutError:
            self.view.warn("the turn did not stop in time; leaving anyway")

    async def shutdown(self) -> None:
        await self.stop_turn()
        await self.chat.end("cli_exit")
        session = self.chat.session
        if session is not None:  # the way back, as the last line
            self.view.info(
                f"to go on with this chat: hermes chat --resume {session.session_id} "
                "(or hermes chat --continue, for the latest)"
            )


def run_interactive(context: CommandContext, options: ChatOptions) -> int:
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        print("hermes: error: the interactive chat needs a terminal; use -q TEXT", file=sys.stderr)
        return 1
    if context.open_runtime is None:
        print("hermes: error: this Hermes offers commands no runtime", file=sys.stderr)
        return 1
    return run_until_done(_main(context, options))


async def _main(context: CommandContext, options: ChatOptions) -> int:
    import click

    assert context.open_runtime is not None  # checked by run_interactive
    try:
        async with context.open_runtime() as runtime:
            try:
                chat = await ChatSession.open(runtime, options, os.getcwd())
            except (ValueError, SessionNotFound) as exc:
                print(f"hermes: error: {exc}", file=sys.stderr)
                return 1
            view = ChatView()
            runtime.watch_background(view.info)  # "learned in the background: created skill x"
            return await Repl(runtime, chat, view, Questions(view)).run()
    except click.ClickException as exc:  # no model can be used
        print(f"hermes: error: {exc.format_message()}", file=sys.stderr)
        return 1
