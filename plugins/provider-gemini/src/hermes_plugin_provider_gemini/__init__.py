"""The ``gemini`` and ``vertex`` providers: Gemini's own API (generateContent) with an API
key, and Gemini models on Vertex AI with Google sign-in. Importing this is cheap; httpx and
google-auth are imported when a provider is first built."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import ProviderSpec, hookimpl


@hookimpl
def hermes_providers() -> Iterator[ProviderSpec]:
    yield ProviderSpec(
        name="gemini",
        description="Google's Gemini API (generateContent): thinking, safety settings",
        factory="hermes_plugin_provider_gemini.client:GeminiProvider",
    )
    yield ProviderSpec(
        name="vertex",
        description="Gemini models on Google Vertex AI (service account or ADC)",
        factory="hermes_plugin_provider_gemini.client:VertexProvider",
    )
