"""The ``mattermost`` platform: a bot account on a Mattermost server. Posts arrive on the
websocket (and are read back over REST after a reconnect); replies, files and buttons go
out through the REST API v4. Importing this is cheap; the adapter is imported when the
gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="mattermost",
        description="Mattermost: channels on a mention (in threads), direct messages, buttons",
        factory="hermes_plugin_platform_mattermost.adapter:MattermostAdapter",
    )
