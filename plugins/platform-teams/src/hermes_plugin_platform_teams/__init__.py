"""The ``teams`` platform: a Microsoft Teams bot of the Azure Bot Service. The Bot Connector
posts activities to the gateway's listener (each request's JWT checked); replies, edits and
Adaptive Cards go back through the connector. Importing this is cheap; the adapter is
imported when the gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="teams",
        description="Microsoft Teams: personal chats, channels and group chats on a mention, cards",
        factory="hermes_plugin_platform_teams.adapter:TeamsAdapter",
    )
