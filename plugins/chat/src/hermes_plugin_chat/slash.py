"""What each slash command does. A command that would change the session or the model
waits for the running turn: the user is told to let it finish or /stop it."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Literal

from rich.table import Table
from rich.text import Text

from hermes_plugin_chat.commands import BUILTINS
from hermes_sdk import Kind
from hermes_sdk.media import Attachment, describe_size
from hermes_sdk.runtime import SessionBusy, SessionNotFound, SessionSummary
from hermes_sdk.text import one_line, printable, when

if TYPE_CHECKING:
    from hermes_plugin_chat.repl import Repl

_BY_NAME = {command.name: command for command in BUILTINS}


class SlashCommands:
    def __init__(self, repl: Repl) -> None:
        self.repl = repl
        self.chat = repl.chat
        self.runtime = repl.runtime
        self.view = repl.view

    async def run(self, name: str, args: str) -> bool:
        """Run ``/name args``; False means leave the chat."""
        builtin = _BY_NAME.get(name)
        if builtin is not None and builtin.fallback and name in self.repl.plugin_commands:
            builtin = None  # the plugin's own command replaces the built-in listing
        if builtin is not None:
            if self.repl.turn is not None and not builtin.during_turn:
                self.view.warn(f"/{name} waits for the turn: let it finish, or /stop it first")
                return True
            result = getattr(self, f"do_{name}")(args)
            if inspect.isawaitable(result):
                result = await result
            return result is not False
        spec = self.repl.plugin_commands.get(name)
        if spec is None:
            self.view.error(f"unknown command /{name}; /help lists them")
            return True
        session = self.chat.session
        output = await self.runtime.run_slash(name, args, session.session_id if session else None)
        if output:
            self.view.print(Text(printable(str(output))))
        return True

    # --- help and leaving -------------------------------------------------------------------

    def do_help(self, _args: str) -> None:
        table = Table(box=None, show_header=False, padding=(0, 2))
        plugins = self.repl.plugin_commands
        for command in BUILTINS:
            if not (command.fallback and command.name in plugins):
                table.add_row(command.usage, command.help)
        for name, spec in sorted(plugins.items()):
            table.add_row(f"/{name}", f"{spec.description} (plugin)")
        self.view.print(table)
        self.view.info(
            "Enter sends; Alt+Enter or a trailing \\ adds a line. Ctrl+C clears the draft or "
            "stops the turn; twice to exit. Ctrl+D exits."
        )

    def do_quit(self, _args: str) -> bool:
        return False

    def do_exit(self, _args: str) -> bool:
        return False

    def do_stop(self, _args: str) -> None:
        if self.repl.turn is None:
            self.view.info("nothing is running")
            return
        self.repl.queued.clear()
        self.chat.stop()
        self.view.info("stopping…")

    # --- sessions ---------------------------------------------------------------------------

    async def do_new(self, _args: str) -> None:
        await self.chat.new()
        self.view.info("new session: your next message starts it")

    async def do_reset(self, args: str) -> None:
        await self.do_new(args)

    async def do_sessions(self, _args: str) -> None:
        recent = await self.runtime.sessions(limit=10)
        if not recent:
            self.view.info("no sessions yet")
            return
        current = self.chat.session.session_id if self.chat.session else None
        openings = await self.runtime.openings([session.session_id for session in recent])
        table = Table(box=None, show_header=False, padding=(0, 1))
        for session in recent:
            mark = "*" if session.session_id == current else " "
            opening = openings.get(session.session_id, "")
            about = session.title or one_line(opening or "(empty)", 48)
            table.add_row(
                mark,
                session.session_id,
                when(session.started_at),
                str(session.message_count),
                about,
            )
        self.view.print(table)
        self.view.info("/resume ID continues one (any unique start of the id will do)")

    async def do_resume(self, args: str) -> None:
        reference = args.strip()
        if not reference:
            current = self.chat.session.session_id if self.chat.session else None
            recent = await self.runtime.sessions(source="cli", limit=2)
            others = [s for s in recent if s.session_id != current]
            if not others:
                self.view.info("there is no other session to resume")
                return
            reference = others[0].session_id
        try:
            session = await self.chat.resume(reference)
        except SessionNotFound as exc:
            self.view.error(str(exc))
            return
        await self.show_resumed(session)

    async def show_resumed(self, session: SessionSummary) -> None:
        self.view.info(
            f"resumed {session.session_id}: {session.title or '(untitled)'} "
            f"({session.message_count} messages)"
        )
        messages = await self.runtime.messages(session.session_id)
        shown = [m for m in messages if m.role in ("user", "assistant") and m.content][-2:]
        for message in shown:
            if message.role == "user":
                self.view.user(one_line(message.content or "", 300))
            else:
                self.view.reply(message.content or "")

    async def do_title(self, args: str) -> None:
        session = self.chat.session
        if not args:
            title = (session.title or "(untitled)") if session else None
            self.view.info(f"title: {title}" if session else "no session yet")
            return
        if session is None:
            self.view.info("send a message first: the session starts with it")
            return
        self.chat.session = await self.runtime.set_title(session.session_id, args.strip())
        self.view.info(f"title set: {args.strip()}")

    async def do_undo(self, _args: str) -> str | None:
        """Remove the last user message and everything after it; return its text."""
        session = self.chat.session
        if session is None:
            self.view.info("nothing to undo")
            return None
        before = session.message_count
        try:
            text = await self.runtime.undo(session.session_id)
        except SessionBusy as exc:
            self.view.error(f"{exc}; try later")
            return None
        if text is None:
            self.view.info("nothing to undo")
            return None
        after = await self.chat.refresh()
        removed = before - (after.message_count if after else 0)
        self.view.info(f"removed the last exchange ({removed} messages)")
        return text

    async def do_retry(self, _args: str) -> None:
        session = self.chat.session
        files: tuple[Attachment, ...] = ()
        if session is not None:  # the files of the message asked again go with it again
            said = [m for m in await self.runtime.messages(session.session_id) if m.role == "user"]
            files = said[-1].attachments if said else ()
        text = await self.do_undo("")
        if text is None:
            return
        if files:
            self.repl.attached[:0] = list(files)
        if text or files:
            self.repl.send(text)

    # --- model and usage --------------------------------------------------------------------

    async def do_model(self, args: str) -> None:
        providers = {choice.name: choice for choice in self.runtime.providers()}
        provider, model = self.chat.route
        if not args:
            self.view.info(f"model: {provider} / {model}")
            table = Table(box=None, show_header=False, padding=(0, 2))
            for name, choice in sorted(providers.items()):
                needs = choice.key_env or "no key needed"
                models = ", ".join(choice.models) or choice.default_model or "-"
                table.add_row("*" if name == provider else " ", name, needs, models)
            self.view.print(table)
            self.view.info("switch: /model PROVIDER [MODEL], or /model MODEL on this provider")
            return
        words = args.split()
        if words[0] in providers:
            provider, model_name = words[0], (words[1] if len(words) > 1 else None)
        else:
            model_name = args.strip()
        try:
            info = await self.chat.switch_model(provider, model_name)
        except ValueError as exc:
            still = self.chat.route
            self.view.error(f"{exc} (still using {still[0]} / {still[1]})")
            return
        self.view.info(f"now using {info.provider} / {info.model} from the next message")
        if info.notice:
            self.view.warn(info.notice)

    async def do_usage(self, _args: str) -> None:
        session = await self.chat.refresh()
        if session is None:
            self.view.info("no usage yet: this session starts with your next message")
            return
        lines = await self.runtime.usage_report(session.session_id)
        if lines:
            self.view.info(lines[0])
        for line in lines[1:]:
            style = "dim" if line.startswith("  ") else ""
            self.view.print(Text(line, style=style))

    # --- what the agent has ---------------------------------------------------------------

    def do_tools(self, _args: str) -> None:
        session = self.chat.session
        lines = self.runtime.tools_report(session.session_id if session else None)
        if not lines:
            self.view.info("no tools: the model can only talk (install a toolset plugin)")
            return
        for line in lines:
            (self.view.info if line.startswith("[not given]") else self._line)(line)

    def _line(self, line: str) -> None:
        self.view.print(Text(line))

    def _show_provided(self, kind: Kind, nothing: str) -> None:
        provided = self.runtime.provided(kind)
        if not provided:
            self.view.info(nothing)
        for item in provided:
            self.view.print(Text(f"{item.name}  (from {item.plugin})"))

    def do_skills(self, _args: str) -> None:
        self._show_provided(Kind.SKILL_SOURCE, "no skills plugin is installed")

    def do_memory(self, _args: str) -> None:
        self._show_provided(
            Kind.MEMORY, "no memory plugin is installed: nothing is remembered across sessions"
        )

    async def do_compact(self, args: str) -> None:
        session = self.chat.session
        if session is None:
            self.view.info("nothing to compact yet: this chat has no messages")
            return
        try:
            why_not = await self.runtime.compact(
                session.session_id, args.strip() or None, self.view.info
            )
        except SessionBusy as exc:
            self.view.error(f"{exc}; try later")
            return
        except (ValueError, SessionNotFound) as exc:  # an unfinished turn; a deleted session
            self.view.error(str(exc).strip("'\""))
            return
        await self.chat.refresh()
        if why_not is not None:
            self.view.info(f"not compacted: {why_not}")

    # --- toggles ----------------------------------------------------------------------------

    def do_image(self, args: str) -> None:
        self._attach(args, "image")

    def do_file(self, args: str) -> None:
        self._attach(args, None)

    def _attach(self, args: str, expect: Literal["image"] | None) -> None:
        from hermes_sdk.media import MediaCache, MediaRefused

        path = args.strip().strip("'\"")
        if not path:
            self.view.warn(f"/{expect or 'file'} PATH: name the file to send")
            return
        runtime = self.repl.runtime
        try:
            item = MediaCache.of_home(runtime.home, runtime.config).ingest_path(path, expect=expect)
        except MediaRefused as exc:
            self.view.error(str(exc))
            return
        self.repl.attached.append(item)
        count = len(self.repl.attached)
        self.view.info(
            f"attached {item.label()} ({item.mime}, {describe_size(item.size)}); "
            f"{count} file{'s' if count > 1 else ''} go with your next message"
        )

    def do_verbose(self, _args: str) -> None:
        self.view.verbose = not self.view.verbose
        state = "whole tool results" if self.view.verbose else "one-line previews"
        self.view.info(f"verbose {'on' if self.view.verbose else 'off'}: {state}")

    def do_yolo(self, _args: str) -> None:
        self.chat.set_yolo(not self.chat.yolo)
        if self.chat.yolo:
            self.view.warn("YOLO on for this chat: tools will not ask before dangerous commands")
        else:
            self.view.info("YOLO off: tools ask before dangerous commands")
