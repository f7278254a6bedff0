"""provider-local against the SDK's provider conformance suite, with the real bundled
SmolLM2-135M weights run by xllamacpp (about a second per test on two cores)."""

from __future__ import annotations

from pathlib import Path

from hermes_plugin_provider_local.engine import EmbeddedProvider
from hermes_plugin_provider_local.models import DEFAULT_MODEL

from hermes_sdk.models import ModelProvider, ProviderSettings
from hermes_testkit import ProviderTests, ScriptedServer


class TestEmbeddedConformance(ProviderTests):
    server_class = None
    model = DEFAULT_MODEL

    def settings_for(self, server: ScriptedServer | None) -> ProviderSettings:
        # A small context, so the overflow test needs a modest prompt; a fixed seed, so a
        # tiny model's close calls come out the same whatever ran before in this process.
        return ProviderSettings(
            base_url="embedded:",
            options={"models_dir": str(Path("/nonexistent")), "context_size": 2048, "seed": 7},
        )

    def make_provider(self, settings: ProviderSettings) -> ModelProvider:
        return EmbeddedProvider(settings)
