"""provider-bedrock against the SDK's provider conformance suite: signed with SigV4 from the
AWS credential chain (the kit's server verifies each signature), and with a Bedrock API
key as a bearer token."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hermes_plugin_provider_bedrock.client import BedrockProvider
from hermes_plugin_provider_bedrock.testing import ScriptedBedrockServer

from hermes_sdk.models import ModelProvider, ProviderSettings
from hermes_testkit import ProviderTests


class TestBedrockSigV4Conformance(ProviderTests):
    server_class = ScriptedBedrockServer
    model = "anthropic.claude-sonnet-4-5-20250929-v1:0"

    @pytest.fixture
    def server(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
        # "test-key" is the access key id: the suite looks for it among the headers (in
        # the signature's credential scope) and never in the body.
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test-key")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "kit-secret")
        with ScriptedBedrockServer() as server:
            server.credentials = {"test-key": "kit-secret"}
            yield server

    def settings_for(self, server: Any) -> ProviderSettings:
        return ProviderSettings(
            base_url=server.base_url, timeout_seconds=5, options={"region": "eu-west-1"}
        )

    def make_provider(self, settings: ProviderSettings) -> ModelProvider:
        return BedrockProvider(settings)


class TestBedrockApiKeyConformance(ProviderTests):
    server_class = ScriptedBedrockServer
    model = "amazon.nova-pro-v1:0"

    @pytest.fixture
    def server(self) -> Iterator[Any]:
        with ScriptedBedrockServer() as server:
            server.api_keys = frozenset({"test-key"})
            yield server

    def make_provider(self, settings: ProviderSettings) -> ModelProvider:
        return BedrockProvider(settings)
