"""The provider ladder, rung by rung, through ``hermes model --explain`` with the real
provider plugins installed. Each rung matches, fails with a reason, or passes."""

from __future__ import annotations

import re

import pytest


def rung_line(output: str, name: str) -> str:
    (line,) = [line for line in output.splitlines() if re.match(rf"\s+\d+\s+{name}\s", line)]
    return line


def test_with_nothing_configured_the_embedded_model_is_the_last_resort(hermes) -> None:
    result = hermes("model", "--explain")
    assert result.code == 0, result.err
    for name in (
        "command-line",
        "custom-provider",
        "local-endpoint",
        "credential-pool",
        "openai-key",
        "anthropic-key",
        "openrouter-key",
        "local-server",  # nothing answers on loopback here
    ):
        assert " pass " in rung_line(result.out, name)
    assert "MATCH" in rung_line(result.out, "embedded")
    assert "In use: local / smollm2-135m-instruct" in result.out
    assert "tiny" in result.out and "hermes setup" in result.out, "the UI says what it is"


def test_an_api_key_in_the_environment_matches_its_rung(hermes, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value-1")
    result = hermes("model", "--explain")
    assert "MATCH  ANTHROPIC_API_KEY is set -> anthropic / claude-sonnet-4-5" in result.out
    assert "not reached" in rung_line(result.out, "embedded")
    assert "sk-ant-secret-value-1" not in result.out + result.err


def test_an_api_key_in_dotenv_counts_too(hermes) -> None:
    hermes.dotenv("OPENROUTER_API_KEY=sk-or-secret-value-2\n")
    result = hermes("model")
    assert "In use: openrouter / openai/gpt-4o-mini" in result.out
    assert "OPENROUTER_API_KEY (key set)" in result.out
    assert "sk-or-secret-value-2" not in result.out


def test_openai_comes_before_anthropic_when_both_keys_are_set(hermes, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-a")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-b")
    assert "In use: openai / gpt-4o-mini" in hermes("model").out


def test_command_line_choice_is_strict_and_checked(hermes, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-a")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-b")
    chosen = hermes("model", "--explain", "--provider", "anthropic", "--model", "claude-haiku-4-5")
    assert "--provider anthropic --model claude-haiku-4-5" in rung_line(chosen.out, "command-line")
    assert "In use: anthropic / claude-haiku-4-5 (strict: chosen on the command line)" in chosen.out
    unknown = hermes("model", "--explain", "--provider", "nope")
    assert unknown.code == 1
    assert (
        "FAIL   --provider nope (unknown provider 'nope'; known: alibaba, anthropic, cerebras,"
        in unknown.out
    )


def test_asking_for_a_provider_without_its_key_fails_rather_than_falls_through(hermes) -> None:
    result = hermes("model", "--explain", "--provider", "openai")
    assert result.code == 1
    assert "FAIL   OPENAI_API_KEY not set" in rung_line(result.out, "openai-key")
    assert "not reached" in rung_line(result.out, "embedded"), "no quiet fallback to the tiny model"
    assert "In use: none: provider 'openai' needs OPENAI_API_KEY" in result.out


def test_a_named_custom_provider(hermes) -> None:
    hermes.config(
        "model:\n  provider: ollama\n"
        "providers:\n  ollama:\n    base_url: http://127.0.0.1:11434/v1\n    models: [llama3.2, qwen2.5]\n"
    )
    result = hermes("model", "--explain")
    assert "MATCH  providers.ollama (http://127.0.0.1:11434/v1) -> ollama / llama3.2" in result.out
    listed = hermes("model")
    assert re.search(r"\* ollama\s+no key needed\s+models: llama3.2, qwen2.5", listed.out)


def test_a_custom_provider_whose_key_is_missing_fails(hermes) -> None:
    hermes.config(
        "model:\n  provider: vllm\n"
        "providers:\n  vllm:\n    base_url: http://10.0.0.5:8000/v1\n    api_key_env: VLLM_KEY\n"
        "    models: [qwen]\n"
    )
    result = hermes("model", "--explain")
    assert result.code == 1
    assert "providers.vllm needs VLLM_KEY" in rung_line(result.out, "custom-provider")


def test_an_unknown_configured_provider_fails_with_the_known_ones(hermes) -> None:
    hermes.config("model:\n  provider: opnai\n")
    result = hermes("model", "--explain")
    assert "unknown provider 'opnai'; known: alibaba, anthropic, cerebras," in result.out
    assert (
        ", local, minimax, minimax-oauth, mistral, nous, nvidia, openai, openrouter, qwen-oauth,"
        in result.out
    )


def test_a_local_endpoint_in_config(hermes, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-a")
    hermes.config("model:\n  base_url: http://127.0.0.1:8080/v1\n  default: qwen2.5-7b\n")
    result = hermes("model", "--explain")
    assert (
        "MATCH  model.base_url http://127.0.0.1:8080/v1 -> local-endpoint / qwen2.5-7b"
        in result.out
    )
    assert "not reached" in rung_line(result.out, "openai-key"), "config comes before env keys"


def test_a_credential_pool(hermes, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_KEY_A", "sk-pool-a")
    monkeypatch.setenv("OPENAI_KEY_C", "sk-pool-c")
    hermes.config("credential_pools:\n  openai: [OPENAI_KEY_A, OPENAI_KEY_B, OPENAI_KEY_C]\n")
    result = hermes("model", "--explain")
    assert "MATCH  openai: 2 of 3 keys set -> openai / gpt-4o-mini" in result.out
    assert "from: credential_pools.openai (2 keys)" in result.out


def test_a_pool_asked_for_with_no_key_set_fails(hermes) -> None:
    hermes.config("model:\n  provider: anthropic\ncredential_pools:\n  anthropic: [ANT_1, ANT_2]\n")
    result = hermes("model", "--explain")
    assert (
        "FAIL   anthropic: 0 of 2 keys set (credential_pools.anthropic: none of ANT_1, ANT_2 is set)"
        in result.out
    )


def test_a_key_pasted_into_the_pool_list_is_refused_without_echoing_it(hermes) -> None:
    hermes.config("credential_pools:\n  openai: [sk-live-abcdef0123456789]\n")
    result = hermes("model")
    assert result.code == 1
    assert "never paste a key here" in result.err and "abcdef" not in result.err


def test_a_configured_model_that_is_not_local_does_not_reach_the_tiny_model(hermes) -> None:
    hermes.config("model: gpt-4o\n")
    result = hermes("model", "--explain")
    assert result.code == 1
    assert "pass   model 'gpt-4o' is not a local GGUF" in rung_line(result.out, "embedded")
    # The keys come from the installed plugins' rungs, in their order.
    assert (
        "set OPENAI_API_KEY, ANTHROPIC_API_KEY, OPENROUTER_API_KEY or another provider's key "
        "(`hermes model pick`) in " in result.out
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_model_set_writes_the_default(hermes, provider) -> None:
    hermes.config("# mine\nplugins:\n  strict: false\n")
    result = hermes("model", "set", provider, "my-model")
    assert result.code == 0, result.err
    text = (hermes.home / "config.yaml").read_text()
    assert "# mine" in text and f"provider: {provider}" in text and "default: my-model" in text
    refused = hermes("model", "set", "nope")
    assert refused.code != 0 and "unknown provider 'nope'" in refused.err


def test_a_key_pasted_as_a_variable_name_is_not_echoed(hermes) -> None:
    hermes.config(
        "model:\n  base_url: http://127.0.0.1:8080/v1\n  api_key_env: gsk_live0123456789abcdef\n"
    )
    result = hermes("model")
    assert result.code == 1
    assert "model.api_key_env" in result.err and "gsk_live" not in result.err


def test_auto_mode_sends_a_model_to_the_endpoint_that_lists_it(hermes, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-a")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-b")
    hermes.config("model: claude-haiku-4-5\n")
    result = hermes("model", "--explain")
    assert "pass   model 'claude-haiku-4-5' is anthropic's" in rung_line(result.out, "openai-key")
    assert "In use: anthropic / claude-haiku-4-5" in result.out


def test_a_gguf_of_your_own_needs_no_bundled_weights_check(hermes) -> None:
    models = hermes.home / "models"
    models.mkdir()
    (models / "mine.gguf").write_bytes(b"GGUF")
    result = hermes("model", "--explain", "--provider", "local", "--model", "mine")
    assert "MATCH" in rung_line(result.out, "embedded")
    assert "In use: local / mine (strict: chosen on the command line)" in result.out
    assert "note:" not in result.out, "the tiny-model notice is for the bundled model only"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            ("model",),
            "`hermes model` comes from plugin 'providers' (hermes-plugin-providers), which is "
            "disabled (plugins.disabled in config.yaml); enable it: hermes plugins enable "
            "providers",
        ),
        (
            ("model", "test"),
            "`hermes model` comes from plugin 'providers' (hermes-plugin-providers), which is "
            "disabled",
        ),
        (
            ("chat", "-q", "hi"),
            "no plugin provides a model router: plugin 'providers' does, but is off "
            "(plugins.disabled in config.yaml); enable it: hermes plugins enable providers",
        ),
    ],
)
def test_with_the_router_plugin_disabled_each_command_says_which_plugin(
    hermes, command, expected
) -> None:
    """Issue 61: the ladder and `hermes model` are a plugin; without it no model is used,
    and every command that needs one says so in one line naming the plugin."""
    hermes.config("plugins:\n  disabled: [providers]\n")
    result = hermes(*command)
    assert result.code != 0
    assert expected in result.err
    assert "Traceback" not in result.err and len(result.err.strip().splitlines()) == 1


def test_status_says_why_there_is_no_model_without_the_router(hermes) -> None:
    hermes.config("plugins:\n  disabled: [providers]\n")
    result = hermes("status")
    assert "no plugin provides a model router" in result.out


def test_model_set_through_the_plugin_keeps_comments_and_replaces_the_shorthand(hermes) -> None:
    """`hermes model` is the providers plugin's; it changes config.yaml through the SDK's
    CommandContext.edit_config, which keeps the file's comments and validates the result."""
    hermes.config("# my settings\nmodel: some-model  # the shorthand\nlogging:\n  level: WARNING\n")
    result = hermes("model", "set", "openai", "gpt-x")
    assert result.code == 0, result.err
    text = (hermes.home / "config.yaml").read_text()
    assert text.startswith("# my settings\n") and "level: WARNING" in text
    assert "provider: openai" in text and "default: gpt-x" in text
    assert hermes("model", "set", "auto").code == 0
    assert "default:" not in (hermes.home / "config.yaml").read_text()
