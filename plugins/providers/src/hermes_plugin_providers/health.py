"""``hermes doctor`` on the model: the ladder is resolved as a turn would resolve it (no
request, no network), so a missing or unset key, an unknown provider or a broken
``providers:`` entry is an error with its fix; ``--online`` then sends the model one short
request, and a failure says what to change and where."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

from hermes_sdk.health import Finding, HealthContext
from hermes_sdk.models import ChatMessage, ModelRequest, ProviderError
from hermes_sdk.routing import NoModel, Route

__all__ = ["model_findings"]

ASK_SECONDS = 30.0
"""How long ``--online`` waits for the model's answer."""


def model_findings(context: HealthContext) -> Iterator[Finding]:
    from hermes_plugin_providers.routes import model_routing, route_request

    request = route_request(context.home, context.config, context.secrets.get, context.provided)
    try:
        routing = model_routing(request)
    except NoModel as exc:
        yield Finding(
            level="error",
            message=f"no model can answer: {exc}",
            fix="hermes setup (or see why: hermes model --explain)",
        )
        return
    route = routing.routes[0]
    fallbacks = ", ".join(f"{r.name} / {r.model}" for r in routing.routes[1:])
    yield Finding(
        level="ok",
        message=f"model {route.name} / {route.model}"
        + (f", falling back to {fallbacks}" if fallbacks else ""),
    )
    for warning in routing.warnings:
        yield Finding(level="warning", message=warning, fix="hermes model --explain")
    if context.online:
        yield _asked(route)


def _asked(route: Route) -> Finding:
    """One short request to the primary route; its failure says what fixes it."""

    async def ask() -> None:
        request = ModelRequest(route.model, (ChatMessage("user", "Reply with: ok"),), max_tokens=8)
        try:
            await asyncio.wait_for(route.provider.complete(request, None), ASK_SECONDS)
        finally:
            await route.provider.aclose()

    started = time.perf_counter()
    try:
        asyncio.run(ask())
    except ProviderError as exc:
        fix = route.fix(exc) if route.fix is not None else None
        return Finding(
            level="error",
            message=f"{route.name} / {route.model} did not answer: {exc}",
            fix=fix or "hermes model test (for the whole error), then hermes setup",
        )
    except TimeoutError:
        return Finding(
            level="error",
            message=f"{route.name} / {route.model} did not answer within {ASK_SECONDS:g} s",
            fix="check that the model's server runs and is not overloaded: hermes model test",
        )
    return Finding(
        level="ok",
        message=f"{route.name} / {route.model} answered in {time.perf_counter() - started:.1f} s",
    )
