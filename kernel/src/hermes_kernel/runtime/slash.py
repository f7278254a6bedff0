"""The built-in ``/NAME`` commands, written once for every front-end: the runtime serves them
through ``run_slash`` beside the plugins' commands, and a front-end shows the
:class:`~hermes_sdk.slash.SlashReply` and does what it asks (forget its session, remember a
model, show the transcript again). Each is written against the runtime contract alone.

Front-ends keep only what is theirs: leaving, attaching a file, how much to show.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any

from hermes_commons.text import one_line
from hermes_sdk.events import SlashContext
from hermes_sdk.models import REASONING_EFFORTS
from hermes_sdk.runtime import Runtime, SessionNotFound
from hermes_sdk.slash import SlashReply
from hermes_sdk.specs import SlashCommandSpec

__all__ = ["built_in", "builtin_commands", "help_lines", "model_choice"]

NO_SESSION = "this conversation starts with your next message"

Handler = Callable[[str, SlashContext], Any]


def builtin_commands(
    runtime: Runtime,
    commands: Callable[[], Mapping[str, SlashCommandSpec]],
    is_yolo: Callable[[str], bool],
    owners: Mapping[str, str] | None = None,
) -> dict[str, SlashCommandSpec]:
    """The runtime's own commands, by name; ``commands()`` is every command (for /help),
    ``owners`` the plugin of each plugin's command (shown in /help), ``is_yolo(session_id)``
    whether that session runs dangerous commands unasked."""
    built = _Builtins(runtime, commands, is_yolo, owners if owners is not None else {})

    spec = built_in
    specs = (
        spec("help", "/help", "this list", built.help, during_turn=True),
        spec("new", "/new", "start a fresh conversation (the current one is kept)", built.new),
        spec("reset", "/reset", "the same as /new", built.new),
        spec("stop", "/stop", "stop the running turn", built.stop, during_turn=True),
        spec("undo", "/undo", "take back your last message and the reply to it", built.undo),
        spec("title", "/title [TEXT]", "show or set this conversation's title", built.title),
        spec(
            "usage",
            "/usage",
            "tokens and cost of this conversation",
            built.usage,
            during_turn=True,
        ),
        spec(
            "tools",
            "/tools",
            "the tools the model has",
            built.tools,
            on_platforms=False,  # every installed tool and plugin: the owner's to see
            during_turn=True,
        ),
        spec(
            "compact",
            "/compact [FOCUS]",
            "make room: older messages become a summary (FOCUS: what to keep)",
            built.compact,
        ),
        spec(
            "model",
            "/model [PROVIDER] [MODEL]",
            "show or switch the model",
            built.model,
            on_platforms=False,  # a person on a platform does not choose what the owner pays
        ),
        spec(
            "reasoning",
            "/reasoning [EFFORT|default]",
            "show or set how hard the model thinks (none, minimal, low, medium, high, xhigh)",
            built.reasoning,
            on_platforms=False,  # thinking is paid for by the owner, as the model is
        ),
        spec(
            "yolo",
            "/yolo [on|off]",
            "run dangerous commands without asking (toggle)",
            built.yolo,
            on_platforms=False,  # never turned off by someone writing in from outside
            during_turn=True,
        ),
    )
    return {item.name: item for item in specs}


def built_in(
    name: str,
    usage: str,
    description: str,
    handler: Handler,
    *,
    on_platforms: bool = True,
    during_turn: bool = False,
) -> SlashCommandSpec:
    """A built-in command's spec: offered on chat platforms unless it says otherwise."""
    return SlashCommandSpec(
        name=name,
        usage=usage,
        description=description,
        handler=handler,
        on_platforms=on_platforms,
        during_turn=during_turn,
    )


def help_lines(
    commands: Mapping[str, SlashCommandSpec],
    *,
    on_platforms: bool,
    owners: Mapping[str, str] | None = None,
) -> list[str]:
    """One aligned line per command, a plugin's naming its plugin (``owners``: command ->
    plugin); ``on_platforms``: only those a chat platform may run."""
    owners = owners or {}
    shown = [spec for spec in commands.values() if spec.on_platforms or not on_platforms]
    width = max((len(spec.shown) for spec in shown), default=0) + 2
    lines = []
    for spec in shown:
        owner = owners.get(spec.name)
        about = f"{spec.description} (from {owner})" if owner else spec.description
        lines.append(f"{spec.shown:<{width}}{about}".rstrip())
    return lines


def model_choice(
    args: str, providers: set[str], current: str | None
) -> tuple[str | None, str | None]:
    """``/model``'s words: ``PROVIDER [MODEL]``, ``PROVIDER/[MODEL]``, or a ``MODEL`` on the
    ``current`` provider (a name with a slash, like ``vendor/model-3``, is a model unless what
    comes before the slash is a provider). Providers are matched whatever their case; more
    words are refused (ValueError)."""
    by_lower = {name.lower(): name for name in providers}
    words = args.split()
    if len(words) > 2 or (len(words) == 2 and words[0].lower() not in by_lower):
        raise ValueError("usage: /model [PROVIDER] [MODEL] (one model name, no spaces)")
    if words[0].lower() in by_lower:
        return by_lower[words[0].lower()], (words[1] if len(words) == 2 else None)
    before, slash, after = words[0].partition("/")
    if slash and before.lower() in by_lower:
        return by_lower[before.lower()], after or None
    return current, words[0]


class _Builtins:
    def __init__(
        self,
        runtime: Runtime,
        commands: Callable[[], Mapping[str, SlashCommandSpec]],
        is_yolo: Callable[[str], bool],
        owners: Mapping[str, str],
    ) -> None:
        self.runtime = runtime
        self.commands = commands
        self.is_yolo = is_yolo
        self.owners = owners

    async def help(self, _args: str, context: SlashContext) -> SlashReply:
        lines = help_lines(
            self.commands(), on_platforms=context.user_scope is not None, owners=self.owners
        )
        return SlashReply("\n".join(lines))

    async def new(self, _args: str, context: SlashContext) -> SlashReply:
        session_id = context.session_id  # not running a turn: run_slash saw to that
        if session_id is not None:
            with contextlib.suppress(SessionNotFound):  # deleted meanwhile
                await self.runtime.end_session(session_id, "new_session")
        return SlashReply("new session: your next message starts it", new_session=True)

    async def stop(self, _args: str, context: SlashContext) -> SlashReply:
        turn = self.runtime.running(context.session_id) if context.session_id else None
        if turn is None:
            return SlashReply("nothing is running")
        turn.stop()
        return SlashReply("stopping…", stopped=True)

    async def undo(self, _args: str, context: SlashContext) -> SlashReply:
        session_id = context.session_id
        if session_id is None:
            return SlashReply("nothing to undo")
        before = (await self.runtime.find_session(session_id)).message_count
        taken = await self.runtime.undo(session_id)  # SessionBusy: one line, try later
        if taken is None:
            return SlashReply("nothing to undo")
        removed = before - (await self.runtime.find_session(session_id)).message_count
        return SlashReply(
            f"removed the last exchange ({removed} messages): {one_line(taken, 80)}",
            reload=True,
            taken_back=taken,
        )

    async def title(self, args: str, context: SlashContext) -> SlashReply:
        session_id, title = context.session_id, args.strip()
        if session_id is None:
            return SlashReply(f"no title yet: {NO_SESSION}")
        if not title:
            summary = await self.runtime.find_session(session_id)
            return SlashReply(f"title: {summary.title or '(untitled)'}")
        summary = await self.runtime.set_title(session_id, title)
        return SlashReply(f"title set: {summary.title}")

    async def usage(self, _args: str, context: SlashContext) -> SlashReply:
        if context.session_id is None:
            return SlashReply(f"no usage yet: {NO_SESSION}")
        return SlashReply("\n".join(await self.runtime.usage_report(context.session_id)))

    async def tools(self, _args: str, context: SlashContext) -> SlashReply:
        lines = self.runtime.tools_report(context.session_id)
        if not lines:
            return SlashReply("no tools: the model can only talk (install a toolset plugin)")
        return SlashReply("\n".join(lines))

    async def compact(self, args: str, context: SlashContext) -> SlashReply:
        session_id = context.session_id
        if session_id is None:
            return SlashReply(f"nothing to compact: {NO_SESSION}")
        said: list[str] = []
        # SessionBusy, an unfinished turn (ValueError) or a deleted session: one line.
        why_not = await self.runtime.compact(session_id, args.strip() or None, said.append)
        if why_not is not None:
            return SlashReply("\n".join([*said, f"not compacted: {why_not}"]))
        return SlashReply("\n".join(said) or "compacted", reload=True)

    async def model(self, args: str, context: SlashContext) -> SlashReply:
        runtime, session_id = self.runtime, context.session_id
        current = (context.provider, context.model)
        providers = runtime.providers()
        if not args.strip():
            lines = [f"model: {current[0]} / {current[1]}"]
            for choice in providers:
                mark = "*" if choice.name == current[0] else " "
                needs = choice.key_env or "no key needed"
                models = ", ".join(choice.models) or choice.default_model or "-"
                lines.append(f"{mark} {choice.name}  {needs}  {models}")
            lines.append("switch: /model PROVIDER [MODEL], or /model MODEL on this provider")
            return SlashReply("\n".join(lines))
        provider, model = model_choice(args, {choice.name for choice in providers}, current[0])
        try:
            info = runtime.describe_model(provider, model)
            if session_id is not None:
                info = await runtime.use_model(session_id, provider, model)
        except ValueError as exc:
            raise ValueError(f"{exc} (still using {current[0]} / {current[1]})") from None
        text = f"now using {info.provider} / {info.model} from the next message"
        if info.notice:
            text += f"\n{info.notice}"
        return SlashReply(text, provider=info.provider, model=info.model)

    async def reasoning(self, args: str, context: SlashContext) -> SlashReply:
        word = args.strip().lower()
        if not word:
            current, source = self.runtime.reasoning_effort(context.session_id)
            shown = current or "the model's own"
            return SlashReply(
                f"reasoning effort: {shown} ({source}); set it with /reasoning "
                f"{'|'.join(REASONING_EFFORTS)}, or /reasoning default"
            )
        if context.session_id is None:
            return SlashReply(f"say /reasoning {word} again: {NO_SESSION}")
        effort = None if word in ("default", "reset") else word
        try:
            self.runtime.set_reasoning_effort(context.session_id, effort)
        except ValueError as exc:
            return SlashReply(str(exc))
        if effort is None:
            now, source = self.runtime.reasoning_effort(context.session_id)
            back = now or "the model's own"
            return SlashReply(f"reasoning effort back to {back} ({source})")
        return SlashReply(f"reasoning effort {effort} for this conversation, from the next message")

    async def yolo(self, args: str, context: SlashContext) -> SlashReply:
        word = args.strip().lower()
        if word not in {"", "on", "off"}:
            return SlashReply("usage: /yolo [on|off]")
        if not word:
            if context.session_id is None:
                return SlashReply("say /yolo on or /yolo off: this conversation has not started")
            word = "off" if self.is_yolo(context.session_id) else "on"
        on = word == "on"
        if context.session_id is not None:
            self.runtime.set_yolo(context.session_id, on)  # ValueError inside an agent's tool
        if on:
            return SlashReply(
                "YOLO on for this conversation: tools will not ask before dangerous commands",
                yolo=True,
            )
        return SlashReply("YOLO off: tools ask before dangerous commands", yolo=False)
