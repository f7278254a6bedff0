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
import concurrent.futures
import logging
import signal
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import ANSI, AnyFormattedText
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.patch_stdout import patch_stdout

from hermes_kernel.chat.agent import ChatAgent, ChatOptions
from hermes_kernel.chat.commands import BUILTINS, plugin_commands, split_command
from hermes_kernel.chat.format import Totals
from hermes_kernel.chat.loop import Leaving, run_chat
from hermes_kernel.chat.questions import (
    APPROVAL_CHOICES,
    approval_question,
    parse_approval,
    parse_choice,
)
from hermes_kernel.chat.slash import SlashCommands
from hermes_kernel.chat.view import PROMPT_MARK, ChatView
from hermes_kernel.engine.control import TurnControl
from hermes_kernel.safety.approval import Answer, ApprovalRequest
from hermes_kernel.store.errors import LeaseHeldError, StoreError
from hermes_kernel.tooling.environment import approval_policy

if TYPE_CHECKING:
    from hermes_kernel.cli.app import App

log = logging.getLogger("hermes")

EXIT_WINDOW_SECONDS = 2.0
PASTE_LINES = 6
PASTE_CHARS = 800
STOP_WAIT_SECONDS = 10.0


class ChatCompleter(Completer):
    """Slash commands at the start of the line; file paths in any word that looks like one."""

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
        if word and ("/" in word or word.startswith(("~", "."))):
            yield from self.paths.get_completions(Document(word, len(word)), event)


class _ExpandingHistory(FileHistory):
    """The history file keeps what was sent: pasted text, not its placeholder."""

    def __init__(self, filename: str, expand: Callable[[str], str]) -> None:
        super().__init__(filename)
        self.expand = expand

    def store_string(self, string: str) -> None:
        super().store_string(self.expand(string))


class Questions:
    """Questions from tools (approvals, clarify), answered at the chat's own prompt.

    A tool's worker thread blocks in :meth:`approve` or :meth:`ask`; the question is shown
    above the prompt, and the next line the user enters answers it instead of being sent.
    Ctrl+C (stopping the turn) or the timeout answers None: for an approval, deny.
    """

    def __init__(self, view: ChatView, timeout: float) -> None:
        self.view = view
        self.timeout = timeout
        self.loop: asyncio.AbstractEventLoop | None = None
        self.pending: asyncio.Future[str | None] | None = None
        self.label = ""
        self.redraw: Callable[[], None] = lambda: None

    def approve(self, request: ApprovalRequest) -> Answer | None:
        line = self._from_thread(approval_question(request), APPROVAL_CHOICES, "approve")
        return None if line is None else parse_approval(line)

    def ask(self, question: str, choices: Sequence[str]) -> str | None:
        listed = "".join(f"\n    {n}. {choice}" for n, choice in enumerate(choices, 1))
        hint = "type a number or your answer" if choices else "type your answer"
        line = self._from_thread(f"question: {question}{listed}", hint, "answer")
        return None if line is None else parse_choice(line, choices)

    def _from_thread(self, text: str, hint: str, label: str) -> str | None:
        if self.loop is None:
            return None
        future = asyncio.run_coroutine_threadsafe(self._question(text, hint, label), self.loop)
        try:
            return future.result()
        except (concurrent.futures.CancelledError, RuntimeError):
            return None

    async def _question(self, text: str, hint: str, label: str) -> str | None:
        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self.pending, self.label = answer, label
        self.view.warn(text)
        self.view.info(f"{hint} (no answer in {self.timeout:.0f} s counts as no)")
        self.redraw()
        try:
            return await asyncio.wait_for(answer, self.timeout)
        except TimeoutError:
            self.view.warn("no answer in time")
            return None
        finally:
            self.pending, self.label = None, ""
            self.redraw()

    def answer(self, line: str | None) -> bool:
        """Answer the pending question with ``line``; False if none is pending."""
        if self.pending is None or self.pending.done():
            return False
        self.pending.set_result(line)
        return True


class Repl:
    def __init__(self, agent: ChatAgent, view: ChatView, questions: Questions) -> None:
        self.agent = agent
        self.view = view
        self.questions = questions
        questions.redraw = self.redraw
        self.turn: asyncio.Task[None] | None = None
        self.control: TurnControl | None = None
        self.queued: list[str] = []
        self.last_ctrl_c = 0.0
        self.pastes: dict[str, str] = {}
        self.plugin_commands, warnings = plugin_commands(agent.app.host)
        self.startup_warnings = warnings
        self.slash = SlashCommands(self)
        names = {command.name: command.help for command in BUILTINS}
        names.update({name: spec.description for name, spec in self.plugin_commands.items()})
        self.prompt: PromptSession[str] = PromptSession(
            message=self.message,
            history=_ExpandingHistory(
                str(agent.app.settings.home / "chat_history"), self.expand_pastes
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
        provider, model = self.agent.route
        session = self.agent.session
        where = session.id if session else "new session"
        parts = [f" {provider} / {model}", where, f"cost {Totals.of(session).cost_text()}"]
        if self.agent.yolo:
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
            if self.turn is not None and self.control is not None:
                self.queued.clear()
                self.questions.answer(None)
                self.control.stop()
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
            lines = data.count("\n") + 1
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
        from hermes_kernel._version import __version__

        provider, model = self.agent.route
        self.view.info(
            f"Hermes {__version__} · {provider} / {model} · /help for commands · Ctrl+D quits"
        )
        if self.agent.setup.notice:
            self.view.warn(self.agent.setup.notice)
        for warning in [*self.agent.warnings, *self.startup_warnings]:
            self.view.warn(f"warning: {warning}")
        if self.agent.session is not None:
            self.slash.show_resumed(self.agent.session)

    def _terminated(self) -> None:
        """SIGTERM: stop the turn (it is saved) and leave as if Ctrl+D was pressed.
        (Ctrl+C is a key here, the prompt's own; a signal's SIGINT stays the prompt's too.)"""
        if self.control is not None:
            self.control.stop()
        self.agent.app.host.hooks.stop()
        if self.prompt.app.is_running:
            self.prompt.app.exit(exception=EOFError())

    async def run(self) -> int:
        self.questions.loop = asyncio.get_running_loop()
        leaving = Leaving(self._terminated, signals=(signal.SIGTERM,))
        leaving.install(self.questions.loop)
        try:
            await self._serve()
        finally:
            leaving.remove()
        return leaving.code or 0

    async def _serve(self) -> None:
        with patch_stdout(raw=True):
            self.banner()
            while True:
                try:
                    line = await self.prompt.prompt_async()
                except EOFError:
                    break
                except KeyboardInterrupt:  # only if our Ctrl+C binding was bypassed
                    continue
                text = self.expand_pastes(line)
                if self.questions.answer(text):
                    self.view.user(line)
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
            if self.control is not None:
                self.control.interrupt()
            self.view.info("queued: it goes next, once the current step ends (Ctrl+C stops now)")
            return
        self.start(text)

    def start(self, text: str) -> None:
        self.control = TurnControl()
        self.view.start_turn()
        self.turn = asyncio.ensure_future(self._turn(text, self.control))

    async def _turn(self, text: str, control: TurnControl) -> None:
        view = self.view

        def on_text(chunk: str) -> None:
            view.stream(chunk)
            self.redraw()

        def on_notice(notice: str) -> None:
            view.discard_streamed()  # a retry or cut-off: the text so far is not the reply
            view.warn(notice)

        try:
            result = await self.agent.turn(text, control, on_text, on_notice)
        except LeaseHeldError as exc:
            view.end_turn()
            view.error(f"{exc} (is this session open in another hermes?)")
        except StoreError as exc:
            view.end_turn()
            view.error(str(exc))
        except KeyError as exc:  # the session was deleted meanwhile (hermes sessions delete)
            view.end_turn()
            self.agent.session = None
            view.error(f"{exc.args[0]}; your next message starts a new session")
        except Exception as exc:  # keep the chat alive; the session is consistent
            log.debug("turn failed", exc_info=True)
            view.end_turn()
            view.error(f"{type(exc).__name__}: {exc}")
        else:
            view.end_turn()
            if result.status == "done":
                view.reply(result.text)
            elif result.status == "stopped":
                shown = result.text if result.text != view.flushed else ""
                view.reply(shown, interrupted=True)
            elif result.status == "interrupted":
                view.info("(stopped after this step for your next message)")
            elif result.error:
                (view.warn if result.status in ("budget", "loop") else view.error)(result.error)
        finally:
            self.turn = None
            self.control = None
            self.redraw()
        if self.queued:
            self.start(self.queued.pop(0))

    async def stop_turn(self) -> None:
        """Stop the running turn and wait until it has saved what it must."""
        turn = self.turn
        if turn is None:
            return
        self.queued.clear()
        self.questions.answer(None)
        if self.control is not None:
            self.control.stop()
        try:
            await asyncio.wait_for(asyncio.shield(turn), STOP_WAIT_SECONDS)
        except TimeoutError:
            self.view.warn("the turn did not stop in time; leaving anyway")

    async def shutdown(self) -> None:
        await self.stop_turn()
        await self.agent.aclose()


def run_interactive(app: App, options: ChatOptions) -> int:
    from hermes_kernel.providers.ladder import NoProvider

    if not sys.stdin.isatty() or not sys.stdout.isatty():
        print("hermes: error: the interactive chat needs a terminal; use -q TEXT", file=sys.stderr)
        return 1
    view = ChatView()
    timeout = approval_policy(app.settings.raw).timeout_seconds
    questions = Questions(view, timeout)
    try:
        agent = ChatAgent(
            app,
            options,
            view,
            approver=questions.approve,
            ask=questions.ask,
            on_learned=view.info,  # "learned in the background: created skill x"
        )
    except (NoProvider, KeyError, StoreError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) else str(exc)
        print(f"hermes: error: {message}", file=sys.stderr)
        return 1
    return run_chat(Repl(agent, view, questions).run())
