"""``hermes status``: one screen of how this Hermes stands, as
:func:`~hermes_kernel.runtime.status.status_lines` computes it (a front-end's
``Runtime.status()`` gets the same lines)."""

from __future__ import annotations

import click

from hermes_kernel.cli.main import app_of

_LABEL = 12


@click.command()
@click.pass_context
def status(ctx: click.Context) -> None:
    """One screen: model, plugins, what each plugin reports, sessions, disk."""
    from hermes_kernel.runtime.status import status_lines

    for line in status_lines(app_of(ctx)):
        click.echo(f"{line.label + ':':<{_LABEL}} {line.text}")
        for detail in line.details:
            click.echo(" " * (_LABEL + 1) + detail.strip())
