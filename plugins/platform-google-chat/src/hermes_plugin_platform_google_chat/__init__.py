"""The ``google_chat`` platform: a Google Chat app with an HTTP endpoint. Google posts events
to the gateway's listener (each request's token checked); replies and approval cards go
out through the Chat API as the app's service account. Importing this is cheap; the
adapter is imported when the gateway starts the platform."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import PlatformSpec, hookimpl


@hookimpl
def hermes_platforms() -> Iterator[PlatformSpec]:
    yield PlatformSpec(
        name="google_chat",
        description="Google Chat: an HTTP endpoint app (spaces on a mention, DMs, card buttons)",
        factory="hermes_plugin_platform_google_chat.adapter:GoogleChatAdapter",
    )
