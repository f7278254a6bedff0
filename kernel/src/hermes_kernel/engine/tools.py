"""Run one round of tool calls: every call gets exactly one result, whatever happens.

Read-only tools marked ``parallel_safe`` run concurrently (at most 8 at once); the others
run one at a time, in order. Calls go through the SDK's dispatch
(:mod:`hermes_sdk.tool_calls`), the same one the conformance suites use. An unknown tool,
arguments that are not a JSON object or do not fit the tool's schema, or a handler that
raises (``SystemExit`` included) all become error results the model sees. Results over the
size budget (per result and per round) are saved to a file and replaced by a preview. A hard
stop skips calls not yet started and gives a running one about a second before its effect is
recorded as unknown; a call past its deadline (the spec's ``timeout_seconds``, else
``tools.timeout_seconds``) is recorded the same way, and the turn goes on. Handlers that are
not coroutines run in daemon workers, so one that never returns never holds up an exit.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hermes_commons.redact import redact_text
from hermes_kernel.config.defaults import TOOLS_TIMEOUT_SECONDS
from hermes_kernel.engine.control import TurnControl
from hermes_kernel.plugins.workers import PluginExit, plugin_workers
from hermes_kernel.store.messages import Disposition
from hermes_sdk import ToolSpec
from hermes_sdk.models import ToolCallRequest
from hermes_sdk.terminal import BackendUnavailable, CommandRefused
from hermes_sdk.tool_calls import ArgumentsRejected, call_tool, check_arguments
from hermes_sdk.tooling import (
    ToolCaller,
    ToolContext,
    ToolFailed,
    call_tools_with,
    show_progress_with,
)

RESULT_LIMIT = 100_000
ROUND_LIMIT = 200_000
ERROR_LIMIT = 2_000
FAILURE_LIMIT = 8_000  # a ToolFailed's text: a traceback, meant to be read
PREVIEW = 2_000
PARALLEL_LIMIT = 8
RAN = frozenset({Disposition.OK, Disposition.ERROR})
"""Outcomes of a call that ran (returned or raised): what result transforms see."""
GateCheck = Callable[[ToolCallRequest, Mapping[str, Any]], Awaitable[Mapping[str, Any] | str]]
"""Judges a call before it runs: the arguments to run it with, or the refusal's text."""
STOP_GRACE_SECONDS = 1.0


@dataclass(frozen=True)
class ToolOutcome:
    call: ToolCallRequest
    content: str
    disposition: Disposition
    seconds: float = 0.0


Persist = Callable[[ToolOutcome], Awaitable[None]]


def _text(value: Any) -> str:
    if value is None:
        return "(no output)"
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _not_started(call: ToolCallRequest) -> ToolOutcome:
    return ToolOutcome(call, "skipped: not started (the turn was stopped)", Disposition.SKIPPED)


def _stopped(control: TurnControl) -> bool:
    """Whether the turn is stopped now (a call, so a check made before does not count)."""
    return control.stopped


class ToolRunner:
    def __init__(
        self,
        tools: Mapping[str, ToolSpec],
        spill_dir: Path,
        secret_values: Iterable[str] = (),
        *,
        result_limit: int = RESULT_LIMIT,
        round_limit: int = ROUND_LIMIT,
        context: Callable[[], ToolContext] | None = None,
        timeout: float = TOOLS_TIMEOUT_SECONDS,
    ) -> None:
        self.tools = dict(tools)
        self.timeout = timeout
        self.context = context
        self._context: ToolContext | None = None
        self.spill_dir = spill_dir
        self.secret_values = list(secret_values)
        self.result_limit = result_limit
        self.round_limit = round_limit
        self.progress: Callable[[ToolCallRequest, str], None] | None = None
        """Told each line a running call reports (``report_progress``), from any thread."""
        self.caller_for: Callable[[ToolCallRequest], ToolCaller | None] | None = None
        """How a running call calls other tools (``ToolContext.tool_caller``); None: never."""
        self.gate: GateCheck | None = None
        """The plugins' gates, asked before each call runs (see :mod:`hermes_sdk.gates`)."""
        self.transform: Callable[[ToolCallRequest, str], Awaitable[str]] | None = None
        """The plugins' transforms of a result that ran (before the size limits apply)."""

    def is_parallel_safe(self, name: str) -> bool:
        spec = self.tools.get(name)
        return spec is not None and spec.parallel_safe

    # --- one call -----------------------------------------------------------------------

    def _prepare(self, call: ToolCallRequest) -> tuple[ToolSpec, dict[str, Any]] | ToolOutcome:
        spec = self.tools.get(call.name)
        if spec is None:
            available = ", ".join(sorted(self.tools)) or "none"
            return ToolOutcome(
                call,
                f"error: unknown tool {call.name!r}; available: {available}",
                Disposition.ERROR,
            )
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError as exc:
            return ToolOutcome(
                call,
                f"error: arguments are not valid JSON ({exc}); the tool did not run",
                Disposition.ERROR,
            )
        if not isinstance(arguments, dict):
            return ToolOutcome(
                call,
                "error: arguments must be a JSON object, got "
                f"{type(arguments).__name__}; the tool did not run",
                Disposition.ERROR,
            )
        try:
            check_arguments(spec, arguments)
        except ArgumentsRejected as exc:
            return ToolOutcome(
                call,
                f"error: the arguments do not fit {call.name}'s schema ({exc}); the tool did "
                "not run: call it again with arguments its schema allows",
                Disposition.ERROR,
            )
        return spec, arguments

    async def _gated(
        self, call: ToolCallRequest, spec: ToolSpec, arguments: dict[str, Any]
    ) -> dict[str, Any] | ToolOutcome:
        """The arguments the gates let the call run with, or its refusal."""
        assert self.gate is not None
        try:
            judged = await self.gate(call, copy.deepcopy(arguments))
        except Exception as exc:  # noqa: BLE001 - a gate that cannot judge never opens
            message = self._error(call, exc).content.removeprefix("error: ")
            return ToolOutcome(
                call,
                f"refused: the gates could not judge this call ({message}); "
                "nothing runs that a gate cannot judge",
                Disposition.ERROR,
            )
        if isinstance(judged, str):
            return ToolOutcome(call, judged, Disposition.ERROR)
        rewritten = dict(judged)
        if rewritten != arguments:
            try:
                check_arguments(spec, rewritten)
            except ArgumentsRejected as exc:
                return ToolOutcome(
                    call,
                    f"refused: a plugin's gate rewrote the arguments into ones {call.name}'s "
                    f"schema refuses ({exc}); nothing runs that a gate cannot judge",
                    Disposition.ERROR,
                )
        return rewritten

    def tool_context(self) -> ToolContext:
        """The context tools with ``takes_context`` get, built on first use in this turn."""
        if self._context is None:
            # An engine built without a tool environment (tests, benches): no backend.
            self._context = (
                self.context()
                if self.context is not None
                else ToolContext(session_id="", home="", cwd=str(Path.cwd()))
            )
        return self._context

    async def _invoke(
        self, spec: ToolSpec, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> Any:
        given = context if context is not None else self.tool_context
        try:
            return await call_tool(spec, arguments, given, offload=plugin_workers.run)
        except (SystemExit, KeyboardInterrupt) as exc:
            # From a coroutine handler: as itself it would end the event loop, not the call.
            raise PluginExit(exc) from None

    def _degraded(self, exc: BackendUnavailable) -> str:
        report = {
            "status": "degraded",
            "error": redact_text(" ".join(str(exc).split()), self.secret_values),
            "retry_hint": exc.retry_hint,
        }
        return json.dumps(report, ensure_ascii=False)

    def _error(self, call: ToolCallRequest, exc: BaseException) -> ToolOutcome:
        message = redact_text(" ".join(f"{type(exc).__name__}: {exc}".split()), self.secret_values)
        if len(message) > ERROR_LIMIT:
            message = message[:ERROR_LIMIT] + " […]"
        return ToolOutcome(call, f"error: {message}", Disposition.ERROR)

    async def run_one(
        self,
        call: ToolCallRequest,
        control: TurnControl,
        *,
        nested: bool = False,
        tool_context: ToolContext | None = None,
    ) -> ToolOutcome:
        """One call's outcome; a ``nested`` one (made by a running call) cannot nest again.
        ``tool_context`` replaces the turn's (a nested call's own cancel event)."""
        if control.stopped:
            return _not_started(call)
        prepared = self._prepare(call)
        if isinstance(prepared, ToolOutcome):
            return prepared
        spec, arguments = prepared
        if self.gate is not None:
            gated = await self._gated(call, spec, arguments)
            if isinstance(gated, ToolOutcome):
                return gated
            arguments = gated
            if _stopped(control):  # stopped while the gates (or the user) were asked
                return _not_started(call)
        outcome = await self._run(call, control, spec, arguments, nested, tool_context)
        if self.transform is not None and outcome.disposition in RAN:
            content = await self.transform(call, outcome.content)
            # A transform's text is redacted again: it may have put back what was taken out.
            outcome = replace(outcome, content=redact_text(content, self.secret_values))
        return outcome

    async def _run(
        self,
        call: ToolCallRequest,
        control: TurnControl,
        spec: ToolSpec,
        arguments: dict[str, Any],
        nested: bool,
        tool_context: ToolContext | None,
    ) -> ToolOutcome:
        """Run a call whose arguments the schema and the gates let through."""
        started = time.perf_counter()
        # The call runs in a context of its own, where report_progress reaches the user.
        context = contextvars.copy_context()
        if self.progress is not None:
            show = self.progress
            context.run(show_progress_with, lambda text: show(call, text))
        caller = None if nested or self.caller_for is None else self.caller_for(call)
        context.run(call_tools_with, caller)
        task = asyncio.get_running_loop().create_task(
            self._invoke(spec, arguments, tool_context), context=context
        )
        deadline = spec.timeout_seconds or self.timeout
        try:
            await asyncio.wait(
                {task, control.stop_signal()}, timeout=deadline, return_when=asyncio.FIRST_COMPLETED
            )
            if not task.done() and not control.stopped:
                return ToolOutcome(
                    call,
                    f"timed out after {deadline:g} s and was abandoned: its effect is UNKNOWN; "
                    "check before retrying",
                    Disposition.UNKNOWN,
                    time.perf_counter() - started,
                )
            if not task.done():
                await asyncio.wait({task}, timeout=STOP_GRACE_SECONDS)
            if not task.done():
                return ToolOutcome(
                    call,
                    "interrupted while running: its effect is UNKNOWN; check before retrying",
                    Disposition.UNKNOWN,
                    time.perf_counter() - started,
                )
        finally:
            if not task.done():  # stopped, or this turn itself was cancelled
                task.cancel()  # a coroutine stops; a thread runs on, unobserved
        seconds = time.perf_counter() - started
        try:
            value = task.result()
        except CommandRefused as exc:
            return ToolOutcome(
                call, redact_text(str(exc), self.secret_values), Disposition.ERROR, seconds
            )
        except BackendUnavailable as exc:
            return ToolOutcome(call, self._degraded(exc), Disposition.ERROR, seconds)
        except ToolFailed as exc:
            text = redact_text(str(exc), self.secret_values)
            if len(text) > FAILURE_LIMIT:
                text = text[:FAILURE_LIMIT] + " […]"
            return ToolOutcome(call, f"error: {text}", Disposition.ERROR, seconds)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a tool's failure is a result
            failed = self._error(call, exc.original if isinstance(exc, PluginExit) else exc)
            return ToolOutcome(call, failed.content, failed.disposition, seconds)
        content = redact_text(_text(value), self.secret_values)
        return ToolOutcome(call, content, Disposition.OK, seconds)

    # --- budgets ------------------------------------------------------------------------

    def _spill(self, outcome: ToolOutcome, reason: str, round_key: str) -> ToolOutcome:
        # Servers reuse call ids in every round: the round keeps the file names apart.
        safe_id = re.sub(r"[^A-Za-z0-9_.-]", "_", outcome.call.id) or "call"
        path = self.spill_dir / round_key / f"{safe_id}.txt"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(outcome.content, encoding="utf-8")
            where = f"the full output is saved in {path}"
        except OSError as exc:
            where = f"the full output could not be saved ({exc.strerror})"
        preview = outcome.content[:PREVIEW]
        note = f"\n[… {len(outcome.content):,} characters, {reason}; {where}]"
        return ToolOutcome(outcome.call, preview + note, outcome.disposition, outcome.seconds)

    def budgeted(self, outcome: ToolOutcome, round_key: str) -> ToolOutcome:
        """``outcome`` within the per-result limit (a nested call's: it has no round)."""
        return self._budget(outcome, 0, round_key)

    def _budget(self, outcome: ToolOutcome, used: int, round_key: str) -> ToolOutcome:
        if len(outcome.content) > self.result_limit:
            reason = f"over the {self.result_limit:,}-character limit"
            return self._spill(outcome, reason, round_key)
        if used + len(outcome.content) > self.round_limit:
            reason = f"over this round's {self.round_limit:,}-character budget"
            return self._spill(outcome, reason, round_key)
        return outcome

    # --- a round ------------------------------------------------------------------------

    async def run_round(
        self,
        calls: Sequence[ToolCallRequest],
        control: TurnControl,
        persist: Persist,
        before: Callable[[ToolCallRequest], Awaitable[None]] | None = None,
        round_key: str = "round",
    ) -> list[ToolOutcome]:
        """Run ``calls``; ``persist`` each outcome (in call order) as soon as it is known."""
        outcomes: list[ToolOutcome] = []
        used = 0
        limit = asyncio.Semaphore(PARALLEL_LIMIT)

        async def one(call: ToolCallRequest) -> ToolOutcome:
            async with limit:
                if before is not None:  # even for a call about to be skipped: hooks pair up
                    await before(call)
                return await self.run_one(call, control)

        index = 0
        while index < len(calls):
            batch = [calls[index]]
            if self.is_parallel_safe(calls[index].name):
                while index + len(batch) < len(calls) and self.is_parallel_safe(
                    calls[index + len(batch)].name
                ):
                    batch.append(calls[index + len(batch)])
            index += len(batch)
            if len(batch) == 1:
                results = [await one(batch[0])]
            else:
                results = list(await asyncio.gather(*(one(call) for call in batch)))
            for result in results:
                outcome = self._budget(result, used, round_key)
                used += len(outcome.content)
                await persist(outcome)
                outcomes.append(outcome)
        return outcomes
