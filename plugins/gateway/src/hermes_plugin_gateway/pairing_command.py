"""``hermes pairing``: let people who wrote to the bot use the agent, or take that back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import click

from hermes_commons.text import one_line
from hermes_plugin_gateway.pairing import Pairings
from hermes_plugin_gateway.schema import SCHEMA
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext
from hermes_sdk.storage import open_store

__all__ = ["pairing"]


@contextmanager
def _pairings(ctx: click.Context) -> Iterator[Pairings]:
    context: CommandContext = ctx.meta[COMMAND_CONTEXT]
    with open_store(context.home, SCHEMA) as store:
        yield Pairings(store)


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


@click.group()
def pairing() -> None:
    """Approve, list and revoke users of chat platforms (DM pairing)."""


def _shown(text: str | None) -> str:
    """A stranger's name or id as one line of plain text: no escape codes reach the
    owner's terminal, no newline forges a line of the listing."""
    return one_line(text or "", 60)


@pairing.command("list")
@click.pass_context
def list_pairing(ctx: click.Context) -> None:
    """Waiting requests and the users you let in."""
    with _pairings(ctx) as pairings:
        waiting, paired = pairings.pending(), pairings.paired()
    if not waiting:
        click.echo("No pairing requests wait.")
    else:
        click.echo("Waiting (approve only codes the person sent you themselves):")
        for request in waiting:
            click.echo(
                f"  {request.platform} {request.code}  user {_shown(request.user_id)} "
                f"{_shown(request.user_name)}  expires {_when(request.expires_at)}"
            )
    if paired:
        click.echo("Let in:")
        for user in paired:
            click.echo(
                f"  {user.platform} user {_shown(user.user_id)} {_shown(user.user_name)}  "
                f"since {_when(user.approved_at)}"
            )


@pairing.command()
@click.argument("platform")
@click.argument("code")
@click.pass_context
def approve(ctx: click.Context, platform: str, code: str) -> None:
    """Let in the user who was given CODE on PLATFORM."""
    from hermes_plugin_gateway.pairing import PairingError

    with _pairings(ctx) as pairings:
        try:
            user = pairings.approve(platform, code)
        except PairingError as exc:
            raise click.ClickException(str(exc)) from None
    click.echo(
        f"Approved {platform} user {_shown(user.user_id)} {_shown(user.user_name)}; they can "
        "write to the "
        "agent now (revoke with: hermes pairing revoke "
        f"{platform} {user.user_id})."
    )


@pairing.command()
@click.argument("platform")
@click.argument("user_id")
@click.pass_context
def revoke(ctx: click.Context, platform: str, user_id: str) -> None:
    """Take back a pairing (users in platforms.<name>.allowed_users stay allowed)."""
    with _pairings(ctx) as pairings:
        removed = pairings.revoke(platform, user_id)
    if not removed:
        raise click.ClickException(f"{platform} user {user_id} was not paired")
    click.echo(f"Revoked {platform} user {user_id}.")
