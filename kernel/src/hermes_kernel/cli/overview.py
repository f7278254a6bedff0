"""What bare ``hermes`` prints when no plugin provides a model to chat with: where things
stand and what to do."""

from __future__ import annotations

import click

from hermes_kernel._version import __version__
from hermes_kernel.cli.app import App


def print_overview(app: App) -> None:
    host = app.host
    installed, enabled = len(host.records), len(host.enabled())
    click.echo(f"Hermes {__version__}: {installed} plugins installed, {enabled} enabled.")
    if not installed:
        click.echo("Nothing is installed yet: Hermes needs plugins to do anything useful.")
        click.echo(
            "Install a bundle or plugins (pip install hermes-plugin-NAME), then run: hermes doctor"
        )
    else:  # bare hermes opens the chat whenever a provider is there
        click.echo(
            "No enabled plugin declares a model provider, so there is nothing to chat with yet."
        )
    click.echo("See: hermes plugins list, hermes doctor, hermes --help")
