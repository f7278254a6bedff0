"""The provider ladder as the standard model router: which model a session uses, with
credential pools (several keys for one provider, rotated on rate limits), fallback providers
and the price tables that estimate costs. The model clients themselves are other plugins
(``provider-openai``, ``provider-anthropic``, ``provider-local``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from hermes_sdk import CommandSpec, ModelRouterSpec, hookimpl

if TYPE_CHECKING:
    from hermes_sdk.routing import ModelRouter

__all__ = ["hermes_cli_commands", "hermes_model_routers"]


def _router() -> ModelRouter:
    from hermes_plugin_providers.routes import LadderRouter

    return LadderRouter()


def _model_command() -> Any:
    from hermes_plugin_providers.model_cmd import model

    return model


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="model",
        description="Show, explain, choose and test the model in use.",
        factory=_model_command,
    )


@hookimpl
def hermes_model_routers() -> Iterator[ModelRouterSpec]:
    yield ModelRouterSpec(
        name="ladder",
        description="The provider ladder: command line, config, keys, the embedded model.",
        factory=_router,
    )
