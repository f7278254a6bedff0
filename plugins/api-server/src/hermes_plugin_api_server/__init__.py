"""``api_server``: Hermes as an OpenAI-compatible HTTP API.

``hermes serve`` runs it alone; with ``api_server.enabled: true`` the gateway hosts it beside
the chat platforms. Importing this is cheap: aiohttp, click and pydantic load when it runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import CommandSpec, ConfigSectionSpec, ServiceSpec, hookimpl
from hermes_sdk.service import ServiceContext

NAME = "api_server"


def _service(context: ServiceContext) -> Any:
    from hermes_plugin_api_server.server import ApiServer
    from hermes_plugin_api_server.settings import settings_from

    return ApiServer(settings_from(context.config, context.secrets))


@hookimpl
def hermes_services() -> Iterator[ServiceSpec]:
    yield ServiceSpec(
        name=NAME, description="OpenAI-compatible HTTP API (/v1/chat/completions)", factory=_service
    )


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="serve",
        description="Serve the agent as an OpenAI-compatible HTTP API.",
        factory="hermes_plugin_api_server.command:serve",
    )


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name=NAME,
        description="The OpenAI-compatible API server",
        model="hermes_plugin_api_server.settings:ApiServerConfig",
    )
