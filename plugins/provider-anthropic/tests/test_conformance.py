"""provider-anthropic against the SDK's provider conformance suite."""

from __future__ import annotations

from hermes_plugin_provider_anthropic.client import MessagesProvider

from hermes_sdk.models import ModelProvider, ProviderSettings
from hermes_testkit import ProviderTests, ScriptedAnthropicServer


class TestMessagesConformance(ProviderTests):
    server_class = ScriptedAnthropicServer
    reads_stated_window = True

    def make_provider(self, settings: ProviderSettings) -> ModelProvider:
        return MessagesProvider(settings)
