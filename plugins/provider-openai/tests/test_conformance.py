"""provider-openai against the SDK's provider conformance suite."""

from __future__ import annotations

from hermes_plugin_provider_openai.client import ChatCompletionsProvider

from hermes_sdk.models import ModelProvider, ProviderSettings
from hermes_testkit import ProviderTests, ScriptedOpenAIServer


class TestChatCompletionsConformance(ProviderTests):
    server_class = ScriptedOpenAIServer
    reads_stated_window = True

    def make_provider(self, settings: ProviderSettings) -> ModelProvider:
        return ChatCompletionsProvider(settings)
