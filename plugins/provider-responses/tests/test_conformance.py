"""provider-responses against the SDK's provider conformance suite."""

from __future__ import annotations

from hermes_plugin_provider_responses.client import ResponsesProvider

from hermes_sdk.models import ModelProvider, ProviderSettings
from hermes_testkit import ProviderTests, ScriptedResponsesServer


class TestResponsesConformance(ProviderTests):
    server_class = ScriptedResponsesServer

    def make_provider(self, settings: ProviderSettings) -> ModelProvider:
        return ResponsesProvider(settings)
