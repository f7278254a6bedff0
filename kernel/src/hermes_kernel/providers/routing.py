"""The kernel's side of choosing models: build a :class:`~hermes_sdk.routing.RouteRequest`
from this invocation's settings and plugins, ask the installed model router, and turn its
routes into the engine's. Which model, which keys and which fallbacks is the router's
business (a plugin's); with none installed, :class:`~hermes_sdk.routing.NoModel` says what
to install."""

from __future__ import annotations

import functools
import logging
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from hermes_commons.dotenv import current_secret
from hermes_kernel.config.settings import Settings, dotenv_path
from hermes_kernel.engine.models import ModelRoute
from hermes_kernel.plugins.host import PluginHost
from hermes_sdk import Kind, ModelRouterSpec
from hermes_sdk.models import ModelUsage
from hermes_sdk.routing import ModelRouter, NoModel, RouteRequest, RoutingView

__all__ = ["ModelSetup", "NoModel", "model_setup", "pricing", "routing_view"]

log = logging.getLogger("hermes.models")

STANDARD_ROUTER = "providers"
"""The standard bundle's model router: named when none is installed, as the fix."""


@dataclass
class ModelSetup:
    """What a command needs to talk to a model, and what it should tell the user."""

    routes: list[ModelRoute]
    view: RoutingView
    notice: str = ""
    warnings: list[str] = field(default_factory=list)


_BUILT: weakref.WeakKeyDictionary[PluginHost, ModelRouter] = weakref.WeakKeyDictionary()
"""Each host's router, built once (a third-party router's factory may be costly)."""


def _router(host: PluginHost) -> ModelRouter:
    built = _BUILT.get(host)
    if built is not None:
        return built
    found = sorted(host.provided(Kind.MODEL_ROUTER), key=lambda p: (p.plugin, p.spec.name))
    if not found:
        from hermes_kernel.plugins.missing import why_missing  # only to say what is missing

        raise NoModel(why_missing(host, Kind.MODEL_ROUTER, "a model router", STANDARD_ROUTER))
    chosen = found[0]
    if len(found) > 1:
        others = ", ".join(f"{p.spec.name} ({p.plugin})" for p in found[1:])
        log.warning(
            "several model routers are installed; using %s (%s), not %s: disable the plugins "
            "you do not want",
            chosen.spec.name,
            chosen.plugin,
            others,
        )
    spec = cast(ModelRouterSpec, chosen.spec)
    try:
        router = cast(ModelRouter, spec.build())
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback
        raise NoModel(
            f"the model router of plugin {chosen.plugin!r} failed to start "
            f"({type(exc).__name__}: {exc}); see: hermes plugins info {chosen.plugin}"
        ) from None
    _BUILT[host] = router
    return router


def _request(
    host: PluginHost, settings: Settings, provider: str | None, model: str | None
) -> RouteRequest:
    return RouteRequest(
        config=settings.raw,
        home=settings.home,
        secret=settings.secrets.get,
        reread=functools.partial(current_secret, dotenv_path(settings.home)),
        provided=host.shared(lazily=True),
        provider=provider,
        model=model,
    )


def routing_view(
    host: PluginHost, settings: Settings, provider: str | None = None, model: str | None = None
) -> RoutingView:
    """What would be chosen and why; raises NoModel only when no router is installed."""
    return _router(host).view(_request(host, settings, provider, model))


def model_setup(
    host: PluginHost, settings: Settings, provider: str | None = None, model: str | None = None
) -> ModelSetup:
    """Raises NoModel with one line to act on when no model can be used."""
    routing = _router(host).route(_request(host, settings, provider, model))
    if not routing.routes:
        raise NoModel("the model router chose no model: see hermes model --explain")
    routes = [
        ModelRoute(route.name, route.provider, route.model, route.fix) for route in routing.routes
    ]
    return ModelSetup(routes, routing.view, routing.notice, list(routing.warnings))


def pricing(host: PluginHost) -> Callable[[str, ModelUsage], float | None]:
    """What a model's usage costs, by the router's price tables; unknown (None) without a
    router."""
    try:
        router = _router(host)
    except NoModel:
        return lambda _model, _usage: None
    return router.cost(host.shared(lazily=True))
