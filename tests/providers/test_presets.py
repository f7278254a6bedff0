"""Every preset's request, through a real ``hermes chat -q`` with only its key set: the URL
(the preset's own path, on a loopback stand-in reached through its ``*_BASE_URL``
variable), the auth header its transport sends, and the model name; and ``hermes model
pick`` choosing one without asking."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hermes_plugin_provider_gemini.testing import ScriptedGeminiServer
from hermes_plugin_provider_presets.catalog import presets

from hermes_testkit import (
    Reply,
    ScriptedAnthropicServer,
    ScriptedOpenAIServer,
    ScriptedResponsesServer,
)

SERVERS = {
    "openai": (ScriptedOpenAIServer, "/chat/completions", "authorization", "Bearer {key}"),
    "anthropic": (ScriptedAnthropicServer, "/v1/messages", "x-api-key", "{key}"),
    "responses": (ScriptedResponsesServer, "/responses", "authorization", "Bearer {key}"),
    "gemini": (
        ScriptedGeminiServer,
        "/models/{model}:streamGenerateContent?alt=sse",
        "x-goog-api-key",
        "{key}",
    ),
}


@pytest.mark.parametrize("preset", presets(), ids=lambda preset: preset.name)
def test_each_presets_request_has_its_url_auth_and_model(hermes, monkeypatch, preset) -> None:  # type: ignore[no-untyped-def]
    server_class, route, header, value = SERVERS[preset.transport]
    if (preset.quirks or {}).get("bearer_auth"):  # MiniMax: the Messages API with a bearer
        header, value = "authorization", "Bearer {key}"
    key = f"key-for-{preset.name}"
    monkeypatch.setenv(preset.key_env[-1], key)  # the last alias works as well as the first
    path = urlsplit(preset.base_url).path.rstrip("/")
    with server_class() as server:
        assert preset.base_url_env
        monkeypatch.setenv(preset.base_url_env, f"http://127.0.0.1:{server.port}{path}")
        server.queue(Reply.say(f"Hello from {preset.label}."))
        result = hermes("chat", "-q", "hi")
        assert result.code == 0, result.err
        assert result.out == f"Hello from {preset.label}.\n"
        (asked,) = server.requests
    model = preset.model_names[0]
    assert asked.path == path + route.format(model=model)
    assert asked.headers[header] == value.format(key=key)
    if preset.transport != "gemini":  # Gemini names the model in the path
        assert asked.json["model"] == model
    explained = hermes("model", "--explain")
    assert f"the {preset.label} preset" in explained.out
    assert f"In use: {preset.name} / {model}" in explained.out


def test_pick_chooses_a_preset_without_asking(hermes, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek")
    hermes.config("model:\n  default: gpt-4o\n")
    result = hermes("model", "pick", "deepseek", "deepseek-v4-flash")
    assert result.code == 0, result.err
    assert "Saved: provider deepseek, model deepseek-v4-flash." in result.out
    config = (hermes.home / "config.yaml").read_text()
    assert "provider: deepseek" in config and "default: deepseek-v4-flash" in config
    shown = hermes("model")
    assert "In use: deepseek / deepseek-v4-flash" in shown.out


@pytest.mark.filterwarnings("ignore::getpass.GetPassWarning")  # the key, typed without a tty
def test_pick_asks_with_numbers_and_stores_the_key(hermes, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import io
    import sys

    # The provider by name, its second model by number, then its key.
    monkeypatch.setattr(sys, "stdin", io.StringIO("zai\n2\nglm-secret-key\n"))
    result = hermes("model", "pick")
    assert result.code == 0, result.err
    assert "zai" in result.out and "GLM_API_KEY (not set)" in result.out
    assert "Saved: provider zai, model glm-5.1, key saved as GLM_API_KEY in .env." in result.out
    assert 'GLM_API_KEY="glm-secret-key"' in (hermes.home / ".env").read_text()
    assert "glm-secret-key" not in result.out + result.err


def test_a_key_under_the_presets_second_name_counts_everywhere(hermes, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """GEMINI_API_KEY (hermes-agent reads GOOGLE_API_KEY first) serves the preset as a
    fallback too, and pick does not say it has no key."""
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key")
    hermes.config("model:\n  provider: deepseek\n  fallback_providers:\n    - provider: gemini\n")
    shown = hermes("model")
    assert "has no key" not in shown.err, shown.err
    picked = hermes("model", "pick", "gemini")
    assert picked.code == 0 and "cannot answer yet" not in picked.err, picked.err
