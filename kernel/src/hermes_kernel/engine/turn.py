"""The turn engine.

A turn: take the session's lease, repair what a crash left, save the user's message, then
loop: ask the model (streamed); with no tool calls, save the reply and stop; with tool
calls, save the assistant message FIRST, then run the tools, saving each result as soon as
it is known, and ask again. A write that fails ends the turn before anything acts on unsaved
state. Lifecycle hooks fire in this order (a test pins it): on_session_start (when a session
is started or resumed), then per model call pre_llm_call / post_llm_call, then per tool call
pre_tool_call / post_tool_call, and on_session_end when the session is ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hermes_kernel.engine import recovery
from hermes_kernel.engine.activity import ActivityLog
from hermes_kernel.engine.compaction import Compactor
from hermes_kernel.engine.control import TurnControl
from hermes_kernel.engine.media import MediaSupport
from hermes_kernel.engine.models import ModelRoute, RouteHealth, observed
from hermes_kernel.engine.parts import (
    EngineObserver,
    EngineParts,
    EngineSettings,
    NoObserver,
    ToolContextFactory,
    session_info,
)
from hermes_kernel.engine.prompt import build_system_prompt
from hermes_kernel.engine.run import TurnResult, TurnRun
from hermes_kernel.store.compactions import CompactionRecord, latest_in
from hermes_kernel.store.errors import StoreError
from hermes_kernel.store.leases import acquire_in, new_holder, release_in, session_key
from hermes_kernel.store.messages import Message, append_in, of_session_in
from hermes_kernel.store.sessions import (
    REVIEW_SOURCE,
    Session,
    SessionIdTaken,
    Usage,
    new_session_id,
    session_in,
)
from hermes_kernel.store.state import StateStore
from hermes_sdk import (
    PromptContext,
    ToolSpec,
    TurnInfo,
)
from hermes_sdk.media import Attachment
from hermes_sdk.models import ModelUsage, ToolSchema
from hermes_sdk.provided import ProvidedSpecs
from hermes_sdk.runtime import SessionNotFound

__all__ = ["EngineObserver", "EngineSettings", "NoObserver", "TurnEngine", "TurnResult"]

log = logging.getLogger("hermes.engine")

ID_ATTEMPTS = 5
"""New ids tried for a session whose first id another session took (24 random bits a
second: one clash is rare, five in a row would mean something else is wrong)."""
INDEX_AFTER_SECONDS = 1.0
"""After a turn, search's indexes catch up this much later, in one write for every turn that
ended meanwhile (a busy front-end ends dozens a second). Search indexes what is left before
each query, so results never miss a message; this only keeps that step short."""


_PRELOADS: dict[str, dict[str, tuple[str, ...]]] = {}
"""What front-ends asked plugins to preload, by session, for this process's life: shared by
every engine, so a session moved to another model (``/model``) keeps it at a compaction."""


def described(spec: ToolSpec, tools: Mapping[str, ToolSpec], config: Mapping[str, Any]) -> str:
    """The description the model sees: what ``spec.describe`` writes from the other tools
    the engine offers and the config, else (or when it fails) the spec's own."""
    if spec.describe is None:
        return spec.description
    others = {name: other for name, other in tools.items() if name != spec.name}
    try:
        return spec.describe(others, config) or spec.description
    except Exception:  # noqa: BLE001 - a plugin's failure leaves the plain description
        log.warning("tool %s: describe failed; its own description is used", spec.name)
        return spec.description


@dataclass(frozen=True)
class _Begun:
    session: Session
    transcript: list[Message]
    compacted: CompactionRecord | None
    user_seq: int


class TurnEngine:
    def __init__(
        self,
        store: StateStore,
        routes: Sequence[ModelRoute],
        tools: Mapping[str, ToolSpec],
        home: Path,
        *,
        observer: EngineObserver | None = None,
        settings: EngineSettings | None = None,
        secret_values: Iterable[str] = (),
        pricing: Callable[[str, ModelUsage], float | None] | None = None,
        tool_context: ToolContextFactory | None = None,
        config: Mapping[str, Any] | None = None,
        provided: ProvidedSpecs | None = None,
        prefetch: Callable[[Session, str], str | None] | None = None,
        compactor: Compactor | None = None,
        safety_net: bool = False,
        media: MediaSupport | None = None,
    ) -> None:
        if not routes:
            raise ValueError("a turn engine needs at least one model route")
        self.store = store
        self.routes = list(routes)
        self.tools = dict(tools)
        self.home = home
        self.observer: EngineObserver = observer or NoObserver()
        self.settings = settings or EngineSettings()
        self.secret_values = list(secret_values)
        self.pricing = pricing or (lambda _model, _usage: None)
        """Estimated cost of a call in US dollars; None when the price is unknown."""
        self.tool_context = tool_context
        """Builds what tools with ``takes_context`` get (backend, user), once per turn."""
        self.config = config or {}
        """config.yaml as loaded, for the plugins that build a new session's prompt."""
        self.provided = provided or ProvidedSpecs()
        """What plugins provide for other plugins, for those building a new session's prompt."""
        self.prefetch = prefetch
        """What an external memory provider recalls for a user message (must not raise)."""
        self.compactor = compactor
        """Keeps a session's view within the model's window; None: never compacted."""
        self.health = RouteHealth()
        self.activity = ActivityLog(self.settings.log_content)
        self._index_timer: asyncio.TimerHandle | None = None
        self._telling: set[asyncio.Future[None]] = set()
        """``hermes_on_turn_end`` calls for cancelled turns, running on their own (kept
        referenced until done)."""
        self.schemas = [
            ToolSchema(spec.name, described(spec, self.tools, self.config), spec.parameters)
            for spec in self.tools.values()
        ]
        self.parts = EngineParts(
            store=store,
            routes=tuple(self.routes),
            tools=self.tools,
            schemas=tuple(self.schemas),
            home=home,
            observer=self.observer,
            settings=self.settings,
            secret_values=tuple(self.secret_values),
            pricing=self.pricing,
            tool_context=tool_context,
            prefetch=prefetch,
            compactor=compactor,
            safety_net=safety_net,
            health=self.health,
            rebuilt_prompt=self.rebuilt_prompt,
            media=media or MediaSupport(self.config),
            config=self.config,
        )

    # --- sessions -----------------------------------------------------------------------

    def start_session(
        self,
        source: str,
        cwd: Path | None = None,
        *,
        user_scope: str | None = None,
        parent_session_id: str | None = None,
        instructions: str | None = None,
        preload: Mapping[str, tuple[str, ...]] | None = None,
    ) -> Session:
        """Create a session with its system prompt, built now and frozen (one write, so a
        crash never leaves a session without its prompt). ``instructions`` end the prompt
        (a background review's task)."""
        for attempt in range(ID_ATTEMPTS):
            session_id = new_session_id()
            self._remember_preload(session_id, preload)
            prompt = self._system_prompt(session_id, source, cwd, user_scope, instructions)
            try:
                session = self._create(
                    session_id, source, cwd, user_scope, prompt, parent_session_id
                )
                break
            except SessionIdTaken:
                if attempt == ID_ATTEMPTS - 1:
                    raise
        self.observer.on_session_start(session_info(session, self.home, self.config))
        return session

    async def open_session(
        self,
        source: str,
        cwd: Path | None = None,
        *,
        user_scope: str | None = None,
        parent_session_id: str | None = None,
        preload: Mapping[str, tuple[str, ...]] | None = None,
    ) -> Session:
        """:meth:`start_session` for an event loop: files are read and hooks run in a worker
        thread, the write is made through :meth:`Database.run`, so the thread never holds
        the connection a busy loop is using."""
        for attempt in range(ID_ATTEMPTS):
            # The prompt may name the session: a new id means a new prompt.
            session_id = new_session_id()
            self._remember_preload(session_id, preload)
            prompt = await asyncio.to_thread(
                self._system_prompt, session_id, source, cwd, user_scope, None
            )
            try:
                session = await self.store.db.run(
                    self._create, session_id, source, cwd, user_scope, prompt, parent_session_id
                )
                break
            except SessionIdTaken:
                if attempt == ID_ATTEMPTS - 1:
                    raise
        if self.observer.observes("on_session_start"):
            await asyncio.to_thread(
                self.observer.on_session_start, session_info(session, self.home, self.config)
            )
        return session

    def warm_up(self, source: str, cwd: Path | None = None) -> None:
        """Build a system prompt and drop it, so the plugins that contribute to prompts load
        their modules now. A long-running process calls this (in a worker thread) before it
        serves: otherwise the first conversations to open wait for those imports together,
        about 300 ms at a busy front-end's start."""
        self._system_prompt("warm-up", source, cwd, None, None)

    def _remember_preload(
        self, session_id: str, preload: Mapping[str, tuple[str, ...]] | None
    ) -> None:
        """Kept for the session's life in this process, so a compaction's rebuilt prompt
        still loads what the front-end asked for."""
        if preload:
            _PRELOADS[session_id] = {kind: tuple(names) for kind, names in preload.items()}

    def _system_prompt(
        self,
        session_id: str,
        source: str,
        cwd: Path | None,
        user_scope: str | None,
        instructions: str | None,
    ) -> str:
        context = PromptContext(
            session_id=session_id,
            source=source,
            home=str(self.home),
            cwd=str(cwd) if cwd else None,
            user_scope=user_scope,
            config=self.config,
            provided=self.provided,
            toolsets=frozenset(spec.toolset for spec in self.tools.values()),
            tools=frozenset(self.tools),
            preload=_PRELOADS.get(session_id, {}),
        )
        prompt = build_system_prompt(self.home, cwd, self.observer.prompt_sections(context))
        return f"{prompt}\n\n{instructions}" if instructions else prompt

    def _create(
        self,
        session_id: str,
        source: str,
        cwd: Path | None,
        user_scope: str | None,
        prompt: str,
        parent_session_id: str | None,
    ) -> Session:
        primary = self.routes[0]
        return self.store.sessions.create(
            source,
            model=primary.model,
            provider=primary.name,
            system_prompt=prompt,
            cwd=str(cwd) if cwd else None,
            session_id=session_id,
            user_scope=user_scope,
            parent_session_id=parent_session_id,
        )

    def resume_session(self, session_id: str) -> Session:
        """Continue a stored session in this process; its prompt is reused as stored."""
        session = self.store.sessions.get(session_id)
        if session is None:
            raise SessionNotFound(f"no session {session_id!r}")
        self.observer.on_session_start(session_info(session, self.home, self.config))
        return session

    def end_session(self, session_id: str, reason: str) -> None:
        session = self.store.sessions.get(session_id)
        if session is None:
            raise SessionNotFound(f"no session {session_id!r}")
        self.store.sessions.end(session_id, reason)
        _PRELOADS.pop(session_id, None)
        self.observer.on_session_end(session_info(session, self.home, self.config), reason)

    # --- a turn -------------------------------------------------------------------------

    async def run_turn(
        self,
        session_id: str,
        user_text: str,
        control: TurnControl | None = None,
        on_text: Callable[[str], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
        tool_choice: str | None = None,
        *,
        on_begin: Callable[[Any], None] | None = None,
        on_restart: Callable[[], None] | None = None,
        attachments: Sequence[Attachment] = (),
    ) -> TurnResult:
        """Run one turn. Raises LeaseHeldError if another turn holds the session (in this
        process or another); every other failure is a TurnResult with an error.
        ``tool_choice`` applies to the turn's first model call only ("required", or a tool's
        name: a small model that would not call a tool on its own is made to).

        ``on_begin`` gets the cursor of the turn's first write transaction (the lease, the
        repair, the user's message), for the caller's own record of the turn starting: both
        are saved, or neither. It may run in a worker thread, and again if its first try
        would have waited for a lock, so it must only write through the cursor.

        ``on_restart`` is called when a reply whose text had begun to stream is asked for
        again (a dropped stream): what ``on_text`` got of it so far is void.

        ``attachments`` are read first (transcribed, described, their text extracted), so
        what stands for each is stored with the user's message."""
        control = control or TurnControl()
        control.loop = asyncio.get_running_loop()
        holder = new_holder()  # per turn: two turns in one process exclude each other too
        db = self.store.db
        read: tuple[Attachment, ...] = ()
        if attachments:
            usages: list[Usage] = []
            route = self.health.order(self.routes)[0][0]  # the route the turn starts on
            read = await self.parts.media.read(attachments, route, on_notice, usages)
            for usage in usages:
                await db.run(self.store.sessions.add_usage, session_id, usage)
        started = time.perf_counter()
        begun = await db.run(self._begin, session_id, holder, user_text, on_begin, read)
        self.activity.turn_started(session_id, begun.session.source, user_text)
        if begun.session.system_prompt is None:  # imported: its prompt is built on first use
            begun = await self._with_prompt(begun)
        renewer = asyncio.ensure_future(self._keep_lease(session_id, holder, control, on_notice))
        run: TurnRun | None = None
        result = TurnResult("", "error", error="the turn ended unexpectedly")
        cancelled = False
        try:
            run = TurnRun(self.parts, begun.session, holder, control, on_text, on_notice)
            run.on_restart = on_restart
            result = await run.run(
                begun.transcript,
                user_text,
                tool_choice,
                user_seq=begun.user_seq,
                compacted=begun.compacted,
                attachments=read,
            )
            return result
        except StoreError as exc:
            result = TurnResult(
                "", "error", error=f"{exc}; the turn stopped before acting on unsaved state"
            )
            return result
        except asyncio.CancelledError:
            result = TurnResult("", "stopped", error="cancelled")
            cancelled = True
            raise
        finally:
            seconds = time.perf_counter() - started
            self.activity.turn_ended(session_id, result, seconds)
            renewer.cancel()
            await asyncio.wait({renewer})
            if run is None or not run.released:  # released with the reply in the usual case
                with contextlib.suppress(StoreError):  # if not, it expires on its own
                    await db.run(self.store.leases.release, session_id, holder)
            self._index_soon()
            if self.observer.observes("on_turn_end"):
                ended = TurnInfo(
                    session_id=session_id,
                    status=result.status,
                    user_text=user_text,
                    reply=result.text,
                    error=result.error,
                    tool_calls=result.tool_calls,
                    model_calls=result.iterations,
                    seconds=seconds,
                )
                if cancelled:  # this task cannot await any more: the hook runs on its own
                    told = asyncio.ensure_future(observed(self.observer.on_turn_end(ended)))
                    self._telling.add(told)
                    told.add_done_callback(self._telling.discard)
                else:
                    await observed(self.observer.on_turn_end(ended))

    async def _with_prompt(self, begun: _Begun) -> _Begun:
        """An imported session's system prompt, built now from this home (what its plugins add)
        and frozen from then on, as if the session had been opened here."""
        prompt = await asyncio.to_thread(self.rebuilt_prompt, begun.session)
        await self.store.db.run(self.store.sessions.set_system_prompt, begun.session.id, prompt)
        return replace(begun, session=replace(begun.session, system_prompt=prompt))

    def _begin(
        self,
        session_id: str,
        holder: str,
        user_text: str,
        on_begin: Callable[[Any], None] | None,
        attachments: Sequence[Attachment] = (),
    ) -> _Begun:
        """A turn's first write, one transaction: take the lease, repair what a crash left,
        save the user's message. The session, its latest compaction, and the transcript
        after that compaction up to the new message."""
        with self.store.db.write(key=session_key(session_id)) as cursor:
            session, compacted, after = self._lease_in(cursor, session_id, holder)
            transcript = recovery.repaired_in(cursor, session_id, self._read_only, after)
            user = append_in(
                cursor,
                session_id,
                "user",
                user_text,
                attachments=[item.as_dict() for item in attachments] or None,
            )
            if on_begin is not None:
                on_begin(cursor)
        return _Begun(session, transcript, compacted, user.seq)

    def rebuilt_prompt(self, session: Session) -> str:
        """The session's system prompt built again (at a compaction: what plugins add, as
        they are now); a review keeps its own, which carries its task."""
        if session.source == REVIEW_SOURCE:
            return session.system_prompt or ""
        cwd = Path(session.cwd) if session.cwd else None
        return self._system_prompt(session.id, session.source, cwd, session.user_scope, None)

    async def compact_session(
        self,
        session_id: str,
        focus: str | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> str | None:
        """``/compact [FOCUS]``: compact the session's view now, between turns (its lease is
        held meanwhile). None when it was compacted, else why not."""
        if self.compactor is None:
            return "compaction is not available here"
        holder = new_holder()
        db = self.store.db
        session, compacted, transcript = await db.run(self._lease_view, session_id, holder)
        control = TurnControl()
        try:
            run = TurnRun(self.parts, session, holder, control, None, on_notice)
            run.load_view(compacted, transcript)
            return await run.compact("manual", focus=focus or None)
        finally:
            with contextlib.suppress(StoreError):
                await db.run(self.store.leases.release, session_id, holder)

    def _lease_view(
        self, session_id: str, holder: str
    ) -> tuple[Session, CompactionRecord | None, list[Message]]:
        with self.store.db.write(key=session_key(session_id)) as cursor:
            session, compacted, after = self._lease_in(cursor, session_id, holder)
            transcript = of_session_in(cursor, session_id, after)
        if recovery.unanswered(transcript):
            with self.store.db.write(key=session_key(session_id)) as cursor:
                release_in(cursor, session_id, holder)
            raise ValueError("the last turn did not finish; send a message first, then /compact")
        return session, compacted, transcript

    def _lease_in(
        self, cursor: Any, session_id: str, holder: str
    ) -> tuple[Session, CompactionRecord | None, int]:
        """Take the session's lease; the session, its latest compaction, and the seq its
        view's messages start after."""
        session = session_in(cursor, session_id)
        if session is None:
            raise SessionNotFound(f"no session {session_id!r}")
        acquire_in(cursor, session_id, holder, self.settings.lease_ttl)
        compacted = latest_in(cursor, session_id)
        return session, compacted, compacted.boundary_seq if compacted is not None else 0

    def _read_only(self, tool: str) -> bool:
        spec = self.tools.get(tool)
        return spec is not None and spec.parallel_safe

    def _index_soon(self) -> None:
        if self._index_timer is None:
            loop = asyncio.get_running_loop()
            self._index_timer = loop.call_later(INDEX_AFTER_SECONDS, self._start_indexing, loop)

    def _start_indexing(self, loop: asyncio.AbstractEventLoop) -> None:
        self._index_timer = None
        loop.run_in_executor(None, self.index_now)

    async def finish_indexing(self) -> None:
        """Index now what the timer would have (before the store closes)."""
        if self._index_timer is not None:
            self._index_timer.cancel()
            self._index_timer = None
        await asyncio.to_thread(self.index_now)

    def index_now(self) -> None:
        """Bring search's indexes up to date; never raises."""
        try:
            self.store.db.index_pending()
        except Exception as exc:  # noqa: BLE001 - search indexes what is left before a query
            log.debug("indexing after the turn failed: %s", exc)

    async def _keep_lease(
        self,
        session_id: str,
        holder: str,
        control: TurnControl,
        on_notice: Callable[[str], None] | None,
    ) -> None:
        ttl = self.settings.lease_ttl
        last_renewed = time.monotonic()
        while True:
            await asyncio.sleep(ttl / 3)
            try:
                held = await self.store.db.run(self.store.leases.renew, session_id, holder, ttl)
            except StoreError:
                if time.monotonic() - last_renewed < ttl * 0.9:
                    continue  # try again at the next tick, while the lease still holds
                held = False
            if held:
                last_renewed = time.monotonic()
                continue
            if on_notice is not None:
                on_notice("this turn lost its lease on the session; stopping")
            control.stop()
            return
