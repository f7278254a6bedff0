"""The built-in commands that drive turns and sessions beyond one message: ``/steer``,
``/queue``, ``/background``, ``/goal``, ``/branch`` and ``/personality``. Written once, on
the runtime, for every front-end (the terminal chat, the TUI, chat apps, the web UI)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from hermes_commons.text import one_line
from hermes_kernel.config.defaults import AGENT_GOAL_TURNS
from hermes_kernel.runtime.background import Background
from hermes_kernel.runtime.goals import Goals
from hermes_kernel.runtime.personalities import personalities
from hermes_kernel.runtime.slash import NO_SESSION, built_in
from hermes_sdk.events import SlashContext
from hermes_sdk.runtime import RuntimeTurn, SessionMessage, SessionSummary, exchanges
from hermes_sdk.slash import SlashReply
from hermes_sdk.specs import SlashCommandSpec


class TurnHost(Protocol):
    """What these commands use of the kernel's runtime: a few calls of the contract, and
    its goals, background tasks and sessions' personalities."""

    personas: dict[str, tuple[str, str]]

    @property
    def goals(self) -> Goals: ...

    @property
    def background(self) -> Background: ...

    config: Mapping[str, Any]

    def running(self, session_id: str) -> RuntimeTurn | None: ...

    async def find_session(self, reference: str) -> SessionSummary: ...

    async def messages(self, session_id: str) -> list[SessionMessage]: ...

    async def branch_session(
        self, session_id: str, through_seq: int | None = None, *, title: str | None = None
    ) -> SessionSummary: ...


__all__ = ["turn_commands"]

GOAL_WORDS = ("status", "pause", "resume", "clear")


def turn_commands(runtime: TurnHost) -> list[SlashCommandSpec]:
    built = _TurnCommands(runtime)
    spec = built_in

    return [
        spec(
            "steer",
            "/steer TEXT",
            "tell the running turn something without stopping it (before its next model call)",
            built.steer,
            during_turn=True,
        ),
        spec(
            "queue",
            "/queue TEXT",
            "send this after the running turn ends, without interrupting it",
            built.queue,
            during_turn=True,
        ),
        spec(
            "background",
            "/background TEXT",
            "run this as a task in a session of its own; you are told when it is done",
            built.background,
            during_turn=True,
        ),
        spec("bg", "/bg TEXT", "the same as /background", built.background, during_turn=True),
        spec(
            "goal",
            "/goal [TEXT|status|pause|resume|clear]",
            "a goal the agent keeps working towards, turn after turn, until it is met",
            built.goal,
            during_turn=True,
        ),
        spec(
            "branch",
            "/branch [N] [TITLE]",
            "go on in a copy of this conversation (up to exchange N); the original is kept",
            built.branch,
        ),
        spec("fork", "/fork [N] [TITLE]", "the same as /branch", built.branch),
        spec(
            "personality",
            "/personality [NAME|none]",
            "show or choose how the agent talks in this conversation",
            built.personality,
        ),
    ]


class _TurnCommands:
    def __init__(self, runtime: TurnHost) -> None:
        self.runtime = runtime

    async def steer(self, args: str, context: SlashContext) -> SlashReply:
        text = args.strip()
        if not text:
            return SlashReply("usage: /steer TEXT (what the running turn should take into account)")
        turn = self.runtime.running(context.session_id) if context.session_id else None
        if turn is None or not turn.steer(text):
            return SlashReply("nothing is running: sending it as your message", send=text)
        return SlashReply(f"steering: {one_line(text, 80)} (taken before the next model call)")

    async def queue(self, args: str, context: SlashContext) -> SlashReply:
        text = args.strip()
        if not text:
            return SlashReply("usage: /queue TEXT (sent once the running turn ends)")
        running = context.session_id is not None and self.runtime.running(context.session_id)
        said = "queued: it goes once the running turn ends" if running else "sending it now"
        return SlashReply(said, send=text)

    async def background(self, args: str, context: SlashContext) -> SlashReply:
        text = args.strip()
        if not text:
            return SlashReply("usage: /background TEXT (a task to run while you chat on)")
        runtime = self.runtime
        if context.session_id is None:
            # A task gets its conversation's tools, the ones its front-end gave it:
            # without a conversation, it would get every tool.
            return SlashReply("say something first: /background works in a conversation")
        parent = await runtime.find_session(context.session_id)
        session = await runtime.background.start(
            text, parent, context.notify, user_scope=context.user_scope
        )
        return SlashReply(
            f"started in the background as session {session.session_id}; "
            "you will be told when it is done"
        )

    async def goal(self, args: str, context: SlashContext) -> SlashReply:
        goals, session_id = self.runtime.goals, context.session_id
        word = args.strip()
        current = goals.get(session_id)
        if word.lower() in ("", "status"):
            if current is None:
                return SlashReply("no goal; set one with /goal TEXT")
            return SlashReply(current.status())
        if word.lower() in GOAL_WORDS:
            return self._goal_word(word.lower(), session_id)
        if session_id is None:
            return SlashReply(f"say /goal again: {NO_SESSION}")
        agent = self.runtime.config.get("agent") or {}
        budget = int(agent.get("goal_turns", AGENT_GOAL_TURNS))
        goal = goals.set(session_id, word, budget)
        running = self.runtime.running(session_id) is not None
        when = "once the running turn ends" if running else "now"
        return SlashReply(
            f"goal set ({goal.budget}-turn budget), starting {when}: {one_line(word, 100)}",
            send=word,
        )

    def _goal_word(self, word: str, session_id: str | None) -> SlashReply:
        goals = self.runtime.goals
        current = goals.get(session_id)
        if current is None or session_id is None:
            return SlashReply("no goal; set one with /goal TEXT")
        if word == "clear":
            goals.clear(session_id)
            return SlashReply("goal cleared")
        if word == "pause":
            current.paused = True
            return SlashReply(f"goal paused after {current.used} turns; /goal resume goes on")
        current.paused, current.used, current.started = False, 0, False
        return SlashReply(
            f"goal resumed ({current.budget}-turn budget): {one_line(current.text, 100)}",
            send=f"Go on working towards the goal: {current.text}",
        )

    async def branch(self, args: str, context: SlashContext) -> SlashReply:
        session_id = context.session_id
        if session_id is None:
            return SlashReply(f"nothing to branch yet: {NO_SESSION}")
        words = args.split(maxsplit=1)
        through: int | None = None
        title = args.strip() or None
        if words and words[0].isdigit():
            ends = [end for _, _, end in exchanges(await self.runtime.messages(session_id))]
            number = int(words[0])
            if not 1 <= number <= len(ends):
                return SlashReply(
                    f"there is no exchange {number}: this conversation has {len(ends)} "
                    "(/history numbers them)"
                )
            through = ends[number - 1]
            title = words[1].strip() if len(words) > 1 else None
        branch = await self.runtime.branch_session(session_id, through, title=title)
        kept = f"up to exchange {words[0]}" if through is not None else "all of it"
        return SlashReply(
            f"branched into {branch.session_id} ({kept}; {branch.message_count} messages): "
            f"you go on there; /resume {session_id} goes back",
            session_id=branch.session_id,
        )

    async def personality(self, args: str, context: SlashContext) -> SlashReply:
        runtime, session_id = self.runtime, context.session_id
        known = personalities(runtime.config)
        name = args.strip().lower()
        if not name:
            current = runtime.personas.get(session_id or "")
            lines = [f"personality: {current[0] if current else 'none'}"]
            lines += [f"  {key}: {one_line(text, 70)}" for key, text in sorted(known.items())]
            lines.append("choose: /personality NAME, or /personality none")
            return SlashReply("\n".join(lines))
        if session_id is None:
            return SlashReply(f"say /personality {name} again: {NO_SESSION}")
        if name in ("none", "default", "off"):
            runtime.personas.pop(session_id, None)
            return SlashReply("personality: none, from the next message")
        if name not in known:
            from hermes_commons.sections import closest

            meant = closest(name, sorted(known))
            guess = f" (did you mean {meant!r}?)" if meant else ""
            return SlashReply(f"no personality {name!r}{guess}; /personality lists them")
        runtime.personas[session_id] = (name, known[name])
        return SlashReply(f"personality {name} for this conversation, from the next message")
