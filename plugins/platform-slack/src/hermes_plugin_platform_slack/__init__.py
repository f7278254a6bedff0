"""The ``slack`` platform: a Slack app in DMs, and in channels when mentioned (answered in
the message's thread, its session), over Socket Mode or the Events API. Importing this is
cheap; slack_sdk is imported when the gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="slack",
        description="Slack apps (Socket Mode or Events API, Block Kit buttons, threads)",
        factory="hermes_plugin_platform_slack.adapter:SlackAdapter",
    )
