"""``hermes acp``: serve one editor over stdin/stdout until it closes the pipe."""

from __future__ import annotations

import asyncio
import contextlib
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

    from hermes_plugin_acp.agent import HermesAgent, UnusableAgent

    assert context.open_runtime is not None
    async with contextlib.AsyncExitStack() as stack:
        try:
            runtime = await stack.enter_async_context(context.open_runtime())
        except click.ClickException as exc:
            # No usable model: still speak ACP, so the editor shows why instead of "exited".
            click.echo(f"hermes acp: {exc.message}", err=True)
            # acp's Agent is a Protocol: the methods Hermes does not write (fork_session,
            # ext_method ...) are inherited as they are, so mypy counts them abstract.
            await run_agent(UnusableAgent(exc.message))  # type: ignore[abstract]
            return
        await run_agent(HermesAgent(runtime))  # type: ignore[abstract]  # the same
