"""``transport: gemini`` and ``transport: vertex`` through a real ``hermes chat -q``: a tool
round trip on Gemini's own API, streamed and whole (the kit's server, which the official
``google-genai`` client reads, and which refuses tool results that do not answer the call
turn before them, as the service does), the tool result going back as a
``functionResponse``, the reasoning effort as ``thinkingConfig``, and Vertex AI signed in
with a service account's key."""

from __future__ import annotations

import pytest
from hermes_plugin_provider_gemini.testing import ScriptedGeminiServer

from hermes_testkit import Reply


def _round_trip(hermes, server: ScriptedGeminiServer, note) -> dict:  # type: ignore[no-untyped-def]
    server.queue(
        Reply.tool_call("read_file", {"path": str(note)}, thinking="Read it first."),
        Reply.say("The note says: hello from the file."),
    )
    result = hermes("chat", "-q", "What does the note say?")
    assert result.code == 0, result.err
    assert result.out == "The note says: hello from the file.\n"
    first, second = (request for request in server.requests if request.path != "/token")
    assert first.json["systemInstruction"]["parts"][0]["text"]
    assert first.json["contents"][-1] == {
        "role": "user",
        "parts": [{"text": "What does the note say?"}],
    }
    names = {d["name"] for d in first.json["tools"][0]["functionDeclarations"]}
    assert "read_file" in names
    call_turn, answer_turn = second.json["contents"][-2:]
    assert call_turn["role"] == "model"
    assert call_turn["parts"][-1]["functionCall"] == {
        "name": "read_file",
        "args": {"path": str(note)},
    }
    assert call_turn["parts"][-1]["thoughtSignature"]  # sent back where it came from
    (answer,) = answer_turn["parts"]
    assert answer["functionResponse"]["name"] == "read_file"
    assert "hello from the file" in answer["functionResponse"]["response"]["result"]
    return {"first": first, "second": second}


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_a_tool_round_trip_on_the_gemini_api(hermes, tmp_path, monkeypatch, stream) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GEMINI_API_KEY", "kit-gemini-key")
    note = tmp_path / "note.txt"
    note.write_text("hello from the file\n")
    with ScriptedGeminiServer() as server:
        server.api_key = "kit-gemini-key"
        hermes.config(
            "model:\n  provider: gem\n  reasoning_effort: high\n"
            f"providers:\n  gem:\n    base_url: {server.base_url}\n    transport: gemini\n"
            "    default_model: gemini-3-pro-preview\n    api_key_env: GEMINI_API_KEY\n"
            f"    stream: {str(stream).lower()}\n"
            "agent:\n  retries: 1\n"
        )
        sent = _round_trip(hermes, server, note)
    verb = "streamGenerateContent?alt=sse" if stream else "generateContent"
    assert sent["first"].path == f"/v1beta/models/gemini-3-pro-preview:{verb}"
    assert sent["first"].headers["x-goog-api-key"] == "kit-gemini-key"
    thinking = sent["first"].json["generationConfig"]["thinkingConfig"]
    assert thinking == {"includeThoughts": True, "thinkingLevel": "high"}


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_a_tool_round_trip_on_vertex_with_a_service_account(hermes, tmp_path, stream) -> None:  # type: ignore[no-untyped-def]
    note = tmp_path / "note.txt"
    note.write_text("hello from the file\n")
    with ScriptedGeminiServer() as server:
        key = server.service_account_file(tmp_path)
        hermes.config(
            "model:\n  provider: vertex\n  reasoning_effort: low\n"
            f"providers:\n  vertex:\n    base_url: {server.vertex_url}\n    transport: vertex\n"
            f"    default_model: gemini-2.5-pro\n    stream: {str(stream).lower()}\n"
            f"    options:\n      credentials_file: {key}\n      location: us-east5\n"
            "agent:\n  retries: 1\n"
        )
        sent = _round_trip(hermes, server, note)
        assert server.sign_ins == 1  # one token for both requests
    verb = "streamGenerateContent?alt=sse" if stream else "generateContent"
    assert sent["first"].path == (
        f"/v1/projects/kit-project/locations/us-east5/publishers/google/models/gemini-2.5-pro:{verb}"
    )
    assert sent["second"].headers["authorization"].startswith("Bearer ya29.kit-")
    thinking = sent["first"].json["generationConfig"]["thinkingConfig"]
    assert thinking == {"includeThoughts": True, "thinkingBudget": 1024}


def test_a_wrong_gemini_key_is_one_line(hermes, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-not-this-one")
    with ScriptedGeminiServer() as server:
        server.api_key = "kit-gemini-key"
        hermes.config(
            "model:\n  provider: gem\n"
            f"providers:\n  gem:\n    base_url: {server.base_url}\n    transport: gemini\n"
            "    default_model: gemini-2.5-flash\n    api_key_env: GEMINI_API_KEY\n"
        )
        result = hermes("chat", "-q", "hi")
    assert result.code == 1
    errors = [line for line in result.err.splitlines() if line.startswith("hermes: error:")]
    assert len(errors) == 1 and "refused the API key" in errors[0], result.err
    assert "Traceback" not in result.err and "AIza-not-this-one" not in result.err
