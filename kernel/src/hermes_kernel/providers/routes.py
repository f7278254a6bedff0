"""From config and plugins to the model routes a turn engine uses: walk the ladder, then
build the chosen provider (a credential pool when it has several keys) and the fallbacks."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from hermes_kernel.config.settings import Settings, dotenv_path
from hermes_kernel.engine.models import ModelRoute
from hermes_kernel.plugins.host import PluginHost
from hermes_kernel.providers.ladder import (
    LadderReport,
    NoProvider,
    Rung,
    choose,
    make_context,
    order_rungs,
    walk,
)
from hermes_kernel.providers.pool import PooledProvider
from hermes_kernel.providers.pricing import PriceBook
from hermes_kernel.providers.rungs import keys_for
from hermes_kernel.providers.settings import ModelSettings
from hermes_sdk import Kind, PriceTableSpec, ProviderSpec, RungSpec
from hermes_sdk.dotenv import DotenvError, read_dotenv
from hermes_sdk.ladder import LadderChoice, LadderContext
from hermes_sdk.models import ProviderSettings


@dataclass
class ModelSetup:
    """What a command needs to talk to a model, and what it should tell the user."""

    report: LadderReport
    routes: list[ModelRoute]
    context: LadderContext
    notice: str = ""
    warnings: list[str] = field(default_factory=list)


def plugin_rungs(host: PluginHost) -> list[Rung]:
    return [Rung(cast(RungSpec, p.spec), p.plugin) for p in host.provided(Kind.RUNG)]


def price_book(host: PluginHost) -> PriceBook:
    return PriceBook([cast(PriceTableSpec, p.spec) for p in host.provided(Kind.PRICES)])


def fresh_secret(settings: Settings) -> Callable[[str], str | None]:
    """Read a secret again (environment, then .env as it is now): a pool refreshes a key
    that was rejected, in case the user has replaced it since."""

    def read(name: str) -> str | None:
        if os.environ.get(name):
            return os.environ[name]
        try:
            return read_dotenv(dotenv_path(settings.home)).get(name)
        except DotenvError:
            return None

    return read


def default_transport(host: PluginHost) -> str | None:
    """The provider that speaks for endpoints whose config names no transport (the first
    by name of those whose spec says ``default_transport``), or None."""
    return next((spec.name for spec in host.providers() if spec.default_transport), None)


def run_ladder(
    host: PluginHost, settings: Settings, provider: str | None = None, model: str | None = None
) -> tuple[LadderReport, LadderContext]:
    rungs, problems = order_rungs(plugin_rungs(host))
    context = make_context(
        rungs, settings.raw, settings.home, settings.secrets.get, provider, model
    )
    return walk(rungs, context, problems), context


def build_route(
    host: PluginHost,
    choice: LadderChoice,
    timeout_seconds: float,
    reread: Callable[[str], str | None],
    home: str = "",
) -> ModelRoute:
    endpoint = choice.endpoint
    transport = endpoint.provider or default_transport(host)
    if transport is None:
        raise NoProvider(
            f"provider {endpoint.name!r} names no transport and no enabled provider plugin "
            "speaks for such endpoints: set its transport in config.yaml, or install one"
        )
    provided = host.require(Kind.PROVIDER, transport)
    if provided is None:
        raise NoProvider(
            f"provider {endpoint.name!r} speaks {transport!r}, which no enabled plugin "
            f"provides: install or enable hermes-plugin-provider-{transport}"
        )
    factory = cast(ProviderSpec, provided.spec).factory
    provider_settings = ProviderSettings(
        base_url=endpoint.base_url,
        api_key=choice.api_keys[0] if choice.api_keys else None,
        timeout_seconds=timeout_seconds,
        options=endpoint.options,
        home=home,
    )
    if len(choice.api_keys) > 1:
        keys = list(zip(choice.key_names, choice.api_keys, strict=True))
        provider = PooledProvider(provider_settings, keys, factory, reread=reread)
        return ModelRoute(endpoint.name, provider, choice.model)
    return ModelRoute(endpoint.name, factory(provider_settings), choice.model)


def model_setup(
    host: PluginHost, settings: Settings, provider: str | None = None, model: str | None = None
) -> ModelSetup:
    """Raises NoProvider with one line to act on when no model can be used."""
    report, context = run_ladder(host, settings, provider, model)
    choice = choose(report)
    config = ModelSettings.from_config(settings.raw)
    reread = fresh_secret(settings)
    home = str(settings.home)
    routes = [build_route(host, choice, config.timeout_seconds, reread, home)]
    warnings = list(report.problems)
    if not report.strict:  # a choice made on the command line never falls back
        for fallback in config.fallbacks:
            endpoint = context.endpoints.get(fallback.provider)
            if endpoint is None:
                warnings.append(f"fallback provider {fallback.provider!r} is unknown; skipped")
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
                routes.append(
                    build_route(host, fallback_choice, config.timeout_seconds, reread, home)
                )
            except NoProvider as exc:
                warnings.append(f"fallback skipped: {exc}")
    return ModelSetup(report, routes, context, choice.endpoint.notice, warnings)
