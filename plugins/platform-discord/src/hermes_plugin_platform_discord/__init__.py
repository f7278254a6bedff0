"""The ``discord`` platform: a bot in DMs, and in server channels when mentioned or replied
to (each answered message gets a thread, its session). Importing this is cheap; discord.py
is imported when the gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="discord",
        description="Discord bots (gateway with session resume, buttons, threads)",
        factory="hermes_plugin_platform_discord.adapter:DiscordAdapter",
    )
