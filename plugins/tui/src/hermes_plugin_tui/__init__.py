"""``tui``: ``hermes tui``, a full-screen terminal interface on Textual.

It drives the agent through the SDK's runtime contract, as any front-end can. Importing this
is cheap: Textual loads when the command runs.
"""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import CommandSpec, hookimpl


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="tui",
        description="A full-screen terminal interface: sessions, the chat, tool calls, approvals.",
        factory="hermes_plugin_tui.command:tui",
    )
