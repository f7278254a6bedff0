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
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hermes_kernel.engine import recovery
from hermes_kernel.engine.control import TurnControl
from hermes_kernel.engine.models import ModelRoute, RetryPolicy, Stopped, ask_model
from hermes_kernel.engine.prompt import build_system_prompt
from hermes_kernel.engine.tools import ToolOutcome, ToolRunner
from hermes_kernel.engine.transcript import stored_calls, to_chat
from hermes_kernel.store.errors import StoreError
from hermes_kernel.store.leases import new_holder
from hermes_kernel.store.messages import Disposition
from hermes_kernel.store.sessions import Session, Usage
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
)
from hermes_sdk.models import ChatMessage, ProviderError, ToolSchema


class EngineObserver(Protocol):
    """The hooks the engine calls; :class:`~hermes_kernel.plugins.host.PluginHost` is one."""

    def on_session_start(self, session: SessionInfo) -> None: ...
    def on_session_end(self, session: SessionInfo, reason: str) -> None: ...
    def pre_llm_call(self, call: LLMCall) -> None: ...
    def post_llm_call(self, call: LLMCall, result: LLMResult) -> None: ...
    def pre_tool_call(self, call: ToolCall) -> None: ...
    def post_tool_call(self, call: ToolCall, result: ToolResult) -> None: ...
    def prompt_sections(self, context: PromptContext) -> list[PromptSection]: ...


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

    def prompt_sections(self, context: PromptContext) -> list[PromptSection]:
        return []


@dataclass(frozen=True)
class EngineSettings:
    max_iterations: int = 90
    """Model calls in one turn before it stops (a generous budget, not a target)."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    lease_ttl: float = 60.0
    loop_warn_after: int = 3
    """The same failing call this many times: the model is told to change approach."""
    loop_stop_after: int = 5
    """... and this many times: the turn stops."""


@dataclass(frozen=True)
class TurnResult:
    text: str
    status: str  # done | interrupted | stopped | error | budget | loop
    error: str | None = None
    iterations: int = 0
    tool_calls: int = 0


def _session_info(session: Session) -> SessionInfo:
    return SessionInfo(
        session_id=session.id,
        source=session.source,
        model=session.model,
        provider=session.provider,
        cwd=session.cwd,
    )


def _arguments(raw: str) -> dict[str, Any]:
    try:
        parsed = json.loads(raw or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


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
        self.holder = new_holder()
        self._schemas = [
            ToolSchema(spec.name, spec.description, spec.parameters) for spec in self.tools.values()
        ]

    # --- sessions -----------------------------------------------------------------------

    def start_session(self, source: str, cwd: Path | None = None) -> Session:
        """Create a session with its system prompt, built now and frozen."""
        primary = self.routes[0]
        session = self.store.sessions.create(
            source, model=primary.model, provider=primary.name, cwd=str(cwd) if cwd else None
        )
        context = PromptContext(
            session_id=session.id, source=source, home=str(self.home), cwd=str(cwd) if cwd else None
        )
        prompt = build_system_prompt(self.home, cwd, self.observer.prompt_sections(context))
        self.store.sessions.set_system_prompt(session.id, prompt)
        saved = self.store.sessions.get(session.id)
        assert saved is not None
        self.observer.on_session_start(_session_info(saved))
        return saved

    def resume_session(self, session_id: str) -> Session:
        """Continue a stored session in this process; its prompt is reused as stored."""
        session = self.store.sessions.get(session_id)
        if session is None:
            raise KeyError(f"no session {session_id!r}")
        self.observer.on_session_start(_session_info(session))
        return session

    def end_session(self, session_id: str, reason: str) -> None:
        session = self.store.sessions.get(session_id)
        if session is None:
            raise KeyError(f"no session {session_id!r}")
        self.store.sessions.end(session_id, reason)
        self.observer.on_session_end(_session_info(session), reason)

    # --- a turn -------------------------------------------------------------------------

    async def run_turn(
        self,
        session_id: str,
        user_text: str,
        control: TurnControl | None = None,
        on_text: Callable[[str], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> TurnResult:
        control = control or TurnControl()
        session = await asyncio.to_thread(self.store.sessions.get, session_id)
        if session is None:
            raise KeyError(f"no session {session_id!r}")
        await asyncio.to_thread(
            self.store.leases.acquire, session_id, self.holder, self.settings.lease_ttl
        )
        renewer = asyncio.ensure_future(self._keep_lease(session_id, control, on_notice))
        try:
            return await self._turn(session, user_text, control, on_text, on_notice)
        except StoreError as exc:
            return TurnResult(
                "", "error", error=f"{exc}; the turn stopped before acting on unsaved state"
            )
        finally:
            renewer.cancel()
            with contextlib.suppress(StoreError):  # if not released, it expires on its own
                await asyncio.to_thread(self.store.leases.release, session_id, self.holder)

    async def _keep_lease(
        self, session_id: str, control: TurnControl, on_notice: Callable[[str], None] | None
    ) -> None:
        while True:
            await asyncio.sleep(self.settings.lease_ttl / 3)
            held = await asyncio.to_thread(
                self.store.leases.renew, session_id, self.holder, self.settings.lease_ttl
            )
            if not held:
                if on_notice is not None:
                    on_notice("another process took over this session; stopping")
                control.stop()
                return

    async def _save(self, session_id: str, role: str, content: str | None, **fields: Any) -> None:
        await asyncio.to_thread(self.store.messages.append, session_id, role, content, **fields)

    async def _turn(
        self,
        session: Session,
        user_text: str,
        control: TurnControl,
        on_text: Callable[[str], None] | None,
        on_notice: Callable[[str], None] | None,
    ) -> TurnResult:
        runner = ToolRunner(self.tools, self.home / "tool-results" / session.id, self.secret_values)
        await asyncio.to_thread(
            recovery.repair, self.store.messages, session.id, runner.is_parallel_safe
        )
        stored = await asyncio.to_thread(self.store.messages.of_session, session.id)
        history = [ChatMessage("system", session.system_prompt or "")]
        history += [to_chat(message) for message in stored]
        await self._save(session.id, "user", user_text)
        history.append(ChatMessage("user", user_text))
        failures: dict[tuple[str, str], int] = {}
        calls_made = 0
        partial: list[str] = []  # what the current model call has streamed so far

        def stream(text: str) -> None:
            partial.append(text)
            if on_text is not None:
                on_text(text)

        for iteration in range(1, self.settings.max_iterations + 1):
            if control.soft.is_set() and iteration > 1:
                return TurnResult(
                    "", "interrupted", iterations=iteration - 1, tool_calls=calls_made
                )
            partial.clear()
            try:
                response, route = await ask_model(
                    self.routes,
                    session.id,
                    history,
                    self._schemas,
                    control,
                    self.observer,
                    self.settings.retry,
                    on_text=stream,
                    on_retry=on_notice,
                )
            except Stopped:
                text = "".join(partial)
                if text:  # partial text is kept, marked as interrupted
                    await self._save(session.id, "assistant", text, finish_reason="interrupted")
                return TurnResult(text, "stopped", iterations=iteration, tool_calls=calls_made)
            except ProviderError as exc:
                return TurnResult(
                    "", "error", error=str(exc), iterations=iteration, tool_calls=calls_made
                )
            usage = Usage(
                input_tokens=response.usage.input_tokens,
                output_tokens=response.usage.output_tokens,
                cache_read_tokens=response.usage.cache_read_tokens,
                cache_write_tokens=response.usage.cache_write_tokens,
                reasoning_tokens=response.usage.reasoning_tokens,
            )
            if not response.tool_calls:
                await self._save(
                    session.id,
                    "assistant",
                    response.content,
                    finish_reason=response.finish_reason,
                    reasoning=response.reasoning,
                    usage=usage,
                )
                return TurnResult(
                    response.content, "done", iterations=iteration, tool_calls=calls_made
                )
            # Persist before execute: a crash from here on leaves calls without results,
            # which the next turn repairs instead of silently running them again.
            await self._save(
                session.id,
                "assistant",
                response.content,
                tool_calls=stored_calls(response.tool_calls),
                finish_reason=response.finish_reason,
                reasoning=response.reasoning,
                usage=usage,
            )
            history.append(
                ChatMessage("assistant", response.content, tool_calls=response.tool_calls)
            )
            calls_made += len(response.tool_calls)
            looping = False

            async def persist(outcome: ToolOutcome) -> None:
                nonlocal looping
                content = outcome.content
                if outcome.disposition is Disposition.ERROR:
                    key = (outcome.call.name, outcome.call.arguments)
                    failures[key] = failures.get(key, 0) + 1
                    if failures[key] >= self.settings.loop_warn_after:
                        content += (
                            f"\n[this exact call has now failed {failures[key]} times; "
                            "do something different]"
                        )
                    looping = looping or failures[key] >= self.settings.loop_stop_after
                await self._save(
                    session.id,
                    "tool",
                    content,
                    tool_call_id=outcome.call.id,
                    tool_name=outcome.call.name,
                    disposition=outcome.disposition,
                )
                history.append(
                    ChatMessage(
                        "tool", content, tool_call_id=outcome.call.id, name=outcome.call.name
                    )
                )
                self.observer.post_tool_call(
                    ToolCall(
                        session_id=session.id,
                        call_id=outcome.call.id,
                        tool=outcome.call.name,
                        arguments=_arguments(outcome.call.arguments),
                    ),
                    ToolResult(
                        call_id=outcome.call.id,
                        ok=outcome.disposition is Disposition.OK,
                        content=content,
                        duration_s=outcome.seconds,
                    ),
                )

            def before(call: Any) -> None:
                self.observer.pre_tool_call(
                    ToolCall(
                        session_id=session.id,
                        call_id=call.id,
                        tool=call.name,
                        arguments=_arguments(call.arguments),
                    )
                )

            await runner.run_round(response.tool_calls, control, persist, before)
            if control.stopped:
                return TurnResult(
                    response.content, "stopped", iterations=iteration, tool_calls=calls_made
                )
            if looping:
                return TurnResult(
                    "",
                    "loop",
                    error="the model kept repeating a failing tool "
                    f"call ({self.settings.loop_stop_after} times); the turn stopped",
                    iterations=iteration,
                    tool_calls=calls_made,
                )
            del route  # which route answered is recorded by the hooks
        return TurnResult(
            "",
            "budget",
            error=f"stopped after {self.settings.max_iterations} "
            "model calls (agent.max_iterations)",
            iterations=self.settings.max_iterations,
            tool_calls=calls_made,
        )
