"""The ``openai`` provider: chat completions over httpx, for OpenAI, OpenRouter and every
server that speaks the protocol. Importing this is cheap; httpx is imported when the
provider is first built."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import (
    ConfigSectionSpec,
    ModelPrice,
    PriceTableSpec,
    ProviderSpec,
    RungSpec,
    hookimpl,
)
from hermes_sdk.ladder import Endpoint, LadderContext, RungResult, api_key_rung

OPENAI = Endpoint(
    name="openai",
    provider="openai",
    base_url="https://api.openai.com/v1",
    api_key_env="OPENAI_API_KEY",
    default_model="gpt-4o-mini",
    models=("gpt-4o-mini", "gpt-4o", "gpt-4.1", "gpt-4.1-mini", "o4-mini"),
)
OPENROUTER = Endpoint(
    name="openrouter",
    provider="openai",
    base_url="https://openrouter.ai/api/v1",
    api_key_env="OPENROUTER_API_KEY",
    default_model="openai/gpt-4o-mini",
    models=(
        "openai/gpt-4o-mini",
        "anthropic/claude-sonnet-4.5",
        "meta-llama/llama-3.3-70b-instruct",
    ),
)


@hookimpl
def hermes_providers() -> Iterator[ProviderSpec]:
    yield ProviderSpec(
        name="openai",
        description="OpenAI chat completions and compatible servers",
        factory="hermes_plugin_provider_openai.client:ChatCompletionsProvider",
        default_transport=True,  # what llama.cpp, Ollama, vLLM and LM Studio all speak
    )
    yield ProviderSpec(
        name="azure",
        description="Azure OpenAI deployments and Azure AI Foundry (api-key, api-version)",
        factory="hermes_plugin_provider_openai.azure:AzureOpenAIProvider",
    )


def _local_server(context: LadderContext) -> RungResult:
    from hermes_plugin_provider_openai.discover import resolve

    return resolve(context)


def _local_servers_section() -> Any:
    from hermes_plugin_provider_openai.discover import section_model

    return section_model()


@hookimpl
def hermes_provider_rungs() -> Iterator[RungSpec]:
    yield api_key_rung(OPENAI, position=510)
    yield api_key_rung(OPENROUTER, position=530)
    yield RungSpec(
        name="local-server",
        description="Ollama, LM Studio, vLLM or llama.cpp's server answering on loopback",
        position=800,  # after every key, before the embedded model
        resolve=_local_server,
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(name="local_servers", model=_local_servers_section)


@hookimpl
def hermes_model_prices() -> Iterator[PriceTableSpec]:
    # US dollars per million tokens, from the providers' published price lists.
    yield PriceTableSpec(
        name="openai",
        description="OpenAI list prices",
        prices={
            "gpt-4o-mini": ModelPrice(input=0.15, output=0.60, cache_read=0.075),
            "gpt-4o": ModelPrice(input=2.50, output=10.00, cache_read=1.25),
            "gpt-4.1": ModelPrice(input=2.00, output=8.00, cache_read=0.50),
            "gpt-4.1-mini": ModelPrice(input=0.40, output=1.60, cache_read=0.10),
            "o4-mini": ModelPrice(input=1.10, output=4.40, cache_read=0.275),
        },
    )
