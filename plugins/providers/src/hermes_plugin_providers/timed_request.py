"""One request to the model a route resolves to, timed: ``hermes model test`` and the
dashboard's Models page both ask through here."""

from __future__ import annotations

import time
from typing import Any

from hermes_plugin_providers.routes import LadderRouter, model_routing
from hermes_sdk.routing import RouteRequest

__all__ = ["ModelTestFailed", "measure"]


class ModelTestFailed(Exception):
    """The request failed; the message says why and how to fix it (one line)."""


async def measure(request: RouteRequest, prompt: str) -> dict[str, Any]:
    """Ask once; the provider, model, latency, time to first token, usage, cost and reply."""
    from hermes_sdk.models import ChatMessage, ModelRequest, ProviderError
    from hermes_sdk.routing import NoModel

    try:
        route = model_routing(request).routes[0]
    except NoModel as exc:
        raise ModelTestFailed(str(exc)) from None
    first_token: list[float] = []

    def on_text(_text: str) -> None:
        if not first_token:
            first_token.append(time.perf_counter())

    message = ModelRequest(route.model, (ChatMessage("user", prompt),), max_tokens=64)
    started = time.perf_counter()
    try:
        response = await route.provider.complete(message, on_text)
    except ProviderError as exc:
        fix = route.fix(exc) if route.fix is not None else None
        failure = exc.with_fix(fix) if fix else exc
        raise ModelTestFailed(f"{route.name} / {route.model}: {failure}") from None
    finally:
        await route.provider.aclose()
    elapsed = time.perf_counter() - started
    usage = response.usage
    cost = LadderRouter().cost(request.provided)(route.model, usage)
    return {
        "provider": route.name,
        "model": route.model,
        "latency_s": round(elapsed, 3),
        "first_token_s": round(first_token[0] - started, 3) if first_token else None,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "cost_usd": cost,
        "reply": response.content,
    }
