"""The ``responses`` provider: OpenAI's Responses API over httpx. Importing this is cheap;
httpx is imported when the provider is first built."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import ProviderSpec, hookimpl


@hookimpl
def hermes_providers() -> Iterator[ProviderSpec]:
    yield ProviderSpec(
        name="responses",
        description="OpenAI Responses API (Codex, GPT-5-class and reasoning models)",
        factory="hermes_plugin_provider_responses.client:ResponsesProvider",
    )
