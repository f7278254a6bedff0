"""What the openai provider knows of context windows: well-known models' windows, and the
window its servers state when a conversation no longer fits."""

from __future__ import annotations

import asyncio

import pytest
from hermes_plugin_provider_openai.client import ChatCompletionsProvider
from hermes_plugin_provider_openai.windows import known_window, window_in_error

from hermes_sdk.context import WindowReporter
from hermes_sdk.models import ProviderSettings


def test_well_known_models_windows_by_their_longest_prefix():
    assert known_window("openai/gpt-4o-mini") == 128_000  # a router's vendor prefix is dropped
    assert known_window("gpt-4.1-mini") == 1_047_576  # the longest prefix wins
    assert known_window("anthropic/claude-sonnet-4.5") == 200_000
    assert known_window("my-own-model") is None


def test_the_provider_reports_them_to_the_kernel():
    provider = ChatCompletionsProvider(ProviderSettings(base_url="http://127.0.0.1:9"))
    assert isinstance(provider, WindowReporter)
    assert asyncio.run(provider.context_window("gpt-4o")) == 128_000


@pytest.mark.parametrize(
    ("message", "window"),
    [
        (
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 9000 tokens.",
            8192,
        ),
        ("the request exceeds the available context size (4096 tokens)", 4096),  # llama.cpp
        ("This model's max_model_len is 32768", 32_768),  # vLLM
        ("request too large", None),
        ("maximum context length is 12 tokens", None),  # no real window is that small
    ],
)
def test_an_overflow_error_that_states_the_window_is_read(message, window):
    assert window_in_error(message) == window
