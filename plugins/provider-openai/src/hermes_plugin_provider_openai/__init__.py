"""The ``openai`` provider: chat completions over httpx. Importing this is cheap; httpx is
imported when the provider is first built."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import ProviderSpec, hookimpl
from hermes_sdk.models import ProviderSettings


def _build(settings: ProviderSettings) -> Any:
    from hermes_plugin_provider_openai.client import ChatCompletionsProvider

    return ChatCompletionsProvider(settings)


@hookimpl
def hermes_providers() -> Iterator[ProviderSpec]:
    yield ProviderSpec(
        name="openai",
        description="OpenAI chat completions and compatible servers",
        factory=_build,
    )
