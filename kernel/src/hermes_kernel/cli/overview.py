"""What bare ``hermes`` prints when it cannot chat yet (no front-end provides the chat, or
no plugin provides a model): where things stand and what to do."""

from __future__ import annotations

import click

from hermes_kernel._version import __version__
from hermes_kernel.app import App
from hermes_sdk import Kind


def print_overview(app: App, missing: str) -> None:
    host = app.host
    installed, enabled = len(host.records), len(host.enabled())
    click.echo(f"Hermes {__version__}: {installed} plugins installed, {enabled} enabled.")
    if not installed:
        click.echo("Nothing is installed yet: Hermes needs plugins to do anything useful.")
        click.echo(
            "Install a bundle or plugins (pip install hermes-plugin-NAME), then run: hermes doctor"
        )
    else:
        click.echo(f"There is nothing to chat with yet: {missing}.")
        click.echo("Install or enable one: hermes plugins catalog, hermes plugins enable NAME")
    click.echo("See: hermes plugins list, hermes doctor, hermes --help")


def install_hint(kind: Kind, what: str) -> str:
    """How to get a plugin that provides ``kind`` (``what`` names it for people: "a model
    provider"): the catalog, searched by kind, says which plugins can be installed."""
    return f"install a plugin that provides {what} (see: hermes plugins catalog search {kind})"
