"""One ``hermes chat`` process as both shells (one-shot and interactive) see it: the model
routes, the tools, the store, the turn engine, and the session being talked in.

A new session is created by the first message, not before: ``/new`` twice, or a chat closed
without a word, leaves nothing behind in the session list.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from hermes_kernel.chat.compression import Compression
from hermes_kernel.engine.budget import budget_from_config
from hermes_kernel.engine.control import TurnControl
from hermes_kernel.engine.models import ModelRoute, RetryPolicy
from hermes_kernel.engine.turn import EngineSettings, TurnEngine, TurnResult
from hermes_kernel.learning.review import DRAIN_SECONDS, REVIEW_ITERATIONS, Reviews
from hermes_kernel.learning.triggers import LearningSettings
from hermes_kernel.memory.external import ExternalMemory
from hermes_kernel.providers.routes import ModelSetup, model_setup, price_book
from hermes_kernel.safety.approval import Answer, ApprovalRequest, Approver, NobodyToAsk
from hermes_kernel.safety.environment import secret_environment_values
from hermes_kernel.safety.judge import model_judge
from hermes_kernel.store.sessions import Session
from hermes_kernel.store.state import StateStore, state_db_path
from hermes_kernel.tooling.environment import Ask, ToolEnvironment
from hermes_kernel.tooling.sources import ToolSources
from hermes_sdk import (
    LLMCall,
    LLMResult,
    PromptContext,
    PromptSection,
    SessionInfo,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from hermes_sdk.memory import TurnRecord

if TYPE_CHECKING:
    from hermes_kernel.cli.app import App
    from hermes_kernel.runtime.kernel_runtime import KernelRuntime

SOURCE = "cli"


class ToolEvents(Protocol):
    """What a shell shows while tools run."""

    def tool_started(self, call: ToolCall) -> None: ...
    def tool_progress(self, call: ToolCall, text: str) -> None: ...
    def tool_finished(self, call: ToolCall, result: ToolResult) -> None: ...


@dataclass(frozen=True)
class ChatOptions:
    provider: str | None = None
    model: str | None = None
    toolsets: tuple[str, ...] | None = None
    """Only tools of these toolsets; None: agent.toolsets from config, else every one."""
    yolo: bool = False
    resume: str | None = None
    continue_last: bool = False


class _Observer:
    """The plugins' lifecycle hooks, plus the shell's view of tool calls."""

    def __init__(self, app: App, events: ToolEvents | None, memory: ExternalMemory) -> None:
        self._host = app.host
        self.events = events
        self.memory = memory

    def on_session_start(self, session: SessionInfo) -> None:
        self._host.on_session_start(session)

    def on_session_end(self, session: SessionInfo, reason: str) -> None:
        self._host.on_session_end(session, reason)

    async def pre_llm_call(self, call: LLMCall) -> None:
        await self._host.pre_llm_call(call)

    async def post_llm_call(self, call: LLMCall, result: LLMResult) -> None:
        await self._host.post_llm_call(call, result)

    async def pre_tool_call(self, call: ToolCall) -> None:
        if self.events is not None:
            self.events.tool_started(call)
        await self._host.pre_tool_call(call)

    async def post_tool_call(self, call: ToolCall, result: ToolResult) -> None:
        if self.events is not None:
            self.events.tool_finished(call, result)
        await self._host.post_tool_call(call, result)

    def tool_progress(self, call: ToolCall, text: str) -> None:
        if self.events is not None:
            self.events.tool_progress(call, text)

    def prompt_sections(self, context: PromptContext) -> list[PromptSection]:
        return [*self._host.prompt_sections(context), *self.memory.prompt_sections(context)]

    def observes(self, hook: str) -> bool:
        return self._host.implements(f"hermes_{hook}")


def choose_tools(
    specs: list[ToolSpec], toolsets: tuple[str, ...] | None
) -> tuple[dict[str, ToolSpec], list[str]]:
    """The tools of the chosen toolsets, and a warning per toolset nobody provides."""
    if toolsets is None:
        return {spec.name: spec for spec in specs}, []
    known = {spec.toolset for spec in specs}
    warnings = [
        f"toolset {name!r} is not installed (known: {', '.join(sorted(known)) or 'none'})"
        for name in toolsets
        if name not in known
    ]
    return {spec.name: spec for spec in specs if spec.toolset in toolsets}, warnings


class ChatAgent:
    """Build with :meth:`open`; raises NoProvider (one line to act on) if no model can be
    used, and KeyError if the session to resume does not exist."""

    def __init__(
        self,
        app: App,
        options: ChatOptions,
        events: ToolEvents | None = None,
        *,
        approver: Approver | None = None,
        ask: Ask | None = None,
        ask_for: Callable[[str], Ask] | None = None,
        on_learned: Callable[[str], None] | None = None,
        cwd: Path | None = None,
        in_gateway: bool = False,
    ) -> None:
        self.app = app
        self.in_gateway = in_gateway
        self.options = options
        self.yolo = options.yolo
        self.cwd = cwd or Path.cwd()
        settings = app.settings
        agent_section = settings.raw.get("agent") or {}
        self.engine_settings = EngineSettings(
            max_iterations=int(agent_section.get("max_iterations", 90)),
            retry=RetryPolicy(attempts=max(1, int(agent_section.get("retries", 3)))),
            tool_timeout=float((settings.raw.get("tools") or {}).get("timeout_seconds", 300.0)),
            budget=budget_from_config(settings.raw.get("budget")),
        )
        toolsets = options.toolsets
        if toolsets is None and agent_section.get("toolsets") is not None:
            toolsets = tuple(agent_section["toolsets"])
        self.toolsets = toolsets
        app.host.load_observers()
        self.memory = ExternalMemory(app)
        self.sources = ToolSources(app, str(cwd or Path.cwd()))
        self.tools, self.warnings = choose_tools(self.all_tools(), toolsets)
        self.warnings += self.memory.warnings
        self._loop: asyncio.AbstractEventLoop | None = None  # the running turn's, for asides
        self.compression = Compression(app)

        def aside() -> ModelRoute:
            """The model asked on the side (a judge, a summary): auxiliary, else primary."""
            return self.compression.auxiliary() or self.setup.routes[0]

        self.store = StateStore(state_db_path(settings.home))
        self.delegated: set[str] = set()
        """Sessions that tools opened for delegated work: nobody approves their commands."""
        self._tool_runtime: KernelRuntime | None = None
        self.tool_env = ToolEnvironment(
            app,
            approver=self._approver_for(approver),
            ask=ask,
            judge=model_judge(aside, lambda: self._loop),
            yolo=options.yolo,
            cwd=str(self.cwd),
            store=self.store,
            aside_route=aside,
            ask_for=ask_for,
        )
        self.warnings += self.tool_env.warnings
        self.tool_env.runtime = self.tool_runtime
        self.observer = _Observer(app, events, self.memory)
        self.reviews = Reviews(
            self.store,
            self._review_engine,
            self.tools,
            LearningSettings.from_config(settings.raw),
            on_learned,
            specs=app.host.reviews(),
        )
        self.setup: ModelSetup = model_setup(app.host, settings, options.provider, options.model)
        self.warnings += self.setup.warnings
        self.engine = self._engine(self.setup)
        self.session: Session | None = None
        if options.resume:
            self.session = self.resume(options.resume)
        elif options.continue_last:
            latest = self.store.sessions.latest(SOURCE)
            if latest is None:
                raise KeyError("there is no earlier chat to continue; start one with hermes chat")
            self.session = self.engine.resume_session(latest.id)

    def _engine(
        self,
        setup: ModelSetup,
        tools: Mapping[str, ToolSpec] | None = None,
        engine_settings: EngineSettings | None = None,
        review: bool = False,
    ) -> TurnEngine:
        settings = self.app.settings
        recall = self.memory.prefetch if self.memory.provider is not None and not review else None
        tools = self.tools if tools is None else tools
        engine = TurnEngine(
            self.store,
            setup.routes,
            tools,
            settings.home,
            # A review's tool calls are not shown in the chat; plugins still observe them.
            observer=_Observer(self.app, None, self.memory) if review else self.observer,
            settings=engine_settings or self.engine_settings,
            secret_values=[
                *settings.secrets.values(),
                *secret_environment_values(settings.environ),
            ],
            pricing=price_book(self.app.host).cost,
            tool_context=self.tool_env.context,
            config=settings.raw,
            provided=self.tool_env.provided,
            prefetch=recall,
            compactor=self.compression.compactor(
                lambda name: name in tools and tools[name].parallel_safe
            ),
        )
        engine.in_gateway = self.in_gateway
        return engine

    def _approver_for(self, approver: Approver | None) -> Approver:
        def approve(request: ApprovalRequest) -> Answer | None:
            if request.session_id in self.delegated:
                raise NobodyToAsk("a delegated task has nobody to approve its commands")
            if approver is None:
                raise NobodyToAsk("no interactive terminal")
            return approver(request)

        return approve

    def tool_runtime(self) -> KernelRuntime:
        """The runtime a tool starts agents on (delegated tasks), over this agent: built on
        first use; the sessions it opens are marked delegated."""
        if self._tool_runtime is None:
            from hermes_kernel.runtime.kernel_runtime import KernelRuntime
            from hermes_kernel.runtime.questions import TurnQuestions

            self._tool_runtime = KernelRuntime(self, TurnQuestions(), on_open=self.delegated.add)
        return self._tool_runtime

    def all_tools(self) -> list[ToolSpec]:
        """Every tool the plugins, the memory provider and the tool sources offer, before
        toolsets choose."""
        return [*self.app.host.tools(), *self.memory.tools(), *self.sources.tools()]

    async def ensure_tools(self) -> list[str]:
        """Start the tool sources (MCP servers ...) if nobody has: before a first model
        call. Their tools join this chat's; the warnings are new ones, one line each."""
        if self.sources.started:
            return []
        warnings = await self.sources.start()
        added = self.sources.tools()
        if added:
            chosen, _unknown = choose_tools(added, self.toolsets)
            self.tools.update(chosen)
            self.engine = self._engine(self.setup)
        return warnings

    def build_engine(
        self,
        setup: ModelSetup,
        tools: Mapping[str, ToolSpec],
        settings: EngineSettings | None = None,
    ) -> TurnEngine:
        """An engine like this chat's, for another model, other tools or another budget (a
        front-end's session that asked for them)."""
        return self._engine(setup, tools, settings)

    def _review_engine(self, tools: Mapping[str, ToolSpec]) -> TurnEngine:
        budget = replace(self.engine_settings, max_iterations=REVIEW_ITERATIONS)
        return self._engine(self.setup, tools, budget, review=True)

    @property
    def route(self) -> tuple[str, str]:
        primary = self.setup.routes[0]
        return primary.name, primary.model

    # --- sessions ---------------------------------------------------------------------------

    def resume(self, reference: str) -> Session:
        """Switch to a stored session by id or unique id prefix."""
        found = self.store.sessions.find(reference)
        if found is None:
            raise KeyError(f"no session {reference!r}; list them with: hermes sessions list")
        self.end_session("switched")
        self.session = self.engine.resume_session(found.id)
        return self.session

    def new_session(self) -> None:
        """The next message starts a fresh session."""
        self.end_session("new_session")
        self.session = None

    def end_session(self, reason: str) -> None:
        if self.session is not None:
            self.tool_env.end_session(self.session.id)
            with contextlib.suppress(KeyError):  # deleted meanwhile (hermes sessions delete)
                self.engine.end_session(self.session.id, reason)

    def refresh(self) -> Session | None:
        """The session as stored now (totals after a turn)."""
        if self.session is not None:
            self.session = self.store.sessions.get(self.session.id) or self.session
        return self.session

    # --- turns ------------------------------------------------------------------------------

    async def turn(
        self,
        text: str,
        control: TurnControl,
        on_text: Callable[[str], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> TurnResult:
        for warning in await self.ensure_tools():
            if on_notice is not None:
                on_notice(warning)
        if self.session is None:
            self.session = await self.engine.open_session(SOURCE, self.cwd)
        self._loop = asyncio.get_running_loop()
        session = self.session
        result = await self.engine.run_turn(session.id, text, control, on_text, on_notice)
        self.refresh()
        self.after_turn(session, text, result)
        return result

    def after_turn(
        self, session: Session, text: str, result: TurnResult, *, review: bool = True
    ) -> None:
        """What happens once the reply is out: the external memory provider observes the
        turn and (unless ``review`` is False) a background review may start; neither delays
        the next prompt."""
        if self.memory.provider is not None:
            record = TurnRecord(
                session_id=session.id,
                source=session.source,
                user_scope=session.user_scope,
                user_text=text,
                reply=result.text,
                status=result.status,
                tool_calls=result.tool_calls,
            )
            asyncio.get_running_loop().run_in_executor(None, self.memory.observe, record)
        if review:
            self.reviews.after_turn(session, text, result)

    async def compact(
        self, focus: str | None = None, on_notice: Callable[[str], None] | None = None
    ) -> str | None:
        """``/compact [FOCUS]`` on the current session: None when compacted, else why not."""
        if self.session is None:
            return "this chat has no messages yet"
        self._loop = asyncio.get_running_loop()
        why_not = await self.engine.compact_session(self.session.id, focus, on_notice)
        self.refresh()
        return why_not

    # --- model ------------------------------------------------------------------------------

    async def switch_model(self, provider: str | None, model: str | None) -> ModelSetup:
        """Use another model from the next turn on (strict: no fallbacks); raises
        NoProvider and keeps the current one if it cannot be used."""
        setup = model_setup(self.app.host, self.app.settings, provider, model)
        old = self.setup
        self.setup, self.engine = setup, self._engine(setup)
        await _close_routes(old)
        return setup

    async def aclose(self, reason: str = "cli_exit", review_seconds: float = DRAIN_SECONDS) -> None:
        await self.reviews.drain(review_seconds)
        await asyncio.to_thread(self.memory.close)
        await asyncio.to_thread(self.end_session, reason)  # a container takes a moment to go
        await asyncio.to_thread(self.tool_env.close)
        await self.sources.aclose()
        await self.engine.finish_indexing()
        await _close_routes(self.setup)
        await self.compression.aclose()
        self.store.close()


async def _close_routes(setup: ModelSetup) -> None:
    for route in setup.routes:
        with contextlib.suppress(Exception):  # closing a client must not fail an exit
            await route.provider.aclose()
