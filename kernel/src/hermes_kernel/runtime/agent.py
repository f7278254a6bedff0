"""The agent of one process, as the runtime drives it: the model routes, the tools, the
store and the turn engine, built once and shared by every session the runtime opens."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hermes_commons.text import one_line
from hermes_kernel.config.defaults import (
    AGENT_MAX_ITERATIONS,
    AGENT_RETRIES,
    LOGGING_CONTENT,
    TOOLS_TIMEOUT_SECONDS,
)
from hermes_kernel.engine.activity import ActivityLog
from hermes_kernel.engine.budget import budget_from_config
from hermes_kernel.engine.models import ModelRoute, RetryPolicy
from hermes_kernel.engine.turn import EngineSettings, TurnEngine, TurnResult
from hermes_kernel.learning.review import DRAIN_SECONDS, REVIEW_ITERATIONS, Reviews
from hermes_kernel.learning.triggers import LearningSettings
from hermes_kernel.memory.external import ExternalMemory
from hermes_kernel.plugins.gates import GateVerdict
from hermes_kernel.plugins.store_engines import open_state_store
from hermes_kernel.providers.routing import ModelSetup, model_setup, pricing
from hermes_kernel.runtime.compression import Compression
from hermes_kernel.runtime.media import Transcribers, media_support
from hermes_kernel.safety.approval import (
    Answer,
    ApprovalRequest,
    Approvals,
    Approver,
    NobodyToAsk,
)
from hermes_kernel.safety.environment import secret_environment_values
from hermes_kernel.safety.judge import model_judge
from hermes_kernel.store.sessions import Session
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
    TurnInfo,
)
from hermes_sdk.memory import TurnRecord
from hermes_sdk.runtime import Runtime
from hermes_sdk.terminal import CommandRefused

if TYPE_CHECKING:
    from hermes_kernel.app import App

log = logging.getLogger("hermes.agent")

GATE_SHOWN_CHARS = 500
"""A tool call a gate asks about, as the question shows it."""


class ToolEvents(Protocol):
    """What a shell shows while tools run."""

    def tool_started(self, call: ToolCall) -> None: ...
    def tool_progress(self, call: ToolCall, text: str) -> None: ...
    def tool_finished(self, call: ToolCall, result: ToolResult) -> None: ...


@dataclass(frozen=True)
class AgentOptions:
    provider: str | None = None
    model: str | None = None
    toolsets: tuple[str, ...] | None = None
    """Only tools of these toolsets; None: agent.toolsets from config, else every one."""


class _Observer:
    """The plugins' lifecycle hooks, plus the shell's view of tool calls."""

    def __init__(
        self,
        app: App,
        events: ToolEvents | None,
        memory: ExternalMemory,
        activity: ActivityLog | None = None,
        approvals: Approvals | None = None,
    ) -> None:
        self._host = app.host
        self.events = events
        self.memory = memory
        self.activity = activity or ActivityLog()
        self.approvals = approvals
        """Where a gate's question goes (as an approval); None: nobody can answer it."""

    def on_session_start(self, session: SessionInfo) -> None:
        self._host.on_session_start(session)

    def on_session_end(self, session: SessionInfo, reason: str) -> None:
        self._host.on_session_end(session, reason)

    async def pre_llm_call(self, call: LLMCall) -> None:
        await self._host.pre_llm_call(call)

    async def post_llm_call(self, call: LLMCall, result: LLMResult) -> None:
        self.activity.model_call(call, result)
        await self._host.post_llm_call(call, result)

    async def pre_tool_call(self, call: ToolCall) -> None:
        if self.events is not None:
            self.events.tool_started(call)
        await self._host.pre_tool_call(call)

    async def post_tool_call(self, call: ToolCall, result: ToolResult) -> None:
        self.activity.tool_call(call, result)
        if self.events is not None:
            self.events.tool_finished(call, result)
        await self._host.post_tool_call(call, result)

    async def tool_gate(self, call: ToolCall) -> Mapping[str, Any] | str:
        return await gated_call(await self._host.tool_gate(call), call, self.approvals)

    async def turn_context(self, session: SessionInfo, text: str) -> list[str]:
        return await self._host.turn_context(session, text)

    async def transform_tool_result(self, call: ToolCall, result: str) -> str:
        return await self._host.transform_tool_result(call, result)

    async def transform_reply(self, session: SessionInfo, text: str) -> str:
        return await self._host.transform_reply(session, text)

    async def on_turn_end(self, turn: TurnInfo) -> None:
        await self._host.on_turn_end(turn)

    def tool_progress(self, call: ToolCall, text: str) -> None:
        if self.events is not None:
            self.events.tool_progress(call, text)

    def prompt_sections(self, context: PromptContext) -> list[PromptSection]:
        return [*self._host.prompt_sections(context), *self.memory.prompt_sections(context)]

    def observes(self, hook: str) -> bool:
        return self._host.implements(f"hermes_{hook}")


async def gated_call(
    verdict: GateVerdict, call: ToolCall, approvals: Approvals | None
) -> Mapping[str, Any] | str:
    """What the gates' ``verdict`` means for ``call``: the arguments to run it with, or the
    refusal the model is told; a gate's question goes to the user as an approval."""
    if verdict.denied is not None:
        return f"refused: {verdict.denied}"
    if verdict.asks:
        reason = "; ".join(verdict.asks)
        if approvals is None:
            return f"refused: a plugin asks first ({reason}), and nobody can answer here"
        arguments = json.dumps(dict(verdict.arguments), ensure_ascii=False, default=str)
        shown = one_line(f"{call.tool} {arguments}", GATE_SHOWN_CHARS)
        try:
            # Worded as the approval's question reads it: "It is held by a plugin's gate: ..."
            held = f"is held by a plugin's gate: {reason}"
            rule = f"gate:{'+'.join(sorted(verdict.asked_by))}:{call.tool}"
            await asyncio.to_thread(approvals.ask_gate, shown, held, "tool", call.session_id, rule)
        except CommandRefused as exc:
            return str(exc)
    return verdict.arguments


def _reasoning_effort(model: Any) -> str | None:
    """``model.reasoning_effort`` (validated with config.yaml); None when unset."""
    effort = model.get("reasoning_effort") if isinstance(model, Mapping) else None
    return str(effort) if effort else None


def choose_tools(
    specs: list[ToolSpec],
    toolsets: tuple[str, ...] | None,
    opt_in: frozenset[str] = frozenset(),
) -> tuple[dict[str, ToolSpec], list[str]]:
    """The tools of the chosen toolsets, and a warning per toolset nobody provides. With
    none chosen: every toolset's but the ``opt_in`` ones'."""
    if toolsets is None:
        return {spec.name: spec for spec in specs if spec.toolset not in opt_in}, []
    known = {spec.toolset for spec in specs}
    warnings = [
        f"toolset {name!r} is not installed (known: {', '.join(sorted(known)) or 'none'})"
        for name in toolsets
        if name not in known
    ]
    return {spec.name: spec for spec in specs if spec.toolset in toolsets}, warnings


class Agent:
    """Raises NoModel (one line to act on) if no model can be used."""

    def __init__(
        self,
        app: App,
        options: AgentOptions,
        events: ToolEvents | None = None,
        *,
        approver: Approver | None = None,
        ask: Ask | None = None,
        ask_for: Callable[[str], Ask] | None = None,
        on_learned: Callable[[str], None] | None = None,
        cwd: Path | None = None,
        unattended: bool = False,
        tool_runtime: Callable[[Agent], Runtime] | None = None,
    ) -> None:
        self.app = app
        self.unattended = unattended
        """Nobody can ``/compact`` its sessions: the compaction safety net applies."""
        self.options = options
        self.cwd = cwd or Path.cwd()
        settings = app.settings
        agent_section = settings.raw.get("agent") or {}
        self.engine_settings = EngineSettings(
            max_iterations=int(agent_section.get("max_iterations", AGENT_MAX_ITERATIONS)),
            retry=RetryPolicy(attempts=max(1, int(agent_section.get("retries", AGENT_RETRIES)))),
            tool_timeout=float(
                (settings.raw.get("tools") or {}).get("timeout_seconds", TOOLS_TIMEOUT_SECONDS)
            ),
            budget=budget_from_config(settings.raw.get("budget")),
            log_content=bool((settings.raw.get("logging") or {}).get("content", LOGGING_CONTENT)),
            reasoning_effort=_reasoning_effort(settings.raw.get("model")),
        )
        toolsets = options.toolsets
        if toolsets is None and agent_section.get("toolsets") is not None:
            toolsets = tuple(agent_section["toolsets"])
        added = agent_section.get("add_toolsets") or ()
        self.opt_in = frozenset(
            spec.name for spec in app.host.toolsets() if spec.opt_in and spec.name not in added
        )
        """Toolsets given only when asked for by name."""
        self.toolsets = toolsets
        app.host.load_observers()
        self.memory = ExternalMemory(app.host, settings)
        self.sources = ToolSources(app.host, settings, str(cwd or Path.cwd()))
        self.tools, self.warnings = choose_tools(self.all_tools(), toolsets, self.opt_in)
        self.warnings += self.memory.warnings
        self.loop: asyncio.AbstractEventLoop | None = None
        """The loop turns run on (the runtime sets it): a judge asks the model from a thread."""
        self.compression = Compression(app.host, settings)
        self.transcribers = Transcribers(app.host, settings)
        self.media = media_support(
            app.host, settings, self.transcribers, self.compression.auxiliary
        )

        def aside() -> ModelRoute:
            """The model asked on the side (a judge, a summary): auxiliary, else primary."""
            return self.compression.auxiliary() or self.setup.routes[0]

        self.store = open_state_store(app.host, settings.home, settings.document.data)
        self.opened_by_tools: set[str] = set()
        """Sessions that tools opened (work handed to other agents): nobody approves their
        commands."""
        self._tool_runtime: Runtime | None = None
        self._make_tool_runtime = tool_runtime
        self.tool_env = ToolEnvironment(
            app.host,
            settings,
            approver=self._approver_for(approver),
            ask=ask,
            judge=model_judge(aside, lambda: self.loop),
            cwd=str(self.cwd),
            store=self.store,
            aside_route=aside,
            ask_for=ask_for,
            media=self.media,
        )
        self.warnings += self.tool_env.warnings
        self.tool_env.runtime = self.tool_runtime
        self.observer = _Observer(
            app,
            events,
            self.memory,
            ActivityLog(self.engine_settings.log_content),
            self.tool_env.approvals,
        )
        self.background_watchers: list[Callable[[str], None]] = []
        """Told one line per piece of background work done (a review kept something)."""
        if on_learned is not None:
            self.background_watchers.append(on_learned)
        self.reviews = Reviews(
            self.store,
            self._review_engine,
            self.tools,
            LearningSettings.from_config(settings.raw),
            self.tell_background,
            specs=app.host.reviews(),
        )
        self.setup: ModelSetup = model_setup(app.host, settings, options.provider, options.model)
        self.warnings += self.setup.warnings
        self.engine = self._engine(self.setup)

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
            observer=(
                _Observer(
                    self.app, None, self.memory, self.observer.activity, self.tool_env.approvals
                )
                if review
                else self.observer
            ),
            settings=engine_settings or self.engine_settings,
            secret_values=[
                *settings.secrets.values(),
                *secret_environment_values(settings.environ),
            ],
            pricing=pricing(self.app.host),
            tool_context=self.tool_env.context,
            config=settings.raw,
            provided=self.tool_env.provided,
            prefetch=recall,
            compactor=self.compression.compactor(
                lambda name: name in tools and tools[name].parallel_safe
            ),
            safety_net=self.unattended,
            media=self.media,
        )
        return engine

    def tell_background(self, line: str) -> None:
        for watcher in list(self.background_watchers):
            try:
                watcher(line)
            except Exception:
                log.debug("a background watcher failed", exc_info=True)

    def _approver_for(self, approver: Approver | None) -> Approver:
        def approve(request: ApprovalRequest) -> Answer | None:
            if request.session_id in self.opened_by_tools:
                raise NobodyToAsk("a task a tool handed off has nobody to approve its commands")
            if approver is None:
                raise NobodyToAsk("no interactive terminal")
            return approver(request)

        return approve

    def tool_runtime(self) -> Runtime:
        """The runtime a tool starts agents on (tasks it hands off), over this agent: built on
        first use, by the factory this agent was given."""
        if self._tool_runtime is None:
            if self._make_tool_runtime is None:
                raise RuntimeError("this agent offers its tools no runtime to start agents on")
            self._tool_runtime = self._make_tool_runtime(self)
        return self._tool_runtime

    def all_tools(self) -> list[ToolSpec]:
        """Every tool the plugins, the memory provider and the tool sources offer, before
        toolsets choose."""
        return [*self.app.host.tools(), *self.memory.tools(), *self.sources.tools()]

    async def ensure_tools(self) -> list[str]:
        """Start the tool sources (a plugin's servers ...) if nobody has: before a first model
        call. Their tools join this chat's; the warnings are new ones, one line each."""
        if self.sources.started:
            return []
        warnings = await self.sources.start()
        added = self.sources.tools()
        if added:
            chosen, _unknown = choose_tools(added, self.toolsets, self.opt_in)
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

    # --- turns ------------------------------------------------------------------------------

    def after_turn(
        self, session: Session, text: str, result: TurnResult, *, reviewable: bool = True
    ) -> None:
        """What happens once the reply is out: the external memory provider observes the
        turn and (for a ``reviewable`` session) a background review may start; neither
        delays the next prompt."""
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
        if reviewable:
            self.reviews.after_turn(session, text, result)

    async def aclose(self, review_seconds: float = DRAIN_SECONDS) -> None:
        await self.reviews.drain(review_seconds)
        await asyncio.to_thread(self.memory.close)
        await asyncio.to_thread(self.tool_env.close)
        await self.sources.aclose()
        await self.engine.finish_indexing()
        await _close_routes(self.setup)
        await self.compression.aclose()
        await self.transcribers.aclose()
        self.store.close()


async def _close_routes(setup: ModelSetup) -> None:
    for route in setup.routes:
        with contextlib.suppress(Exception):  # closing a client must not fail an exit
            await route.provider.aclose()
