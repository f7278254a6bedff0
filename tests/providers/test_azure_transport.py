"""``transport: azure`` through a real ``hermes chat -q``: a tool round trip on an Azure
OpenAI deployment, streamed and whole (the kit's Azure server, which the official
``openai.AzureOpenAI`` client talks to, checks the key, the route and the api-version), the
tool result going back as a ``tool`` message with its call's id, and a reasoning
deployment's effort as ``reasoning_effort``."""

from __future__ import annotations

import json

import pytest
from hermes_plugin_provider_openai.testing import ScriptedAzureOpenAIServer

from hermes_testkit import Reply


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_a_tool_round_trip_on_an_azure_deployment(hermes, tmp_path, monkeypatch, stream) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-kit-key")
    note = tmp_path / "note.txt"
    note.write_text("hello from the file\n")
    with ScriptedAzureOpenAIServer() as server:
        server.api_key = "azure-kit-key"
        server.deployments = {"team-o4": "o4-mini"}
        hermes.config(
            "model:\n  provider: azure\n  reasoning_effort: high\n"
            f"providers:\n  azure:\n    base_url: {server.base_url}\n    transport: azure\n"
            "    api_key_env: AZURE_OPENAI_API_KEY\n    default_model: team-o4\n"
            f"    stream: {str(stream).lower()}\n"
            "    options:\n      reasoning: true\n      api_version: 2025-04-01-preview\n"
            "agent:\n  retries: 1\n"
        )
        server.queue(
            Reply.tool_call("read_file", {"path": str(note)}),
            Reply.say("The note says: hello from the file."),
        )
        result = hermes("chat", "-q", "What does the note say?")
        assert result.code == 0, result.err
        assert result.out == "The note says: hello from the file.\n"
        first, second = server.requests
    route = "/openai/deployments/team-o4/chat/completions?api-version=2025-04-01-preview"
    assert first.path == second.path == route
    assert first.headers["api-key"] == "azure-kit-key" and "authorization" not in first.headers
    assert first.json["reasoning_effort"] == "high" and first.json["stream"] is stream
    call = second.json["messages"][-2]["tool_calls"][0]
    answer = second.json["messages"][-1]
    assert call["function"]["name"] == "read_file"
    assert json.loads(call["function"]["arguments"]) == {"path": str(note)}
    assert answer["role"] == "tool" and answer["tool_call_id"] == call["id"]
    assert "hello from the file" in answer["content"]
