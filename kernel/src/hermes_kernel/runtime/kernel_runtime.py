"""The kernel's :class:`~hermes_sdk.runtime.Runtime`: a front-end's sessions and turns on the
same agent (:class:`~hermes_kernel.runtime.agent.Agent`: tools, store, models) that the CLI
front-ends use.

Sessions opened with other toolsets or another model get an engine of their own, built once
per combination and shared by the sessions that ask for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_kernel.engine.budget import merged
from hermes_kernel.engine.run import TurnResult
from hermes_kernel.engine.turn import TurnEngine
from hermes_kernel.providers.routing import ModelSetup, NoModel, model_setup
from hermes_kernel.runtime.administration_facet import AdministrationFacet
from hermes_kernel.runtime.agent import Agent, choose_tools
from hermes_kernel.runtime.history import StoreHistory, summary
from hermes_kernel.runtime.questions import TurnQuestions
from hermes_kernel.runtime.tool_events import TurnToolEvents, turn_usage
from hermes_kernel.runtime.turns import KernelTurn
from hermes_kernel.safety.environment import INSIDE_AGENT
from hermes_kernel.store.errors import LeaseHeldError
from hermes_kernel.store.plugin_store import PluginStore, migrate_schema
from hermes_kernel.store.sessions import Session
from hermes_sdk import (
    DeliverySpec,
    Kind,
    SlashCommandSpec,
    SlashContext,
    StatusLine,
)
from hermes_sdk.delivery import Deliverer, DeliveryContext
from hermes_sdk.media import Attachment
from hermes_sdk.models import REASONING_EFFORTS
from hermes_sdk.runtime import (
    RESERVED_SLASH_NAMES,
    Budget,
    Delivery,
    DeliveryUnavailable,
    InterimReply,
    ModelChoice,
    ModelInfo,
    Notice,
    PendingWrite,
    PluginState,
    ProvidedName,
    ProviderChoice,
    Runtime,
    RuntimeTurn,
    SessionBusy,
    SessionNotFound,
    SessionOptions,
    SessionSummary,
    TextDelta,
    TurnEnded,
)
from hermes_sdk.slash import SlashReply
from hermes_sdk.storage import Store, StoreSchema

if TYPE_CHECKING:
    from hermes_kernel.runtime.background import Background
    from hermes_kernel.runtime.follow_ups import FollowUps
    from hermes_kernel.runtime.goals import Goals
    from hermes_kernel.runtime.pending import PendingQueues

__all__ = ["KernelRuntime", "tools_runtime"]

log = logging.getLogger("hermes.runtime")


_EngineKey = tuple[
    str | None, str | None, tuple[str, ...] | None, tuple[str, ...], int | None, Budget | None
]


class KernelRuntime(StoreHistory, AdministrationFacet, Runtime):
    """Built on an agent whose tool environment asks through ``questions``; its stored
    sessions are the agent's store (:class:`StoreHistory`)."""

    def __init__(
        self,
        agent: Agent,
        questions: TurnQuestions,
        *,
        question_timeout: float = 120.0,
        on_open: Callable[[str], None] | None = None,
        deliverer: Deliverer | None = None,
    ) -> None:
        super().__init__(agent.store, str(agent.app.settings.home), agent.app.settings.raw)
        self.agent = agent
        self._on_open = on_open
        """Told each session this runtime opens (a tool's runtime marks them: nobody is
        there to approve their commands)."""
        self.app = agent.app
        self.questions = questions
        self.question_timeout = question_timeout
        self._deliverer: Deliverer | None = deliverer
        """Where ``deliver`` goes: the front-end's own, else built on first use."""
        self._stores: dict[str, Store] = {}
        # Tool events of this runtime's turns go to them; the others to whoever watched
        # before (the chat's screen, another runtime), so two runtimes share one agent.
        agent.observer.events = TurnToolEvents(questions, agent.observer.events)
        # The agent's own engine serves the default key; it is replaced once the tool
        # sources (servers a plugin reaches) have started, so it is looked up, never kept here.
        self._engines: dict[_EngineKey, TurnEngine] = {}
        self._setups: list[ModelSetup] = []
        self._described: dict[tuple[str | None, str | None], ModelSetup] = {}
        """Setups made only to describe a model, by (provider, model)."""
        self._bound: dict[str, TurnEngine] = {}
        """Session id -> the engine its turns run on (sessions opened or resumed here)."""
        self._efforts: dict[str, str] = {}
        """Sessions' own reasoning efforts (``/reasoning``), for their next turns."""
        self._taken_up: set[str] = set()
        """Sessions a front-end resumed here (a background task's, read while it ran, is
        not ended under the user when the task finishes)."""
        self._narrowed: dict[str, tuple[tuple[str, ...] | None, tuple[str, ...]]] = {}
        """The tool narrowing each session was last bound with (``resume_session``'s)."""
        self._turn_routes: dict[str, tuple[str, str | None, str, float]] = {}
        """Session id (or :func:`_unopened` for a person's next session) -> the endpoint
        and model of its next turn only, the text that turn is for and when it was asked
        (``SlashReply.turn_provider`` and ``send``): a turn whose message holds that text
        (a front-end may add to it: a file's words, a fence) within
        :data:`TURN_ROUTE_SECONDS` takes it; another message does not."""
        self._unreviewed: set[str] = set()
        """Sessions opened with background_review False."""
        self._slash_loaded: tuple[dict[str, SlashCommandSpec], list[str]] | None = None
        self._pending_notices: list[str] = []
        """Tool sources that failed to start: told to the next turn that starts."""
        self._pending_queues: PendingQueues | None = None  # made on first use
        self._goals: Goals | None = None
        self._follow_ups: FollowUps | None = None
        self._background: Background | None = None
        # Goals, follow-ups and background tasks are made on first use: a one-shot that
        # uses none of them never imports them (start-up time).
        self.personas: dict[str, tuple[str, str]] = {}
        """Sessions' personalities (``/personality``): (name, instructions)."""

    # --- sessions -------------------------------------------------------------------------

    def _built(self, options: SessionOptions) -> tuple[_EngineKey, TurnEngine | None]:
        """The engine key of ``options``, and its engine if it is built already."""
        key: _EngineKey = (
            options.provider,
            options.model,
            options.toolsets,
            tuple(sorted(options.exclude_tools)),
            options.max_iterations,
            options.budget,
        )
        if key == (None, None, None, (), None, None):
            return key, self.agent.engine
        return key, self._engines.get(key)

    def _engine(self, options: SessionOptions) -> TurnEngine:
        key, engine = self._built(options)
        if engine is not None:
            return engine
        agent = self.agent
        if options.provider is None and options.model is None:
            setup = agent.setup
        else:
            try:
                setup = model_setup(
                    self.app.host, self.app.settings, options.provider, options.model
                )
            except NoModel as exc:
                raise ValueError(str(exc)) from None
            self._setups.append(setup)
        tools = agent.tools
        if options.toolsets is not None:
            tools, warnings = choose_tools(agent.all_tools(), options.toolsets)
            if warnings:
                raise ValueError("; ".join(warnings))
        if options.exclude_tools:
            tools = {
                name: spec for name, spec in tools.items() if name not in options.exclude_tools
            }
        settings = agent.engine_settings
        if options.max_iterations is not None:
            if options.max_iterations < 1:
                raise ValueError("max_iterations must be at least 1")
            settings = replace(settings, max_iterations=options.max_iterations)
        if options.budget is not None:
            settings = replace(settings, budget=merged(settings.budget, options.budget))
        engine = self._engines[key] = agent.build_engine(setup, tools, settings)
        return engine

    async def _start_tool_sources(self) -> None:
        """Start the plugins' tool sources once, before the first engine; what failed is
        told to the next turn, as a notice."""
        self._pending_notices += await self.agent.ensure_tools()

    async def open_session(self, options: SessionOptions) -> SessionSummary:
        await self._start_tool_sources()
        # An engine built already needs no worker thread (a long-running front-end opens
        # sessions all day, and a hop queues behind whatever the threads are doing).
        _key, built = self._built(options)
        engine = built if built is not None else await asyncio.to_thread(self._engine, options)
        opened = await self._open_on(engine, options)
        narrowing = _narrowing(options)
        if narrowing is not None:
            self._narrowed[opened.session_id] = narrowing
        next_turn = self._turn_routes.pop(_unopened(options.user_scope), None)
        if next_turn is not None:  # a command asked it before the session was opened
            self._turn_routes[opened.session_id] = next_turn
        return opened

    async def open_like(self, original_id: str, options: SessionOptions) -> SessionSummary:
        """A session for work done from ``original_id`` (a branch, a background task): on
        the original's engine, so it has the tools and model the original has here, never
        more (a chat whose tools a front-end narrowed stays narrowed)."""
        engine = self._bound.get(original_id)
        if engine is None:
            # Not open here: which tools its front-end gives it is not known, and a copy
            # must never get more.
            raise ValueError(
                "this conversation is not open here yet: send a message in it first, then try again"
            )
        await self._start_tool_sources()
        opened = await self._open_on(engine, options)
        narrowing = self._narrowed.get(original_id)
        if narrowing is not None:  # /model on the copy keeps the original's tools too
            self._narrowed[opened.session_id] = narrowing
        return opened

    async def _open_on(self, engine: TurnEngine, options: SessionOptions) -> SessionSummary:
        cwd = Path(options.cwd).expanduser() if options.cwd else self.agent.cwd
        session = await engine.open_session(
            options.source,
            cwd,
            user_scope=options.user_scope,
            parent_session_id=options.parent_session_id,
            preload=options.preload,
        )
        if options.title:
            await self.store.db.run(self.store.sessions.set_title, session.id, options.title)
            titled = await self.store.db.run(self.store.sessions.get, session.id)
            session = titled or session
        self._bound[session.id] = engine
        if self._on_open is not None:
            self._on_open(session.id)
        if not options.background_review:
            self._unreviewed.add(session.id)
        if options.yolo:
            self.set_yolo(session.id, True)
        return summary(session)

    async def resume_session(
        self, session_id: str, options: SessionOptions | None = None
    ) -> SessionSummary:
        session = await self.store.db.run(self.store.sessions.get, session_id)
        if session is None:
            raise SessionNotFound(f"no session {session_id!r}")
        narrowing = _narrowing(options)
        # Bound here already with another narrowing (a branch or a background task opened
        # on the original's engine, a session the front-end narrows now): bound again, so
        # the tools the front-end gives are the ones it has.
        self._taken_up.add(session_id)
        if session_id not in self._bound or (
            narrowing is not None and self._narrowed.get(session_id) != narrowing
        ):
            await self._start_tool_sources()
            self._bound[session_id] = await asyncio.to_thread(self._engine_of, session, options)
            if narrowing is not None:
                self._narrowed[session_id] = narrowing
        return summary(session)

    def _engine_of(self, session: Session, given: SessionOptions | None = None) -> TurnEngine:
        """A stored session goes on with the model it was opened with, if that model can
        still be used; else with the configured one. The tools ``given`` names hold either
        way (a failure to apply them raises: a narrowed session is never widened)."""
        toolsets = given.toolsets if given is not None else None
        excluded = given.exclude_tools if given is not None else ()
        narrowed = toolsets is not None or bool(excluded)
        primary = self.agent.setup.routes[0]
        same_model = (session.provider, session.model) in {
            (None, None),
            (primary.name, primary.model),
        }
        if same_model and not narrowed:
            return self.agent.engine
        options = SessionOptions(
            source=session.source,
            provider=None if same_model else session.provider,
            model=None if same_model else session.model,
            toolsets=toolsets,
            exclude_tools=excluded,
        )
        try:
            return self._engine(options)
        except ValueError as exc:
            if same_model:
                raise
            log.info("session %s goes on with the configured model: %s", session.id, exc)
            if not narrowed:
                return self.agent.engine
            return self._engine(replace(options, provider=None, model=None))

    async def end_session(self, session_id: str, reason: str = "ended") -> None:
        engine = self._bound.pop(session_id, self.agent.engine)
        self._narrowed.pop(session_id, None)
        self._taken_up.discard(session_id)
        self._efforts.pop(session_id, None)
        if self._goals is not None:
            self._goals.clear(session_id)
        self.personas.pop(session_id, None)
        await asyncio.to_thread(self.agent.tool_env.end_session, session_id)
        try:
            await asyncio.to_thread(engine.end_session, session_id, reason)
        except SessionNotFound:
            raise SessionNotFound(f"no session {session_id!r}") from None

    # --- stored sessions (StoreHistory), as this runtime's engines see them -------------

    def budget(self, session_id: str) -> Budget:
        """The limits of the engine the session's turns run on (its own, if it was opened
        with a budget), else config.yaml's."""
        return self._bound.get(session_id, self.agent.engine).settings.budget

    # --- turns ----------------------------------------------------------------------------

    def start_turn(
        self,
        session_id: str,
        text: str,
        *,
        answers_questions: bool = False,
        attachments: Sequence[Attachment] = (),
        later: Callable[[str], None] | None = None,
    ) -> RuntimeTurn:
        engine = self._bound.get(session_id)
        if engine is None:
            raise SessionNotFound(
                f"no session {session_id!r} here; open it with open_session or resume_session"
            )
        if session_id in self.questions.turns:
            raise SessionBusy(f"session {session_id} is running a turn; wait for it or stop it")
        self.agent.loop = asyncio.get_running_loop()
        turn = KernelTurn(
            session_id,
            loop=self.agent.loop,
            answers_questions=answers_questions,
            question_timeout=self.question_timeout,
        )
        turn.control.reasoning_effort = self._efforts.get(session_id)
        turn.control.later = later
        persona = self.personas.get(session_id)
        turn.control.overlay = persona[1] if persona is not None else None
        self.questions.turns[session_id] = turn
        for line in self._pending_notices:
            turn.emit(Notice(text=line))
        self._pending_notices.clear()
        route = self._turn_route(session_id, text)
        turn.task = asyncio.ensure_future(self._run(engine, turn, text, tuple(attachments), route))
        return turn

    def running(self, session_id: str) -> RuntimeTurn | None:
        return self.questions.turns.get(session_id)

    async def _run(
        self,
        engine: TurnEngine,
        turn: KernelTurn,
        text: str,
        attachments: tuple[Attachment, ...] = (),
        route: tuple[str, str | None] | None = None,
    ) -> None:
        """``route``: this turn's own endpoint and model, on an engine built for it."""
        db, sessions = self.store.db, self.store.sessions
        session_id = turn.session_id
        before: Session | None = None
        result: TurnResult | None = None
        calls = 0
        sent: list[Attachment] = []
        try:
            before = await db.run(sessions.get, session_id)
            if route is not None:
                engine = await self._engine_like(session_id, *route)
            if self._goals is not None:  # a goal set before this turn: its reply is judged
                self._goals.begin(session_id)
            result = await self._step(engine, turn, text, attachments)
            while True:
                calls += result.tool_calls
                sent += result.attachments
                try:
                    asked = (
                        await self.follow_ups.next(
                            engine, session_id, turn.control, result, say(turn)
                        )
                        if turn.control.steers or self._goal_of(session_id)
                        else None
                    )
                    if asked is None:
                        break
                    turn.emit(InterimReply(text=result.text))  # the next reply begins
                    result = replace(result, text="")  # shown: a failure below repeats none
                    turn.control.outbound = []  # this step's files went with its reply
                    result = await self._step(engine, turn, asked, ())
                except Exception as exc:  # noqa: BLE001 - any failure: the replies so far stand
                    log.warning("runtime: a follow-up on session %s failed: %s", session_id, exc)
                    turn.emit(Notice(text=f"the turn could not go on: {exc}", chat=True))
                    self.goals.pause(session_id)
                    break
        except LeaseHeldError as exc:
            # Another process runs a turn on it: nothing was done or saved.
            result = TurnResult("", "busy", error=f"{exc} (is it open in another hermes?)")
        except SessionNotFound:
            result = TurnResult("", "error", error=f"no session {session_id!r}")
        except Exception as exc:
            log.exception("runtime: the turn on session %s failed", session_id)
            result = TurnResult("", "error", error=f"the turn failed: {exc}")
        finally:
            turn.closed = True  # a /steer from now on is refused: it is sent as a message
            if turn.control.steers:
                from hermes_kernel.runtime.follow_ups import left_over

                late = left_over(turn.control)
                if late is not None:
                    turn.emit(Notice(text=late, chat=True))
            self.questions.turns.pop(session_id, None)
            if result is None:  # cancelled
                result = TurnResult("", "stopped")
            after = None
            with contextlib.suppress(Exception):
                after = await db.run(sessions.get, session_id)
            turn.finish(
                TurnEnded(
                    session_id=session_id,
                    status=result.status,
                    reply=result.text,
                    error=result.error,
                    usage=turn_usage(before, after),
                    tool_calls=max(calls, result.tool_calls),
                    attachments=tuple(sent) or result.attachments,
                )
            )
        if after is not None:
            self.agent.after_turn(
                after, text, result, reviewable=session_id not in self._unreviewed
            )

    async def _step(
        self, engine: TurnEngine, turn: KernelTurn, text: str, attachments: tuple[Attachment, ...]
    ) -> TurnResult:
        """One run of the engine for the turn (its first, or a follow-up)."""
        return await engine.run_turn(
            turn.session_id,
            text,
            turn.control,
            on_text=lambda delta: turn.emit(TextDelta(text=delta)),
            on_notice=lambda line: turn.emit(Notice(text=line)),
            on_restart=lambda: turn.emit(TextDelta(text="", restarted=True)),
            attachments=attachments,
        )

    async def context_use(self, session_id: str) -> tuple[int, int] | None:
        used = await self.store.db.run(self.store.sessions.last_call_tokens, session_id)
        engine = self._bound.get(session_id, self.agent.engine)
        compactor = engine.compactor
        if used is None or compactor is None:
            return None
        return used, (await compactor.window(engine.routes[0])).tokens

    async def branch_session(
        self, session_id: str, through_seq: int | None = None, *, title: str | None = None
    ) -> SessionSummary:
        from hermes_kernel.runtime.branching import branch

        return await branch(self, self.store, session_id, through_seq, title)

    @property
    def goals(self) -> Goals:
        """Sessions' standing goals (``/goal``)."""
        if self._goals is None:
            from hermes_kernel.runtime.goals import Goals

            self._goals = Goals()
        return self._goals

    def _goal_of(self, session_id: str) -> bool:
        return self._goals is not None and self._goals.active(session_id) is not None

    @property
    def follow_ups(self) -> FollowUps:
        if self._follow_ups is None:
            from hermes_kernel.runtime.follow_ups import FollowUps

            self._follow_ups = FollowUps(self.goals, self.store)
        return self._follow_ups

    @property
    def background(self) -> Background:
        """Tasks run in sessions of their own (``/background``)."""
        if self._background is None:
            from hermes_kernel.runtime.background import Background

            self._background = Background(self)
        return self._background

    def models(self) -> Sequence[ModelChoice]:
        setup = self.agent.setup
        primary = setup.routes[0]
        choices = [ModelChoice(provider=primary.name, model=primary.model, default=True)]
        seen = {(primary.name, primary.model)}
        configured = set((self.config.get("providers") or {}).keys())
        configured |= {route.name for route in setup.routes}
        for name, endpoint in sorted(setup.view.endpoints.items()):
            if name not in configured:
                continue
            for model in dict.fromkeys([endpoint.default_model, *endpoint.models]):
                if model and (name, model) not in seen:
                    seen.add((name, model))
                    choices.append(ModelChoice(provider=name, model=model))
        return choices

    # --- what a chat front-end needs beyond turns ----------------------------------------

    def warnings(self) -> Sequence[str]:
        agent = self.agent
        queues = self._pending_queues.warnings() if self._pending_queues is not None else ()
        return [*agent.warnings, *self._slash_warnings(), *queues]

    def describe_model(self, provider: str | None = None, model: str | None = None) -> ModelInfo:
        if provider is None and model is None:
            setup = self.agent.setup
        else:
            # Kept per choice: a front-end describes a session's model on every page it
            # shows, and each setup holds model clients until the runtime closes.
            described = self._described.get((provider, model))
            if described is None:
                try:
                    described = model_setup(self.app.host, self.app.settings, provider, model)
                except NoModel as exc:
                    raise ValueError(str(exc)) from None
                self._described[(provider, model)] = described
                self._setups.append(described)
            setup = described
        primary = setup.routes[0]
        return ModelInfo(provider=primary.name, model=primary.model, notice=setup.notice or None)

    def providers(self) -> Sequence[ProviderChoice]:
        endpoints = self.agent.setup.view.endpoints
        return [
            ProviderChoice(
                name=name,
                key_env=endpoint.api_key_env,
                models=tuple(endpoint.models),
                default_model=endpoint.default_model or None,
            )
            for name, endpoint in sorted(endpoints.items())
        ]

    async def use_model(
        self, session_id: str, provider: str | None, model: str | None
    ) -> ModelInfo:
        await self._bound_engine(session_id)
        engine = await self._engine_like(session_id, provider, model)
        self._bound[session_id] = engine
        primary = engine.routes[0]
        return ModelInfo(provider=primary.name, model=primary.model)

    def _turn_route(self, session_id: str, text: str) -> tuple[str, str | None] | None:
        """The one-turn route kept for ``session_id``, if this turn's message is its."""
        kept = self._turn_routes.get(session_id)
        if kept is None:
            return None
        provider, model, wanted, asked = kept
        if time.monotonic() - asked > TURN_ROUTE_SECONDS:
            del self._turn_routes[session_id]
            return None
        if wanted not in text:
            return None
        del self._turn_routes[session_id]
        return provider, model

    async def _engine_like(
        self, session_id: str, provider: str | None, model: str | None
    ) -> TurnEngine:
        """An engine for the session on another model, with the same tools (a narrowed
        session stays narrowed)."""
        toolsets, excluded = self._narrowed.get(session_id, (None, ()))
        options = SessionOptions(
            source="", provider=provider, model=model, toolsets=toolsets, exclude_tools=excluded
        )
        return await asyncio.to_thread(self._engine, options)

    async def _bound_engine(self, session_id: str) -> TurnEngine:
        engine = self._bound.get(session_id)
        if engine is None:
            await self.resume_session(session_id)
            engine = self._bound[session_id]
        return engine

    async def undo(self, session_id: str) -> str | None:
        if session_id in self.questions.turns:
            raise SessionBusy(f"session {session_id} is running a turn; wait for it or stop it")
        store = self.store

        def remove() -> str | None:
            seq = store.messages.last_user_seq(session_id)
            if seq is None:
                return None
            text = next(
                (m.content for m in store.messages.of_session(session_id) if m.seq == seq), None
            )
            with store.leases.holding(session_id):
                store.messages.delete_from(session_id, seq)
            return text or ""

        try:
            return await store.db.run(remove)
        except LeaseHeldError as exc:
            raise SessionBusy(f"{exc}: a turn is running on this session elsewhere") from None

    async def compact(
        self,
        session_id: str,
        focus: str | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> str | None:
        if session_id in self.questions.turns:
            raise SessionBusy(f"session {session_id} is running a turn; wait for it or stop it")
        engine = await self._bound_engine(session_id)
        self.agent.loop = asyncio.get_running_loop()
        try:
            return await engine.compact_session(session_id, focus, on_notice)
        except LeaseHeldError as exc:
            raise SessionBusy(f"{exc}: a turn is running on this session elsewhere") from None
        except SessionNotFound:
            raise SessionNotFound(f"no session {session_id!r}") from None

    def set_yolo(self, session_id: str, on: bool) -> None:
        unasked = self.agent.tool_env.approvals.unasked_sessions
        if on and INSIDE_AGENT in os.environ:
            raise ValueError(
                "--yolo is refused: this Hermes was started by an agent's tool, and gets no "
                "more than the agent that started it (run it from your own terminal)"
            )
        if on:
            unasked.add(session_id)
        else:
            unasked.discard(session_id)

    def set_reasoning_effort(self, session_id: str, effort: str | None) -> None:
        if effort is None:
            self._efforts.pop(session_id, None)
            return
        if effort not in REASONING_EFFORTS:
            raise ValueError(
                f"reasoning effort must be one of {', '.join(REASONING_EFFORTS)} (or default), "
                f"not {effort!r}"
            )
        self._efforts[session_id] = effort

    def reasoning_effort(self, session_id: str | None) -> tuple[str | None, str]:
        own = self._efforts.get(session_id) if session_id else None
        if own is not None:
            return own, "this conversation"
        engine = self._bound.get(session_id, self.agent.engine) if session_id else None
        configured = (engine or self.agent.engine).settings.reasoning_effort
        if configured is not None:
            return configured, "config.yaml"
        return None, "the model's default"

    def tools_report(self, session_id: str | None = None) -> list[str]:
        from hermes_kernel.tooling.listing import listing_lines, tool_rows

        agent = self.agent
        given = self._bound.get(session_id, agent.engine).tools if session_id else agent.tools
        rows = tool_rows(agent.app.host, agent.memory.tools(), agent.memory.name or "")
        if not rows:
            return []
        lines = listing_lines(rows, given)
        if len(given) < len(rows):
            lines.append(
                "[not given]: outside this session's toolsets (--toolsets, agent.toolsets)"
            )
        return lines

    def toolsets(self) -> Sequence[str]:
        return sorted({spec.toolset for spec in self.agent.all_tools()})

    def provided(self, kind: Kind) -> Sequence[ProvidedName]:
        return [
            ProvidedName(name=item.spec.name, plugin=item.plugin)
            for item in self.app.host.provided(kind)
        ]

    def slash_commands(self) -> Mapping[str, SlashCommandSpec]:
        return self._slash()[0]

    def _slash_warnings(self) -> list[str]:
        return self._slash()[1] if self._slash_loaded is not None else []

    def _slash(self) -> tuple[dict[str, SlashCommandSpec], list[str]]:
        if self._slash_loaded is None:
            from hermes_kernel.runtime.slash import builtin_commands
            from hermes_kernel.runtime.turn_commands import turn_commands

            owners: dict[str, str] = {}
            commands = builtin_commands(self, self.slash_commands, self._unasked, owners)
            commands.update((spec.name, spec) for spec in turn_commands(self))
            warnings: list[str] = []
            for item in self.app.host.provided(Kind.SLASH):
                spec = item.spec
                assert isinstance(spec, SlashCommandSpec)  # the index holds these under SLASH
                if spec.name in RESERVED_SLASH_NAMES:
                    warnings.append(
                        f"plugin {item.plugin!r}: /{spec.name} is a built-in command; "
                        "the plugin's version is ignored"
                    )
                    continue
                commands[spec.name] = spec
                owners[spec.name] = item.plugin
            self._slash_loaded = (commands, warnings)
        return self._slash_loaded

    def _unasked(self, session_id: str) -> bool:
        return session_id in self.agent.tool_env.approvals.unasked_sessions

    async def run_slash(
        self,
        name: str,
        args: str,
        session_id: str | None,
        *,
        user_scope: str | None = None,
        route: tuple[str | None, str | None] | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> SlashReply:
        spec = self.slash_commands().get(name)
        if spec is None:
            raise LookupError(f"unknown command /{name}; /help lists them")
        if user_scope is not None and not spec.on_platforms:
            raise PermissionError(f"/{name} is for the terminal: what it changes is shared")
        if session_id is not None and not spec.during_turn and self.running(session_id):
            raise SessionBusy(f"/{name} waits for the turn: let it finish, or /stop it first")
        engine = self._bound.get(session_id, self.agent.engine) if session_id else self.agent.engine
        provider, model = engine.routes[0].name, engine.routes[0].model
        if session_id is None and route is not None and route != (None, None):
            info = self.describe_model(*route)  # the front-end's choice for its next session
            provider, model = info.provider, info.model
        context = SlashContext(
            session_id=session_id,
            home=self.home,
            cwd=str(self.agent.cwd),
            provider=provider,
            model=model,
            user_scope=user_scope,
            config=self.config,
            provided=self.agent.tool_env.provided,
            notify=notify if notify is not None else self._told(name, user_scope),
        )
        if inspect.iscoroutinefunction(spec.handler):
            output = await spec.handler(args, context)
        else:
            output = await asyncio.to_thread(spec.handler, args, context)
        if isinstance(output, SlashReply):
            if output.turn_provider is not None and output.send is not None:
                key = session_id if session_id is not None else _unopened(user_scope)
                asked = (output.turn_provider, output.turn_model, output.send, time.monotonic())
                self._turn_routes[key] = asked
            return output
        return SlashReply("" if output is None else str(output))

    def taken_up(self, session_id: str) -> bool:
        """A front-end resumed the session here (see ``Background``)."""
        return session_id in self._taken_up

    def _told(self, name: str, user_scope: str | None) -> Callable[[str], None]:
        """Where a command's later news goes when its front-end gave no ``notify``: the
        owner's background listeners; a person's news never reaches them."""
        if user_scope is None:
            return self.agent.tell_background

        def dropped(line: str) -> None:
            log.info("/%s for %s: %s (its front-end takes no later news)", name, user_scope, line)

        return dropped

    # --- what a front-end shows of the whole agent ---------------------------------------

    def _pending_writes(self) -> PendingQueues:
        """The plugins' queues of writes awaiting approval; imported on first use, so a
        one-shot that never lists them never loads them."""
        if self._pending_queues is None:
            from hermes_kernel.runtime.pending import PendingQueues

            self._pending_queues = PendingQueues(self.app.host, self.home, self.config)
        return self._pending_queues

    async def status(self) -> list[StatusLine]:
        from hermes_kernel.runtime.status import status_lines

        return await asyncio.to_thread(status_lines, self.app)

    def plugins(self) -> list[PluginState]:
        from hermes_kernel.runtime.status import plugin_states

        return plugin_states(self.app.host, self.app.settings.home)

    async def pending_writes(self, *, user_scope: str | None = None) -> list[PendingWrite]:
        return await self._pending_writes().writes(user_scope)

    async def decide_pending_write(
        self, queue: str, write_id: str, *, approve: bool, user_scope: str | None = None
    ) -> str:
        return await self._pending_writes().decide(
            queue, write_id, approve=approve, user_scope=user_scope
        )

    def watch_background(self, callback: Callable[[str], None]) -> None:
        self.agent.background_watchers.append(callback)

    def stop_hooks(self) -> None:
        self.app.host.hooks.stop()

    # --- for front-ends that serve many people (delivery, compaction, storage) ----------

    async def deliver(self, platform: str, chat_id: str, text: str) -> Delivery:
        if self._deliverer is None:
            self._deliverer = await asyncio.to_thread(self._build_deliverer)
        return await self._deliverer.deliver(platform, chat_id, text)

    def _build_deliverer(self) -> Deliverer:
        """The first delivery plugin by name (``hermes_deliveries``), built for this runtime."""
        provided = sorted(self.app.host.provided(DeliverySpec.kind), key=lambda p: p.spec.name)
        if not provided:
            raise DeliveryUnavailable(
                "no installed plugin delivers messages to chats (hermes plugins list)"
            )
        for unused in provided[1:]:
            log.info("delivery %r of plugin %r is not used", unused.spec.name, unused.plugin)
        spec = provided[0].spec
        assert isinstance(spec, DeliverySpec)  # the index holds DeliverySpecs under DELIVERY
        deliverer: Deliverer = spec.build(
            DeliveryContext(
                home=self.home,
                config=self.config,
                store=self.plugin_store,
                provided=self.app.host.shared(lazily=True),
            )
        )
        return deliverer

    async def warm_up(self, source: str) -> list[str]:
        warnings = await self.agent.ensure_tools()
        await asyncio.to_thread(self.agent.engine.warm_up, source, self.agent.cwd)
        return warnings

    def plugin_store(self, schema: StoreSchema) -> Store:
        found = self._stores.get(schema.name)
        if found is None:
            migrate_schema(self.store.db, schema)
            found = self._stores[schema.name] = PluginStore(self.store.db, owned=False)
        return found

    # --- shutting down --------------------------------------------------------------------

    async def stop_all(self, wait_seconds: float = 10.0) -> None:
        """Stop every running turn and wait for them to end."""
        turns = list(self.questions.turns.values())
        for turn in turns:
            turn.stop()
        tasks = [turn.task for turn in turns if turn.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=wait_seconds)

    async def aclose_engines(self) -> None:
        """Close the model clients of engines built for other models."""
        for setup in self._setups:
            for route in setup.routes:
                with contextlib.suppress(Exception):
                    await route.provider.aclose()


TURN_ROUTE_SECONDS = 600.0
"""How long a one-turn route (``SlashReply.turn_provider``) waits for its message."""


def _unopened(user_scope: str | None) -> str:
    """The key of what is kept for a person's next session (no session id has it)."""
    return f"\0unopened:{user_scope or ''}"


def _narrowing(
    options: SessionOptions | None,
) -> tuple[tuple[str, ...] | None, tuple[str, ...]] | None:
    """The tool choice ``options`` make, or None when they make none."""
    if options is None or (options.toolsets is None and not options.exclude_tools):
        return None
    return options.toolsets, tuple(sorted(options.exclude_tools))


def say(turn: KernelTurn) -> Callable[[str], None]:
    """One line to the turn's front-end, as a notice a chat app sends too (a goal's
    progress, a note not taken: what the user must hear wherever they are)."""
    return lambda line: turn.emit(Notice(text=line, chat=True))


def tools_runtime(agent: Agent) -> KernelRuntime:
    """The runtime a tool starts agents on (tasks it hands off), over ``agent``: the sessions
    it opens are marked as the tools', so nobody is asked to approve their commands."""
    return KernelRuntime(agent, TurnQuestions(), on_open=agent.opened_by_tools.add)
