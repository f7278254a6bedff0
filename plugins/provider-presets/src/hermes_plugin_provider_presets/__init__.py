"""The API-key providers hermes-agent users pick from a list, as endpoints ready to use:
DeepSeek, Fireworks, DeepInfra, Together, Groq, Mistral, Cerebras, NVIDIA NIM, Hugging
Face, Z.AI, Kimi, MiniMax, Qwen (DashScope), xAI and Gemini. Each is a rung of the provider
ladder (its key set: it is used, after OpenAI's, Anthropic's and OpenRouter's), a name for
``model.provider``, and prices; the data is ``presets.json``, so ``hermes update`` brings
new models and providers. Each speaks through a transport plugin (chat completions for
most; Anthropic messages for MiniMax; the Responses API for xAI; Gemini's own API)."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_plugin_provider_presets.catalog import FIRST_POSITION, presets
from hermes_sdk import ModelPrice, PriceTableSpec, RungSpec, hookimpl


@hookimpl
def hermes_provider_rungs() -> Iterator[RungSpec]:
    for number, preset in enumerate(presets()):
        yield preset.rung(FIRST_POSITION + number)


@hookimpl
def hermes_model_prices() -> Iterator[PriceTableSpec]:
    prices: dict[str, ModelPrice] = {}
    for preset in presets():
        prices.update(preset.prices())
    yield PriceTableSpec(
        name="presets", description="the presets' published list prices", prices=prices
    )
