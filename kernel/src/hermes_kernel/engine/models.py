"""Call the model for one step of a turn: retry what is worth retrying (exponential backoff
with jitter, honouring Retry-After up to a cap), then move along the fallback providers for
this turn only. A hard stop cancels the request in flight."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hermes_kernel.config.defaults import AGENT_RETRIES
from hermes_kernel.engine.control import Stopped, TurnControl
from hermes_kernel.store.sessions import Usage
from hermes_sdk import LLMCall, LLMResult
from hermes_sdk.models import (
    ChatMessage,
    ErrorKind,
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ModelUsage,
    ProviderError,
    ToolSchema,
)


@dataclass(frozen=True)
class ModelRoute:
    """A provider instance and the model to ask; the first route is the primary."""

    name: str
    provider: ModelProvider
    model: str
    fix: Callable[[ProviderError], str | None] | None = None
    """The router's step that fixes this route's failure (see ``hermes_sdk.routing.Route``)."""

    def fixed(self, error: ProviderError) -> ProviderError:
        """``error`` ending with the step that fixes it, when the router knows one."""
        fix = self.fix(error) if self.fix is not None and not error.fixed else None
        return error.with_fix(fix) if fix else error


def call_usage(
    route: ModelRoute, used: ModelUsage, pricing: Callable[[str, ModelUsage], float | None]
) -> Usage:
    """One model call's usage as the store records it, priced."""
    return priced_usage(route.name, route.model, used, pricing)


def response_usages(
    route: ModelRoute, response: ModelResponse, pricing: Callable[[str, ModelUsage], float | None]
) -> list[Usage]:
    """What a response cost, as the store records it: the route's own call (left out when a
    virtual provider reported its calls and used nothing itself), and each call it made to
    another model, priced as that model's."""
    found = [priced_usage(c.provider, c.model, c.usage, pricing) for c in response.calls]
    if not (response.calls and response.usage == ModelUsage()):
        found.insert(0, call_usage(route, response.usage, pricing))
    return found


def priced_usage(
    endpoint: str, model: str, used: ModelUsage, pricing: Callable[[str, ModelUsage], float | None]
) -> Usage:
    """A call's usage against ``endpoint``'s ``model`` as the store records it, priced."""
    return Usage(
        input_tokens=used.input_tokens,
        output_tokens=used.output_tokens,
        cache_read_tokens=used.cache_read_tokens,
        cache_write_tokens=used.cache_write_tokens,
        reasoning_tokens=used.reasoning_tokens,
        estimated_cost_usd=pricing(model, used),
        provider=endpoint,
        model=model,
    )


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = AGENT_RETRIES
    base_delay: float = 1.0
    max_delay: float = 30.0
    retry_after_cap: float = 60.0

    def delay(self, attempt: int, error: ProviderError) -> float:
        if error.retry_after is not None:
            return min(error.retry_after, self.retry_after_cap)
        ceiling = min(self.max_delay, self.base_delay * 2**attempt)
        return random.uniform(ceiling / 2, ceiling)


class RouteHealth:
    """Remembers, across turns, whether the primary route keeps failing. After
    ``failures_to_cool`` turns in a row where it failed and a fallback answered, turns start
    on the first fallback (the primary last) for a cool-down that doubles each time
    (capped); one success resets it."""

    def __init__(
        self,
        failures_to_cool: int = 3,
        base_cooldown: float = 60.0,
        max_cooldown: float = 900.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failures_to_cool = failures_to_cool
        self.base_cooldown = base_cooldown
        self.max_cooldown = max_cooldown
        self._clock = clock
        self.failures = 0
        self.cooldowns = 0
        self.cool_until = 0.0

    def order(self, routes: Sequence[ModelRoute]) -> tuple[list[ModelRoute], bool]:
        """The routes for a turn, and whether the primary comes first. A cooling primary
        goes last rather than away: if every fallback fails too, it is still tried."""
        if len(routes) > 1 and self.cooling:
            return [*routes[1:], routes[0]], False
        return list(routes), True

    def record(self, start: int, answered: int) -> None:
        """``answered`` is relative to ``start``, as ask_model returns it."""
        if start != 0:
            return  # the primary was not tried
        if answered == 0:
            self.failures = self.cooldowns = 0
            return
        self.failures += 1
        if self.failures >= self.failures_to_cool:
            delay = min(self.max_cooldown, self.base_cooldown * 2**self.cooldowns)
            self.cool_until = self._clock() + delay
            self.cooldowns += 1
            self.failures = 0

    @property
    def cooling(self) -> bool:
        return self._clock() < self.cool_until


class ModelObserver(Protocol):
    """Either method may be a coroutine function (the plugin host's are: hooks run off the
    loop); :func:`observed` settles what it returns."""

    def pre_llm_call(self, call: LLMCall) -> Awaitable[None] | None: ...

    def post_llm_call(self, call: LLMCall, result: LLMResult) -> Awaitable[None] | None: ...


async def observed(outcome: Awaitable[None] | None) -> None:
    """What an observer method returned: awaited when it is awaitable."""
    if outcome is not None:
        await outcome


async def _one_attempt(
    route: ModelRoute,
    request: ModelRequest,
    control: TurnControl,
    on_text: Callable[[str], None] | None,
) -> ModelResponse:
    task = asyncio.ensure_future(route.provider.complete(request, on_text))
    racing: set[asyncio.Future[Any]] = {task, control.stop_signal()}
    try:
        await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done():  # a hard stop, or this turn itself was cancelled
            task.cancel()
            # wait() does not raise the request's own error, and lets our cancellation through
            await asyncio.wait({task})
    if task.cancelled():
        raise Stopped
    return task.result()


async def ask_model(
    routes: Sequence[ModelRoute],
    session_id: str,
    messages: Sequence[ChatMessage],
    tools: Sequence[ToolSchema],
    control: TurnControl,
    observer: ModelObserver,
    policy: RetryPolicy,
    on_text: Callable[[str], None] | None = None,
    on_retry: Callable[[str], None] | None = None,
    on_attempt: Callable[[], None] | None = None,
    tool_choice: str | None = None,
    view: Callable[[ModelRoute, Sequence[ChatMessage]], Sequence[ChatMessage]] | None = None,
    reasoning_effort: str | None = None,
) -> tuple[ModelResponse, int]:
    """The model's answer and the index of the route that gave it (the caller stays on that
    route for the rest of the turn); raises the last ProviderError. ``on_attempt`` is
    called before every attempt: text streamed by a failed attempt is to be discarded.
    ``view`` adapts the messages to a route (images left out for a model that does not
    see, when a fallback takes over)."""
    last: ProviderError | None = None
    for index, route in enumerate(routes):
        sent = view(route, messages) if view is not None else messages
        request = ModelRequest(
            model=route.model,
            messages=sent,
            tools=tools,
            tool_choice=tool_choice,
            reasoning_effort=reasoning_effort,
        )
        for attempt in range(policy.attempts):
            call = LLMCall(
                session_id=session_id,
                provider=route.name,
                model=route.model,
                message_count=len(messages),
                tool_count=len(tools),
                request_id=uuid.uuid4().hex,
                attempt=attempt + 1,
            )
            if on_attempt is not None:
                on_attempt()
            await observed(observer.pre_llm_call(call))
            started = time.perf_counter()
            try:
                response = await _one_attempt(route, request, control, on_text)
            except ProviderError as error:
                last = error
                failed = LLMResult(
                    ok=False,
                    error=str(error),
                    error_kind=error.kind.value,
                    duration_s=time.perf_counter() - started,
                )
                await observed(observer.post_llm_call(call, failed))
                if not error.retryable or attempt == policy.attempts - 1:
                    break
                wait = policy.delay(attempt, error)
                if on_retry is not None:
                    on_retry(f"{route.name}: {error}; retrying in {wait:.1f} s")
                if await control.sleep(wait):
                    raise Stopped from None
                continue
            answered = LLMResult(
                ok=True,
                finish_reason=response.finish_reason,
                tool_call_count=len(response.tool_calls),
                input_tokens=response.usage.input_tokens,
                output_tokens=response.usage.output_tokens,
                cache_read_tokens=response.usage.cache_read_tokens,
                cache_write_tokens=response.usage.cache_write_tokens,
                reasoning_tokens=response.usage.reasoning_tokens,
                duration_s=time.perf_counter() - started,
            )
            await observed(observer.post_llm_call(call, answered))
            return response, index
        assert last is not None
        last = route.fixed(last)
        if not last.should_fallback:
            raise last
        if on_retry is not None and route is not routes[-1]:
            on_retry(f"{route.name} failed ({last.kind.value}); falling back to the next provider")
    raise last if last is not None else ProviderError(ErrorKind.BAD_REQUEST, "no model route")
