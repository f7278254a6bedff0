"""The provider ladder as the standard model router: which model a session uses, with
credential pools (several keys for one provider, rotated on rate limits), fallback providers
and the price tables that estimate costs. The model clients themselves are other plugins
(``provider-openai``, ``provider-anthropic``, ``provider-local``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from hermes_sdk import CommandSpec, DashboardPanelSpec, ModelRouterSpec, hookimpl

if TYPE_CHECKING:
    from hermes_sdk.health import Finding, HealthContext

__all__ = ["hermes_cli_commands", "hermes_doctor_checks", "hermes_model_routers"]


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="model",
        description="Show, explain, choose and test the model in use.",
        factory="hermes_plugin_providers.model_cmd:model",
    )
    yield CommandSpec(
        name="setup",
        description="Choose a provider or your own model server, its key, the model and the "
        "terminal backend; then test it.",
        factory="hermes_plugin_providers.setup_cmd:setup",
    )


@hookimpl
def hermes_model_routers() -> Iterator[ModelRouterSpec]:
    yield ModelRouterSpec(
        name="ladder",
        description="The provider ladder: command line, config, keys, the embedded model.",
        factory="hermes_plugin_providers.routes:LadderRouter",
    )


@hookimpl
def hermes_doctor_checks(context: HealthContext) -> Iterator[Finding]:
    """The model a turn would use, resolved without a request; with ``--online``, asked once."""
    from hermes_plugin_providers.health import model_findings

    yield from model_findings(context)


@hookimpl
def hermes_dashboard_panels() -> Iterator[DashboardPanelSpec]:
    yield DashboardPanelSpec(
        name="models",
        title="Models",
        description="The model in use and why, the providers, the default, a timed test.",
        factory="hermes_plugin_providers.panel:ModelsPanel",
        order=20,
    )
