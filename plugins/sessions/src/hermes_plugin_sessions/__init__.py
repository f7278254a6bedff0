"""``sessions``: ``hermes sessions`` lists, shows, searches, exports, renames, counts, prunes
and deletes the stored chat sessions.

It reads them through the SDK's session history, which needs no model. Importing this is
cheap: click loads when the command runs.
"""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import CommandSpec, hookimpl


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="sessions",
        description="List, show, search, export, rename, count, prune and delete chat sessions.",
        factory="hermes_plugin_sessions.command:sessions",
    )
