"""``hermes memory``: what is remembered, and the writes waiting for approval
(``memory.write_approval``), from the command line as ``/memory`` does in the chat."""

from __future__ import annotations

import click

from hermes_plugin_memory_builtin.files import MemoryUnreadable
from hermes_plugin_memory_builtin.memory import Memory
from hermes_plugin_memory_builtin.operations import MemoryRefused, listing
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext


def _memory(user_scope: str | None) -> Memory:
    context = click.get_current_context().meta.get(COMMAND_CONTEXT)
    if not isinstance(context, CommandContext):
        raise click.ClickException("run this through the hermes command")
    return Memory(context.home, user_scope, context.config)


_user_option = click.option(
    "--user",
    "user_scope",
    metavar="SCOPE",
    help="A chat user's memory (telegram:42, as `hermes sessions list` shows); default: yours.",
)


def _run(user_scope: str | None, action: str, proposal_id: str = "") -> None:
    memory = _memory(user_scope)
    try:
        if action == "show":
            entries = memory.entries()
            click.echo("\n\n".join(listing(target, entries[target]) for target in entries))
        elif action == "pending":
            click.echo(memory.pending_text().replace("/memory ", "hermes memory "))
        elif action == "approve":
            click.echo(memory.approve(proposal_id))
        else:
            click.echo(memory.reject(proposal_id))
    except (MemoryRefused, MemoryUnreadable) as exc:
        raise click.ClickException(f"{action}: {exc}") from None


@click.group("memory", invoke_without_command=True)
@click.pass_context
def memory(ctx: click.Context) -> None:
    """Memory: the agent's notes (MEMORY.md), your profile (USER.md), pending writes."""
    if ctx.invoked_subcommand is None:
        _run(None, "show")


@memory.command("show")
@_user_option
def show(user_scope: str | None) -> None:
    """The entries of MEMORY.md and USER.md, with how much of each budget they use."""
    _run(user_scope, "show")


@memory.command("pending")
@_user_option
def pending(user_scope: str | None) -> None:
    """Writes the agent proposed that wait for your approval (memory.write_approval)."""
    _run(user_scope, "pending")


@memory.command("approve")
@click.argument("proposal_id", metavar="ID")
@_user_option
def approve(proposal_id: str, user_scope: str | None) -> None:
    """Write a pending proposal into memory (refused, and kept, if it no longer fits)."""
    _run(user_scope, "approve", proposal_id)


@memory.command("reject")
@click.argument("proposal_id", metavar="ID")
@_user_option
def reject(proposal_id: str, user_scope: str | None) -> None:
    """Drop a pending proposal; nothing is written."""
    _run(user_scope, "reject", proposal_id)
