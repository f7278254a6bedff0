"""What a turn uses of its engine, handed over whole: a turn reads these parts and never
reaches back into the engine that started it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hermes_kernel.config.defaults import AGENT_MAX_ITERATIONS, TOOLS_TIMEOUT_SECONDS
from hermes_kernel.engine.compaction import Compactor
from hermes_kernel.engine.control import TurnControl
from hermes_kernel.engine.media import MediaSupport
from hermes_kernel.engine.models import ModelRoute, RetryPolicy, RouteHealth
from hermes_kernel.store.sessions import Session
from hermes_kernel.store.state import StateStore
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
from hermes_sdk.budget import Budget
from hermes_sdk.models import ModelUsage, ToolSchema
from hermes_sdk.tooling import ToolContext

__all__ = ["EngineObserver", "EngineParts", "EngineSettings", "NoObserver", "ToolContextFactory"]


class EngineObserver(Protocol):
    """The hooks the engine calls; :class:`~hermes_kernel.plugins.host.PluginHost` is one.
    Its methods must not raise: the host isolates each plugin's hook for that reason. The
    per-call ones may be coroutine functions (the host's are: hooks run off the loop, under
    a deadline); the session ones are called from a worker thread, or before a loop runs."""

    def on_session_start(self, session: SessionInfo) -> None: ...
    def on_session_end(self, session: SessionInfo, reason: str) -> None: ...
    def pre_llm_call(self, call: LLMCall) -> Awaitable[None] | None: ...
    def post_llm_call(self, call: LLMCall, result: LLMResult) -> Awaitable[None] | None: ...
    def pre_tool_call(self, call: ToolCall) -> Awaitable[None] | None: ...
    def post_tool_call(self, call: ToolCall, result: ToolResult) -> Awaitable[None] | None: ...
    def tool_gate(self, call: ToolCall) -> Awaitable[Mapping[str, Any] | str]:
        """The plugins' gates on a call about to run: the arguments to run it with, or the
        refusal the model is told (a gate that fails refuses)."""
        ...

    def turn_context(self, session: SessionInfo, text: str) -> Awaitable[list[str]]:
        """Blocks for this turn's user message, for the model only."""
        ...

    def transform_tool_result(self, call: ToolCall, result: str) -> Awaitable[str]: ...
    def transform_reply(self, session: SessionInfo, text: str) -> Awaitable[str]: ...
    def on_turn_end(self, turn: TurnInfo) -> Awaitable[None] | None: ...
    def tool_progress(self, call: ToolCall, text: str) -> None:
        """A running call reported progress (``report_progress``); on the event loop."""
        ...

    def prompt_sections(self, context: PromptContext) -> list[PromptSection]: ...
    def observes(self, hook: str) -> bool:
        """Whether anything implements ``hook`` ("on_session_start"): a hook nobody
        implements costs the engine no hop to a worker thread."""
        ...


ToolContextFactory = Callable[[Session, TurnControl], ToolContext]


class NoObserver:
    """An engine with no plugins watching."""

    def on_session_start(self, session: SessionInfo) -> None:
        pass

    def on_session_end(self, session: SessionInfo, reason: str) -> None:
        pass

    def pre_llm_call(self, call: LLMCall) -> None:
        pass

    def post_llm_call(self, call: LLMCall, result: LLMResult) -> None:
        pass

    def pre_tool_call(self, call: ToolCall) -> None:
        pass

    def post_tool_call(self, call: ToolCall, result: ToolResult) -> None:
        pass

    async def tool_gate(self, call: ToolCall) -> Mapping[str, Any] | str:
        return call.arguments

    async def turn_context(self, session: SessionInfo, text: str) -> list[str]:
        return []

    async def transform_tool_result(self, call: ToolCall, result: str) -> str:
        return result

    async def transform_reply(self, session: SessionInfo, text: str) -> str:
        return text

    def on_turn_end(self, turn: TurnInfo) -> None:
        pass

    def tool_progress(self, call: ToolCall, text: str) -> None:
        pass

    def prompt_sections(self, context: PromptContext) -> list[PromptSection]:
        return []

    def observes(self, hook: str) -> bool:
        return getattr(type(self), hook) is not getattr(NoObserver, hook)  # overridden


@dataclass(frozen=True)
class EngineSettings:
    max_iterations: int = AGENT_MAX_ITERATIONS
    """Model calls in one turn before it stops (a generous budget, not a target)."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    lease_ttl: float = 60.0
    loop_warn_after: int = 3
    """The same failing call this many times: the model is told to change approach."""
    loop_stop_after: int = 5
    """... and this many times: the turn stops."""
    tool_timeout: float = TOOLS_TIMEOUT_SECONDS
    """Seconds a tool call may run (``tools.timeout_seconds``) unless its spec sets its own."""
    budget: Budget = field(default_factory=Budget)
    """Spending limits (``budget:``), checked before every model call."""
    log_content: bool = False
    """The activity log adds what was said (``logging.content``)."""
    reasoning_effort: str | None = None
    """``model.reasoning_effort``: how hard a model that reasons thinks; None: its default."""


@dataclass(frozen=True, kw_only=True)
class EngineParts:
    """The engine's parts as one frozen value: every turn of an engine gets the same one."""

    store: StateStore
    routes: tuple[ModelRoute, ...]
    tools: Mapping[str, ToolSpec]
    schemas: tuple[ToolSchema, ...]
    home: Path
    observer: EngineObserver
    settings: EngineSettings
    secret_values: tuple[str, ...]
    pricing: Callable[[str, ModelUsage], float | None]
    """Estimated cost of a call in US dollars; None when the price is unknown."""
    tool_context: ToolContextFactory | None
    """Builds what tools with ``takes_context`` get (backend, user), once per turn."""
    prefetch: Callable[[Session, str], str | None] | None
    """What an external memory provider recalls for a user message (must not raise)."""
    compactor: Compactor | None
    """Keeps a session's view within the model's window; None: never compacted."""
    safety_net: bool
    """The compaction safety net (``compression.unattended_threshold``) applies even with
    compaction turned off: a front-end whose sessions nobody can ``/compact`` asked for it."""
    health: RouteHealth
    rebuilt_prompt: Callable[[Session], str]
    """The session's system prompt built again, for a compaction."""
    media: MediaSupport
    """Reads the files users send, and shows them to the model (images, or their text)."""
    config: Mapping[str, Any] = field(default_factory=dict)
    """config.yaml as the agent loaded it: what observers see in ``SessionInfo.config``."""

    def session_info(self, session: Session) -> SessionInfo:
        """``session`` as observers see it."""
        return session_info(session, self.home, self.config)


def session_info(
    session: Session, home: Path, config: Mapping[str, Any] | None = None
) -> SessionInfo:
    return SessionInfo(
        session_id=session.id,
        home=str(home),
        config=config or {},
        source=session.source,
        model=session.model,
        provider=session.provider,
        cwd=session.cwd,
        user_scope=session.user_scope,
    )
