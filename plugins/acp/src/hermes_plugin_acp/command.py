"""``hermes acp``: serve one editor over stdin/stdout until it closes the pipe."""

from __future__ import annotations

import asyncio
import logging
import sys

import click

from hermes_sdk.events import COMMAND_CONTEXT, CommandContext

__all__ = ["acp"]


@click.command(help="Be an editor's agent over the Agent Client Protocol on stdin/stdout.")
def acp() -> None:
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    if context.open_runtime is None:
        raise click.ClickException("this Hermes cannot host front-ends (upgrade hermes-kernel)")
    # stdout carries the protocol: whatever logs goes to stderr (and Hermes's log files).
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="hermes acp: %(message)s")
    asyncio.run(_serve(context))


async def _serve(context: CommandContext) -> None:
    from acp import run_agent

    from hermes_plugin_acp.agent import HermesAgent

    assert context.open_runtime is not None
    async with context.open_runtime() as runtime:
        await run_agent(HermesAgent(runtime))
