"""What each slash command does. A command that would change the session or the model
waits for the running turn: the user is told to let it finish or /stop it."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from hermes_kernel.chat.commands import BUILTINS, run_slash
from hermes_kernel.chat.format import Totals, one_line, printable, session_label, when
from hermes_kernel.engine.budget import spending_line
from hermes_kernel.store.errors import LeaseHeldError
from hermes_kernel.store.sessions import Session
from hermes_sdk import Kind, SlashContext

if TYPE_CHECKING:
    from hermes_kernel.chat.repl import Repl

_BY_NAME = {command.name: command for command in BUILTINS}


class SlashCommands:
    def __init__(self, repl: Repl) -> None:
        self.repl = repl
        self.agent = repl.agent
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
        provider, model = self.agent.route
        context = SlashContext(
            session_id=self.agent.session.id if self.agent.session else None,
            home=str(self.agent.app.settings.home),
            cwd=str(self.agent.cwd),
            provider=provider,
            model=model,
            config=self.agent.app.settings.raw,
            provided=self.agent.tool_env.provided,
        )
        output = await run_slash(spec, args, context)
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
        if self.repl.control is None:
            self.view.info("nothing is running")
            return
        self.repl.queued.clear()
        self.repl.control.stop()
        self.view.info("stopping…")

    # --- sessions ---------------------------------------------------------------------------

    def do_new(self, _args: str) -> None:
        self.agent.new_session()
        self.view.info("new session: your next message starts it")

    def do_reset(self, args: str) -> None:
        self.do_new(args)

    def do_sessions(self, _args: str) -> None:
        store = self.agent.store
        recent = store.sessions.recent(10)
        if not recent:
            self.view.info("no sessions yet")
            return
        openings = store.sessions.openings([session.id for session in recent])
        current = self.agent.session.id if self.agent.session else None
        table = Table(box=None, show_header=False, padding=(0, 1))
        for session in recent:
            mark = "*" if session.id == current else " "
            about = session.title or one_line(openings.get(session.id, "") or "(empty)", 48)
            table.add_row(
                mark, session.id, when(session.started_at), str(session.message_count), about
            )
        self.view.print(table)
        self.view.info("/resume ID continues one (any unique start of the id will do)")

    def do_resume(self, args: str) -> None:
        reference = args.strip()
        if not reference:
            current = self.agent.session.id if self.agent.session else None
            others = [s for s in self.agent.store.sessions.recent(2, "cli") if s.id != current]
            if not others:
                self.view.info("there is no other session to resume")
                return
            reference = others[0].id
        try:
            session = self.agent.resume(reference)
        except KeyError as exc:
            self.view.error(str(exc.args[0]))
            return
        self.show_resumed(session)

    def show_resumed(self, session: Session) -> None:
        self.view.info(
            f"resumed {session.id}: {session_label(session)} ({session.message_count} messages)"
        )
        messages = self.agent.store.messages.of_session(session.id)
        shown = [m for m in messages if m.role in ("user", "assistant") and m.content][-2:]
        for message in shown:
            if message.role == "user":
                self.view.user(one_line(message.content or "", 300))
            else:
                self.view.reply(message.content or "")

    def do_title(self, args: str) -> None:
        session = self.agent.session
        if not args:
            self.view.info(f"title: {session_label(session)}" if session else "no session yet")
            return
        if session is None:
            self.view.info("send a message first: the session starts with it")
            return
        self.agent.store.sessions.set_title(session.id, args.strip())
        self.agent.refresh()
        self.view.info(f"title set: {args.strip()}")

    def do_undo(self, _args: str) -> str | None:
        """Remove the last user message and everything after it; return its text."""
        session = self.agent.session
        seq = self.agent.store.messages.last_user_seq(session.id) if session else None
        if session is None or seq is None:
            self.view.info("nothing to undo")
            return None
        text = next(
            (m.content for m in self.agent.store.messages.of_session(session.id) if m.seq == seq),
            None,
        )
        try:
            with self.agent.store.leases.holding(session.id):
                removed = self.agent.store.messages.delete_from(session.id, seq)
        except LeaseHeldError as exc:
            self.view.error(f"{exc}: a turn is running on this session elsewhere; try later")
            return None
        self.agent.refresh()
        self.view.info(f"removed the last exchange ({removed} messages)")
        return text or ""

    def do_retry(self, _args: str) -> None:
        text = self.do_undo("")
        if text:
            self.repl.send(text)

    # --- model and usage --------------------------------------------------------------------

    async def do_model(self, args: str) -> None:
        from hermes_kernel.providers.ladder import NoProvider

        endpoints = self.agent.setup.context.endpoints
        provider, model = self.agent.route
        if not args:
            self.view.info(f"model: {provider} / {model}")
            table = Table(box=None, show_header=False, padding=(0, 2))
            for name, endpoint in sorted(endpoints.items()):
                needs = endpoint.api_key_env or "no key needed"
                models = ", ".join(endpoint.models) or endpoint.default_model or "-"
                table.add_row("*" if name == provider else " ", name, needs, models)
            self.view.print(table)
            self.view.info("switch: /model PROVIDER [MODEL], or /model MODEL on this provider")
            return
        words = args.split()
        if words[0] in endpoints:
            provider, model_name = words[0], (words[1] if len(words) > 1 else None)
        else:
            model_name = args.strip()
        try:
            setup = await self.agent.switch_model(provider, model_name)
        except NoProvider as exc:
            self.view.error(f"{exc} (still using {self.agent.route[0]} / {self.agent.route[1]})")
            return
        chosen_provider, chosen_model = self.agent.route
        self.view.info(f"now using {chosen_provider} / {chosen_model} from the next message")
        if setup.notice:
            self.view.warn(setup.notice)

    def do_usage(self, _args: str) -> None:
        session = self.agent.refresh()
        if session is None:
            self.view.info("no usage yet: this session starts with your next message")
            return
        self.view.info(
            f"session {session.id}: {session.message_count} messages, "
            f"{session.tool_call_count} tool calls"
        )
        self.view.print(Text(Totals.of(session).line()))
        spending = spending_line(self.agent.engine_settings.budget, session)
        if spending is not None:
            self.view.print(Text(spending))
        delegated = self.agent.store.sessions.children(session.id, reviews=False)
        if delegated:
            total = sum((Totals.of(child) for child in delegated), Totals())
            self.view.print(Text(f"and {len(delegated)} delegated tasks: {total.line()}"))
        rows = self.agent.store.sessions.usage_by_model(session.id)
        if len(rows) > 1 or (rows and rows[0][1] != session.model):
            for provider, model, calls, tokens_in, tokens_out, cost, unpriced in rows:
                totals = Totals(tokens_in, tokens_out, cost_usd=cost, unpriced_calls=unpriced)
                self.view.print(
                    Text(f"  {provider} / {model}: {calls} calls, {totals.line()}", style="dim")
                )

    # --- what the agent has ---------------------------------------------------------------

    def do_tools(self, _args: str) -> None:
        from hermes_kernel.tooling.listing import listing_lines, tool_rows

        agent = self.agent
        rows = tool_rows(agent.app.host, agent.memory.tools(), agent.memory.name or "")
        if not rows:
            self.view.info("no tools: the model can only talk (install a toolset plugin)")
            return
        for line in listing_lines(rows, agent.tools):
            self.view.print(Text(line))
        if len(agent.tools) < len(rows):
            self.view.info("[not given]: outside this chat's toolsets (--toolsets, agent.toolsets)")

    def _show_provided(self, kind: Kind, nothing: str) -> None:
        provided = self.agent.app.host.provided(kind)
        if not provided:
            self.view.info(nothing)
        for item in provided:
            self.view.print(Text(f"{item.spec.name}  (from {item.plugin})"))

    def do_skills(self, _args: str) -> None:
        self._show_provided(Kind.SKILL_SOURCE, "no skills plugin is installed")

    def do_memory(self, _args: str) -> None:
        self._show_provided(
            Kind.MEMORY, "no memory plugin is installed: nothing is remembered across sessions"
        )

    async def do_compact(self, args: str) -> None:
        session = self.agent.session
        if session is None:
            self.view.info("nothing to compact yet: this chat has no messages")
            return
        try:
            why_not = await self.agent.compact(args.strip() or None, self.view.info)
        except LeaseHeldError as exc:
            self.view.error(f"{exc}: a turn is running on this session elsewhere; try later")
            return
        except (ValueError, KeyError) as exc:  # an unfinished turn; a session deleted meanwhile
            self.view.error(str(exc).strip("'\""))
            return
        if why_not is not None:
            self.view.info(f"not compacted: {why_not}")

    # --- toggles ----------------------------------------------------------------------------

    def do_verbose(self, _args: str) -> None:
        self.view.verbose = not self.view.verbose
        state = "whole tool results" if self.view.verbose else "one-line previews"
        self.view.info(f"verbose {'on' if self.view.verbose else 'off'}: {state}")

    def do_yolo(self, _args: str) -> None:
        self.agent.yolo = not self.agent.yolo
        # Recorded for the approval checks of the tools; none of the installed tools asks yet.
        if self.agent.yolo:
            self.view.warn("YOLO on for this chat: tools will not ask before dangerous commands")
        else:
            self.view.info("YOLO off: tools ask before dangerous commands")
