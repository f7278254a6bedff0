"""What the plugin manager's commands get from Hermes: the running command's
:class:`~hermes_sdk.events.CommandContext`."""

from __future__ import annotations

from pathlib import Path

import click

from hermes_sdk.events import COMMAND_CONTEXT, CommandContext
from hermes_sdk.runtime import PluginState


def command_context() -> CommandContext:
    """This invocation's context; building it loaded config.yaml, so a malformed one has
    already stopped the command, before anything changed."""
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    return context


def home() -> Path:
    return Path(command_context().home)


def config_path() -> Path:
    return Path(command_context().config_path)


def installed_plugins() -> list[PluginState]:
    """Every installed plugin (enabled or not), from package metadata."""
    return list(command_context().plugins())


def set_plugin_enabled(name: str, enabled: bool) -> None:
    setter = command_context().set_plugin_enabled
    if setter is None:
        raise click.ClickException("this Hermes cannot enable or disable plugins from a command")
    setter(name, enabled)
