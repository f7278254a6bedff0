"""The ``discord`` platform: a bot in DMs, and in server channels when mentioned or replied
to (each answered message gets a thread, its session). Importing this is cheap; discord.py
is imported when the gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import PlatformSpec, hookimpl
from hermes_sdk.platform import PlatformContext


def _build(context: PlatformContext) -> Any:
    from hermes_plugin_platform_discord.adapter import DiscordAdapter

    return DiscordAdapter(context)


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="discord",
        description="Discord bots (gateway with session resume, buttons, threads)",
        factory=_build,
    )
