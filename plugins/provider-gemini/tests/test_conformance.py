"""provider-gemini against the SDK's provider conformance suite: the Gemini API with a key,
and Vertex AI signed in with a service account's key at the kit's token endpoint."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_provider_gemini.client import GeminiProvider, VertexProvider
from hermes_plugin_provider_gemini.testing import ScriptedGeminiServer

from hermes_sdk.models import ChatMessage, ModelProvider, ProviderSettings
from hermes_testkit import ProviderTests, Reply


class TestGeminiConformance(ProviderTests):
    server_class = ScriptedGeminiServer
    model = "gemini-2.5-flash"

    @pytest.fixture
    def server(self) -> Iterator[Any]:
        with ScriptedGeminiServer() as server:
            server.api_key = "test-key"  # any other key is refused, as the service does
            yield server

    def make_provider(self, settings: ProviderSettings) -> ModelProvider:
        return GeminiProvider(settings)


class TestVertexConformance(ProviderTests):
    server_class = ScriptedGeminiServer
    model = "gemini-2.5-pro"

    @pytest.fixture
    def server(self, tmp_path: Path) -> Iterator[Any]:
        with ScriptedGeminiServer() as server:
            self.key_file = server.service_account_file(tmp_path)
            yield server

    def settings_for(self, server: Any) -> ProviderSettings:
        return ProviderSettings(
            base_url=server.vertex_url,
            timeout_seconds=5,
            options={"credentials_file": str(self.key_file), "location": "europe-west4"},
        )

    def make_provider(self, settings: ProviderSettings) -> ModelProvider:
        return VertexProvider(settings)

    def test_api_key_is_sent_only_as_a_credential(self, server: Any) -> None:
        """No key here: the access token the sign-in gave, as a bearer credential, at the
        project and location the key and options name."""
        server.queue(Reply.say("ok"))
        self.run(server, lambda p: p.complete(self.request(ChatMessage("user", "Hi"))))
        (sign_in, asked) = server.requests
        assert sign_in.path == "/token" and server.sign_ins == 1
        assert asked.headers["authorization"].startswith("Bearer ya29.kit-")
        assert asked.path == (
            "/v1/projects/kit-project/locations/europe-west4/publishers/google/models/"
            "gemini-2.5-pro:streamGenerateContent?alt=sse"
        )
