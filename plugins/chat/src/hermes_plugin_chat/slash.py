"""The slash commands: the terminal's own (``commands.BUILTINS``) run here; every other one
is the runtime's (built-in or a plugin's), run through ``Runtime.run_slash`` and shown, its
reply acted on (a new session, another model). A command that would change the session
waits for the running turn: the user is told to let it finish or /stop it."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Literal

from rich.table import Table
from rich.text import Text

from hermes_commons.text import one_line, printable, when
from hermes_plugin_chat.commands import BUILTINS
from hermes_sdk import Kind
from hermes_sdk.media import Attachment, describe_size
from hermes_sdk.runtime import ModelInfo, SessionBusy, SessionNotFound, SessionSummary
from hermes_sdk.slash import SlashReply, opens_session

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
        if builtin is not None and builtin.fallback and name in self.repl.commands:
            builtin = None  # the plugin's own command replaces the built-in listing
        if builtin is not None:
            if self.repl.turn is not None and not builtin.during_turn:
                self.view.warn(f"/{name} waits for the turn: let it finish, or /stop it first")
                return True
            result = getattr(self, f"do_{name}")(args)
            if inspect.isawaitable(result):
                result = await result
            return result is not False
        spec = self.repl.commands.get(name)
        if spec is None:
            self.view.error(f"unknown command /{name}; /help lists them")
            return True
        if self.repl.turn is not None and not spec.during_turn:
            self.view.warn(f"/{name} waits for the turn: let it finish, or /stop it first")
            return True
        if name == "stop":
            self.repl.queued.clear()  # what was typed during the turn goes with it
        if name == "yolo" and not args.strip():  # the toggle starts from this chat's state
            args = "off" if self.chat.yolo else "on"
        reply = await self.runtime_command(name, args)
        if reply is not None and name == "help":
            self.show_local_help()
        return True

    async def runtime_command(self, name: str, args: str) -> SlashReply | None:
        """Run one of the runtime's commands, show its reply and do what it asks; None if
        it failed (said as one line)."""
        if name == "compact":
            self.view.info("compacting…")
        if opens_session(name, args):
            await self.chat.ensure_session()  # a goal, a personality, a task from the start
        session = self.chat.session
        try:
            reply = await self.runtime.run_slash(
                name,
                args,
                session.session_id if session else None,
                # No session yet: the model this chat's first message will use.
                route=None if session else (self.chat.provider, self.chat.model),
                notify=self.view.info,
            )
        except SessionBusy as exc:
            self.view.error(f"{exc}; try later")
            return None
        except (ValueError, SessionNotFound) as exc:  # an unusable model; a deleted session
            self.view.error(str(exc).strip("'\""))
            return None
        if reply.new_session:
            self.chat.forget()
        if reply.provider is not None and reply.model is not None:
            self.chat.chose_model(ModelInfo(provider=reply.provider, model=reply.model))
        if reply.yolo is not None:
            self.chat.yolo = reply.yolo
        if reply.reload or session is not None:
            await self.chat.refresh()  # totals, title, messages after the command
        self.show(reply)
        if reply.session_id is not None:
            await self.show_resumed(await self.chat.resume(reply.session_id))
        if reply.send is not None:
            self.repl.queue(reply.send)
        return reply

    def show(self, reply: SlashReply) -> None:
        lines = reply.text.splitlines()
        if reply.yolo:
            self.view.warn(reply.text)
            return
        for index, line in enumerate(lines):
            if index == 0 and not line.startswith(" "):
                self.view.info(line)
            else:
                self.view.print(Text(printable(line), style="dim" if line.startswith("  ") else ""))

    # --- help and leaving -------------------------------------------------------------------

    def show_local_help(self) -> None:
        table = Table(box=None, show_header=False, padding=(0, 2))
        commands = self.repl.commands
        for command in BUILTINS:
            if not (command.fallback and command.name in commands):
                table.add_row(command.usage, command.help)
        self.view.info("in this terminal:")
        self.view.print(table)
        self.view.info(
            "Enter sends; Alt+Enter or a trailing \\ adds a line. Ctrl+C clears the draft or "
            "stops the turn; twice to exit. Ctrl+D exits."
        )

    def do_quit(self, _args: str) -> bool:
        return False

    def do_exit(self, _args: str) -> bool:
        return False

    # --- sessions ---------------------------------------------------------------------------

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

    async def do_retry(self, _args: str) -> None:
        session = self.chat.session
        files: tuple[Attachment, ...] = ()
        if session is not None:  # the files of the message asked again go with it again
            said = [m for m in await self.runtime.messages(session.session_id) if m.role == "user"]
            files = said[-1].attachments if said else ()
        reply = await self.runtime_command("undo", "")
        if reply is None or reply.taken_back is None:
            return
        if files:
            self.repl.attached[:0] = list(files)
        if reply.taken_back or files:
            self.repl.send(reply.taken_back)

    # --- what the agent has ---------------------------------------------------------------

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

    async def do_history(self, _args: str) -> None:
        from hermes_sdk.runtime import exchanges

        session = self.chat.session
        if session is None:
            self.view.info("nothing said yet")
            return
        for number, (said, answered, _end) in enumerate(
            exchanges(await self.runtime.messages(session.session_id)), 1
        ):
            self.view.print(Text(f"{number:>3} {one_line(said, 100)}", style="bold cyan"))
            if answered:
                self.view.print(Text(f"    {one_line(answered, 100)}", style="dim"))
        self.view.info("/branch N goes on in a copy that ends with exchange N")

    async def do_save(self, args: str) -> None:
        from hermes_plugin_chat.transcript import save_markdown

        session = self.chat.session
        if session is None:
            self.view.info("nothing to save yet")
            return
        messages = await self.runtime.messages(session.session_id)
        try:
            path = save_markdown(session, messages, args.strip().strip("'\"") or None)
        except OSError as exc:
            self.view.error(f"not saved: {exc.strerror or exc}")
            return
        self.view.info(f"saved {len(messages)} messages to {path}")

    async def do_copy(self, _args: str) -> None:
        from hermes_plugin_chat.transcript import copy_to_clipboard, osc52

        session = self.chat.session
        messages = await self.runtime.messages(session.session_id) if session else []
        replies = [m.content for m in messages if m.role == "assistant" and m.content]
        if not replies:
            self.view.info("no reply to copy yet")
            return
        import asyncio

        self.view.write(osc52(replies[-1]))
        # A clipboard tool may take seconds: off the loop, so a running turn streams on.
        said = await asyncio.to_thread(copy_to_clipboard, replies[-1])
        self.view.info(said)

    async def do_clear(self, _args: str) -> None:
        self.view.write("\x1b[2J\x1b[3J\x1b[H")  # the screen and its scrollback
        await self.runtime_command("new", "")

    def do_verbose(self, _args: str) -> None:
        self.view.verbose = not self.view.verbose
        state = "whole tool results" if self.view.verbose else "one-line previews"
        self.view.info(f"verbose {'on' if self.view.verbose else 'off'}: {state}")
