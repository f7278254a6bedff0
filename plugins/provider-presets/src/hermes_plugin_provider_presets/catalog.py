"""``presets.json`` read into endpoints and rungs.

A preset's rung matches when any of its key variables is set (hermes-agent reads several
names for some: ``GLM_API_KEY``, ``ZAI_API_KEY`` ...); the endpoint's base URL can be moved
with its ``*_BASE_URL`` variable, as in hermes-agent (a proxy, a regional endpoint).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from hermes_sdk import ModelPrice, RungSpec
from hermes_sdk.ladder import Endpoint, LadderChoice, LadderContext, RungResult

FIRST_POSITION = 540
"""After the OpenAI, Anthropic and OpenRouter keys' rungs (510 to 530)."""


@dataclass(frozen=True)
class Preset:
    name: str
    label: str
    base_url: str
    key_env: tuple[str, ...]
    transport: str = "openai"
    base_url_env: str | None = None
    models: tuple[Mapping[str, Any], ...] = ()
    quirks: Mapping[str, Any] | None = None

    @property
    def model_names(self) -> tuple[str, ...]:
        return tuple(str(model["id"]) for model in self.models)

    def options(self) -> dict[str, Any]:
        """What the transport is told: windows, image input and quirks."""
        options: dict[str, Any] = dict(self.quirks or {})
        windows = {str(m["id"]): int(m["context"]) for m in self.models if m.get("context")}
        if windows:
            options["context_windows"] = windows
        options["vision_models"] = [str(m["id"]) for m in self.models if m.get("vision")]
        return options

    def endpoint(self, base_url: str | None = None) -> Endpoint:
        return Endpoint(
            name=self.name,
            provider=self.transport,
            base_url=base_url or self.base_url,
            api_key_env=self.key_env[0],
            other_key_envs=self.key_env[1:],
            default_model=self.model_names[0] if self.models else "",
            models=self.model_names,
            options=self.options(),
        )

    def prices(self) -> dict[str, ModelPrice]:
        return {
            str(m["id"]): ModelPrice(input=float(m["price"][0]), output=float(m["price"][1]))
            for m in self.models
            if m.get("price")
        }

    def rung(self, position: int) -> RungSpec:
        names = " or ".join(self.key_env)
        return RungSpec(
            name=f"{self.name}-key",
            description=f"the {self.label} preset: {names} in the environment or .env",
            position=position,
            resolve=self.resolve,
            endpoint=self.endpoint(),
        )

    def resolve(self, context: LadderContext) -> RungResult:
        if not context.wants(self.name):
            return RungResult.skip(f"provider {context.provider!r} asked for")
        if context.provider is None and context.model and context.model not in self.model_names:
            return RungResult.skip(f"model {context.model!r} is not one of {self.label}'s")
        found = next(((n, context.secret(n)) for n in self.key_env if context.secret(n)), None)
        if found is None:
            saw = f"{' / '.join(self.key_env)} not set"
            if context.provider == self.name:
                return RungResult.fail(
                    saw,
                    f"provider {self.name!r} needs {self.key_env[0]}: add it to "
                    f"{context.home / '.env'} or run `hermes model pick`",
                )
            return RungResult.skip(saw)
        variable, key = found
        moved = context.secret(self.base_url_env) if self.base_url_env else None
        endpoint = self.endpoint(moved)
        choice = LadderChoice(
            endpoint,
            context.model or endpoint.default_model,
            (str(key),),
            source=f"{variable} (environment or .env), the {self.label} preset",
            key_names=(variable,),
        )
        return RungResult.match(choice, f"{variable} is set")


@cache
def presets() -> tuple[Preset, ...]:
    # Beside this module (importlib.resources would cost a start-up ~15 ms to import).
    text = (Path(__file__).parent / "presets.json").read_text(encoding="utf-8")
    return tuple(
        Preset(
            name=item["name"],
            label=item["label"],
            base_url=item["base_url"],
            key_env=tuple(item["key_env"]),
            transport=item.get("transport", "openai"),
            base_url_env=item.get("base_url_env"),
            models=tuple(item.get("models") or ()),
            quirks=item.get("quirks"),
        )
        for item in json.loads(text)["presets"]
    )
