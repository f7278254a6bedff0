"""The router: from a :class:`~hermes_sdk.routing.RouteRequest` to the routes a turn uses.
Walk the ladder, then build the chosen provider (a credential pool when it has several
keys) and the fallbacks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, cast

from hermes_plugin_providers.fixes import fix_for
from hermes_plugin_providers.ladder import (
    LadderReport,
    NoProvider,
    Rung,
    choose,
    explain,
    make_context,
    order_rungs,
    walk,
)
from hermes_plugin_providers.pool import PooledProvider
from hermes_plugin_providers.pricing import PriceBook
from hermes_plugin_providers.rungs import keys_for
from hermes_plugin_providers.settings import ModelSettings
from hermes_sdk import Kind, PriceTableSpec, ProviderSpec, RungSpec
from hermes_sdk.ladder import Endpoint, LadderChoice, LadderContext
from hermes_sdk.models import ModelProvider, ModelUsage, ProviderSettings
from hermes_sdk.provided import ProvidedSpecs
from hermes_sdk.routing import Route, RouteRequest, Routing, RoutingView

__all__ = ["LadderRouter", "run_ladder"]


def plugin_rungs(provided: ProvidedSpecs) -> list[Rung]:
    return [
        Rung(cast(RungSpec, spec), provided.owner(spec) or "?") for spec in provided.of(Kind.RUNG)
    ]


def run_ladder(request: RouteRequest) -> tuple[LadderReport, LadderContext]:
    rungs, problems = order_rungs(plugin_rungs(request.provided))
    context = make_context(
        rungs, request.config, request.home, request.secret, request.provider, request.model
    )
    return walk(rungs, context, problems), context


def _asking(request: RouteRequest, provider: str, model: str | None) -> RouteRequest:
    """``request`` for another endpoint and model, as if named on the command line."""
    return RouteRequest(
        config=request.config,
        home=request.home,
        secret=request.secret,
        reread=request.reread,
        provided=request.provided,
        provider=provider,
        model=model,
    )


def _signed_in(
    request: RouteRequest, provider: str, model: str | None, endpoint: Endpoint
) -> LadderChoice | None:
    """A fallback to an endpoint reached by signing in (no key variable): the choice its
    rung makes, with the sign-in's token source; None for any other endpoint."""
    if endpoint.api_key_env is not None:
        return None
    choice = run_ladder(_asking(request, provider, model))[0].choice
    return choice if choice is not None and choice.token_source is not None else None


def _resolver(
    request: RouteRequest, timeout_seconds: float
) -> Callable[[str, str | None], tuple[ModelProvider, str]]:
    """``ProviderSettings.resolve`` for a virtual provider: another endpoint's provider,
    walked up the ladder as a session's is, never a virtual one (no mixture of mixtures)."""

    def resolve(endpoint: str, model: str | None) -> tuple[ModelProvider, str]:
        asked = _asking(request, endpoint, model)
        try:
            choice = choose(run_ladder(asked)[0])
            route = build_route(asked, choice, timeout_seconds, nested=True)
        except NoProvider as exc:
            raise ValueError(str(exc)) from None
        return route.provider, route.model

    return resolve


def _view(report: LadderReport, context: LadderContext) -> RoutingView:
    return RoutingView(
        choice=report.choice,
        strict=report.strict,
        endpoints=context.endpoints,
        explanation=explain(report),
        failure=report.failure,
        problems=report.problems,
    )


def default_transport(provided: ProvidedSpecs) -> str | None:
    """The provider that speaks for endpoints whose config names no transport (the first
    by name of those whose spec says ``default_transport``), or None."""
    specs = [cast(ProviderSpec, spec) for spec in provided.of(Kind.PROVIDER)]
    return next((spec.name for spec in specs if spec.default_transport), None)


def _account(choice: LadderChoice) -> str:
    """A sign-in's name in messages and kept states: its account (``codex#2``)."""
    return choice.key_names[0] if choice.key_names else choice.endpoint.name


def _signed_in_provider(
    choice: LadderChoice,
    settings: ProviderSettings,
    factory: Callable[[ProviderSettings], ModelProvider],
) -> ModelProvider:
    from hermes_plugin_providers.signed_in import SignedInProvider

    assert choice.token_source is not None
    endpoint = choice.endpoint  # an account's own: its header, its API address
    own = replace(settings, base_url=endpoint.base_url, headers=endpoint.headers)
    return SignedInProvider(own, choice.token_source, factory, _account(choice))


def build_route(
    request: RouteRequest, choice: LadderChoice, timeout_seconds: float, *, nested: bool = False
) -> Route:
    """The route to ``choice``; ``nested``: asked for by a virtual provider, which may not
    be one itself."""
    provided, reread, home = request.provided, request.reread, str(request.home)
    endpoint = choice.endpoint
    transport = endpoint.provider or default_transport(provided)
    if transport is None:
        raise NoProvider(
            f"provider {endpoint.name!r} names no transport and no enabled provider plugin "
            "speaks for such endpoints: set its transport in config.yaml, or install one"
        )
    spec = provided.named(Kind.PROVIDER, transport)
    if spec is None:
        raise NoProvider(
            f"provider {endpoint.name!r} speaks {transport!r}, which no enabled plugin "
            f"provides: install or enable hermes-plugin-provider-{transport}"
        )
    provider_spec = cast(ProviderSpec, spec)
    if provider_spec.virtual and nested:
        raise NoProvider(
            f"provider {endpoint.name!r} is itself a mixture of models: name real endpoints"
        )
    if not endpoint.base_url and not provider_spec.virtual:
        raise NoProvider(
            f"provider {endpoint.name!r} has no base_url: set providers.{endpoint.name}.base_url"
        )
    factory = provider_spec.build
    provider_settings = ProviderSettings(
        base_url=endpoint.base_url,
        api_key=choice.api_keys[0] if choice.api_keys else None,
        timeout_seconds=timeout_seconds,
        options=endpoint.options,
        home=home,
        stream=endpoint.stream,
        headers=endpoint.headers,
        resolve=_resolver(request, timeout_seconds) if provider_spec.virtual else None,
    )
    fix = fix_for(choice, home)
    if choice.token_source is not None and choice.pool:
        accounts = [
            (_account(member), partial(_signed_in_provider, member, provider_settings, factory))
            for member in (choice, *choice.pool)
        ]
        kept = (home, endpoint.name) if home else None
        pooled = PooledProvider(provider_settings, accounts, factory, kept=kept)
        return Route(endpoint.name, pooled, choice.model, fix)
    if choice.token_source is not None:
        signed_in = _signed_in_provider(choice, provider_settings, factory)
        return Route(endpoint.name, signed_in, choice.model, fix)
    if len(choice.api_keys) > 1:
        keys = list(zip(choice.key_names, choice.api_keys, strict=True))
        kept = (home, endpoint.name) if home else None
        provider = PooledProvider(provider_settings, keys, factory, reread=reread, kept=kept)
        return Route(endpoint.name, provider, choice.model, fix)
    try:
        provider = factory(provider_settings)
    except ValueError as exc:  # a virtual provider's settings that cannot work, in one line
        raise NoProvider(f"providers.{endpoint.name}: {exc}") from None
    return Route(endpoint.name, provider, choice.model, fix)


def model_routing(request: RouteRequest) -> Routing:
    """Raises NoProvider with one line to act on when no model can be used."""
    report, context = run_ladder(request)
    choice = choose(report)
    config = ModelSettings.from_config(request.config)
    timeout = config.timeout_seconds
    routes = [build_route(request, choice, timeout)]
    warnings = list(report.problems)
    if not report.strict:  # a choice made on the command line never falls back
        for fallback in config.fallbacks:
            endpoint = context.endpoints.get(fallback.provider)
            if endpoint is None:
                warnings.append(f"fallback provider {fallback.provider!r} is unknown; skipped")
                continue
            signed_in = _signed_in(request, fallback.provider, fallback.model, endpoint)
            if signed_in is not None:  # a sign-in's endpoint: its token, renewed as it goes
                routes.append(build_route(request, signed_in, timeout))
                continue
            names, keys = keys_for(endpoint, context, config)
            if endpoint.api_key_env and not keys:
                warnings.append(
                    f"fallback provider {fallback.provider!r} has no key "
                    f"({endpoint.api_key_env} is not set); skipped"
                )
                continue
            fallback_choice = LadderChoice(
                endpoint, fallback.model or endpoint.default_model, keys, key_names=names
            )
            try:
                routes.append(build_route(request, fallback_choice, timeout))
            except NoProvider as exc:
                warnings.append(f"fallback skipped: {exc}")
    return Routing(
        routes=routes,
        view=_view(report, context),
        notice=choice.endpoint.notice,
        warnings=warnings,
    )


class LadderRouter:
    """:class:`~hermes_sdk.routing.ModelRouter` over the provider ladder."""

    def view(self, request: RouteRequest) -> RoutingView:
        return _view(*run_ladder(request))

    def route(self, request: RouteRequest) -> Routing:
        return model_routing(request)

    def cost(self, provided: ProvidedSpecs) -> Callable[[str, ModelUsage], float | None]:
        tables = [cast(PriceTableSpec, spec) for spec in provided.of(Kind.PRICES)]
        return PriceBook(tables).cost


def endpoint_needs(endpoint: Endpoint, secret: Callable[[str], str | None]) -> tuple[str, str]:
    """What an endpoint needs, as ``hermes model`` and the Models page show it: its key's
    variable and whether it is set, and its models."""
    if endpoint.api_key_env:
        key = "key set" if secret(endpoint.api_key_env) else "no key"
        needs = f"{endpoint.api_key_env} ({key})"
    else:
        needs = "no key needed"
    return needs, ", ".join(endpoint.models) or endpoint.default_model or "-"


def route_request(
    home: str,
    config: Mapping[str, Any],
    secret: Callable[[str], str | None],
    provided: ProvidedSpecs,
    provider: str | None = None,
    model: str | None = None,
) -> RouteRequest:
    """A request for the home at ``home``: keys through ``secret``, and read again from the
    environment and the home's .env when a provider needs them anew."""
    import functools

    from hermes_commons.dotenv import current_secret

    return RouteRequest(
        config=config,
        home=Path(home),
        secret=secret,
        reread=functools.partial(current_secret, Path(home) / ".env"),
        provided=provided,
        provider=provider,
        model=model,
    )
