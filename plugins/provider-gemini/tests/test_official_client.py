"""The kit's Gemini server, driven by Google's official ``google-genai`` client unmodified:
if the fake drifted from the wire format the client reads and writes, these fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import errors, types
from google.oauth2 import service_account
from hermes_plugin_provider_gemini.testing import ScriptedGeminiServer

from hermes_testkit import Reply

WEATHER = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="get_weather",
            description="The weather in a city.",
            parameters_json_schema={
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        )
    ]
)
CONFIG = types.GenerateContentConfig(
    tools=[WEATHER],
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=1024),
)


def _round_trip(client: genai.Client, server: ScriptedGeminiServer, model: str) -> str:
    server.queue(
        Reply.tool_call("get_weather", {"city": "Oslo"}, thinking="Ask the tool."),
        Reply.say("Sunny in Oslo.", chunk_size=3),
    )
    question = types.Content(role="user", parts=[types.Part(text="Weather in Oslo?")])
    first = client.models.generate_content(model=model, contents=[question], config=CONFIG)
    (call,) = first.function_calls or []
    assert (call.name, call.args) == ("get_weather", {"city": "Oslo"})
    assert first.candidates and first.candidates[0].content
    thought = [p.text for p in first.candidates[0].content.parts or () if p.thought]
    assert thought == ["Ask the tool."]
    answer = types.Part.from_function_response(name="get_weather", response={"result": "Sunny"})
    history = [question, first.candidates[0].content, types.Content(role="user", parts=[answer])]
    streamed = client.models.generate_content_stream(model=model, contents=history, config=CONFIG)
    return "".join(chunk.text or "" for chunk in streamed)


def test_a_tool_round_trip_with_the_official_client() -> None:
    with ScriptedGeminiServer() as server:
        server.api_key = "kit-key"
        options = types.HttpOptions(base_url=server.vertex_url, api_version="v1beta")
        client = genai.Client(api_key="kit-key", http_options=options)
        assert _round_trip(client, server, "gemini-3-pro-preview") == "Sunny in Oslo."
        first, second = server.requests
    assert first.path == "/v1beta/models/gemini-3-pro-preview:generateContent"
    assert second.path == "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"
    assert first.headers["x-goog-api-key"] == "kit-key"
    sent: list[Any] = second.json["contents"]
    assert sent[1]["parts"][-1]["thoughtSignature"]  # the client sends the signature back
    assert sent[2]["parts"][0]["functionResponse"]["name"] == "get_weather"


def test_the_official_client_hears_a_wrong_key_as_the_service_says_it() -> None:
    with ScriptedGeminiServer() as server:
        server.api_key = "kit-key"
        client = genai.Client(
            api_key="wrong", http_options=types.HttpOptions(base_url=server.vertex_url)
        )
        with pytest.raises(errors.ClientError) as raised:
            client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    assert raised.value.code == 400 and "API key not valid" in str(raised.value)


def test_the_official_client_signs_in_to_vertex_with_a_service_account(tmp_path: Path) -> None:
    with ScriptedGeminiServer() as server:
        key = server.service_account_file(tmp_path)
        credentials = service_account.Credentials.from_service_account_file(  # type: ignore[no-untyped-call]
            str(key), scopes=["https://www.googleapis.com/auth/cloud-platform"]
        )
        client = genai.Client(
            vertexai=True,
            project="kit-project",
            location="europe-west4",
            credentials=credentials,
            http_options=types.HttpOptions(base_url=server.vertex_url, api_version="v1"),
        )
        assert _round_trip(client, server, "gemini-2.5-pro") == "Sunny in Oslo."
        paths = [request.path for request in server.requests]
    assert paths[0] == "/token" and server.sign_ins == 1
    assert paths[1] == (
        "/v1/projects/kit-project/locations/europe-west4/publishers/google/models/"
        "gemini-2.5-pro:generateContent"
    )
