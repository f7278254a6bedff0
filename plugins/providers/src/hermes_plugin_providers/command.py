"""What a ``hermes model`` or ``hermes setup`` command works on: the command's context and
the route request it makes from it."""

from __future__ import annotations

import click

from hermes_plugin_providers.routes import route_request
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext
from hermes_sdk.routing import RouteRequest


def command_context() -> CommandContext:
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    return context


def here_request(provider: str | None = None, model: str | None = None) -> RouteRequest:
    context = command_context()
    return route_request(
        context.home, context.config, context.secrets.get, context.provided, provider, model
    )
