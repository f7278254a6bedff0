"""``import-hermes-agent``: ``hermes import hermes-agent``, which brings a hermes-agent home
over (settings, secrets, persona, memory, skills, cron jobs, approved users, sessions,
profiles) and only reads it. Importing this is cheap: the work is in the modules the
command loads."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import CommandSpec, hookimpl

NAME = "import"


def _command() -> Any:
    from hermes_plugin_import_hermes_agent.command import import_group

    return import_group


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name=NAME, description="Bring a home over from another agent", factory=_command
    )
