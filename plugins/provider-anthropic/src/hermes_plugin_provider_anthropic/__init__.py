"""The ``anthropic`` provider: the Messages API over httpx. Importing this is cheap; httpx is
imported when the provider is first built."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import ModelPrice, PriceTableSpec, ProviderSpec, RungSpec, hookimpl
from hermes_sdk.ladder import Endpoint, api_key_rung

ANTHROPIC = Endpoint(
    name="anthropic",
    provider="anthropic",
    base_url="https://api.anthropic.com",
    api_key_env="ANTHROPIC_API_KEY",
    default_model="claude-sonnet-4-5",
    models=("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"),
)


@hookimpl
def hermes_providers() -> Iterator[ProviderSpec]:
    yield ProviderSpec(
        name="anthropic",
        description="Anthropic Messages API (Claude)",
        factory="hermes_plugin_provider_anthropic.client:MessagesProvider",
    )


@hookimpl
def hermes_provider_rungs() -> Iterator[RungSpec]:
    yield api_key_rung(ANTHROPIC, position=520)


@hookimpl
def hermes_model_prices() -> Iterator[PriceTableSpec]:
    # US dollars per million tokens; cache writes are the 5-minute TTL price.
    yield PriceTableSpec(
        name="anthropic",
        description="Anthropic list prices",
        prices={
            "claude-sonnet-4-5": ModelPrice(3.00, 15.00, cache_read=0.30, cache_write=3.75),
            "claude-haiku-4-5": ModelPrice(1.00, 5.00, cache_read=0.10, cache_write=1.25),
            "claude-opus-4-1": ModelPrice(15.00, 75.00, cache_read=1.50, cache_write=18.75),
        },
    )
