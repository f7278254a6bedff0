"""``hermes acp``: Hermes as the agent of an editor, over the Agent Client Protocol (stdio).
Importing this is cheap; the ACP SDK loads when the command runs."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import CommandSpec, hookimpl


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="acp",
        description="Be an editor's agent over ACP (stdio).",
        factory="hermes_plugin_acp.command:acp",
    )
