"""The presets' data holds together: every preset's rung is declared in the plugin's
manifest (so ``hermes update`` cannot ship one the ladder never loads), names a transport
that exists, and its models, windows and prices are well-formed."""

from __future__ import annotations

import tomllib
from pathlib import Path

from hermes_plugin_provider_presets.catalog import presets

ROOT = Path(__file__).resolve().parents[1]
TRANSPORTS = {"openai", "anthropic", "responses", "gemini"}


def test_every_preset_is_declared_and_well_formed() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = set(project["project"]["entry-points"]["hermes.provides"])
    names = [preset.name for preset in presets()]
    assert len(names) == len(set(names)) == 15
    assert {f"rung.{name}-key" for name in names} | {"prices.presets"} == declared
    for preset in presets():
        assert preset.transport in TRANSPORTS, preset.name
        assert preset.base_url.startswith("https://") and preset.key_env, preset.name
        assert preset.model_names and len(set(preset.model_names)) == len(preset.models)
        for model in preset.models:
            assert set(model) <= {"id", "context", "vision", "price"}, model
            assert model.get("context", 4096) >= 4096
            price = model.get("price")
            assert price is None or (len(price) == 2 and all(p > 0 for p in price))
